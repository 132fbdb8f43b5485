package sim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// GPUFault is something wrong with a replica's simulated GPUs.
type GPUFault string

// The GPU faults.
const (
	// GPUHealthy is no fault.
	GPUHealthy GPUFault = ""
	// GPUThrottle holds the GPUs at their slowdown temperature with the
	// SM clock cut by thermal slowdown.
	GPUThrottle GPUFault = "throttle"
	// GPUXID reports XID 79, the GPU fallen off the bus.
	GPUXID GPUFault = "xid"
)

// The simulated GPU: one H100 80GB per engine core (tensor parallel 1).
const (
	simGPUModel      = "NVIDIA H100 80GB HBM3"
	simFBTotalMiB    = 81559                // what nvidia-smi reports for an H100 80GB
	simWeightsMiB    = 16e9 / (1 << 20)     // Llama 3.1 8B in bf16
	simOverheadMiB   = 2048                 // CUDA context, activations, graphs
	simKVBytesPerTok = 2 * 32 * 8 * 128 * 2 // K and V × layers × KV heads × dims × bf16
	simIdleWatts     = 70.0
	simPowerLimit    = 700.0
	simMaxSMClockMHz = 1980.0
	simSlowdownTemp  = 87.0
	simXID           = 79
	simNamespace     = "vtop-demo"
)

// GPUs simulates a dcgm-exporter for each replica of a fleet: the GPUs
// under its engines, whose figures follow the replica's load (utilisation
// the running batch, memory the KV cache in use), with faults on demand.
// Safe for concurrent use.
type GPUs struct {
	fleet *Fleet

	mu     sync.Mutex
	faults map[int]GPUFault
}

// NewGPUs returns the simulated exporters of a fleet's replicas.
func NewGPUs(f *Fleet) *GPUs { return &GPUs{fleet: f, faults: map[int]GPUFault{}} }

// PodName is the pod a replica's GPUs are labelled with, as dcgm-exporter
// labels the workload on Kubernetes: what joins them to the replica.
func PodName(replica int) string { return "vllm-" + strconv.Itoa(replica) }

// PodNamespace is the namespace of every simulated pod.
func PodNamespace() string { return simNamespace }

// SetFault sets the GPU fault of a replica.
func (g *GPUs) SetFault(replica int, f GPUFault) error {
	if replica < 0 || replica >= len(g.fleet.replicas) {
		return fmt.Errorf("no replica %d", replica)
	}
	switch f {
	case GPUHealthy, GPUThrottle, GPUXID:
	default:
		return fmt.Errorf("unknown GPU fault %q (want %q or %q)", f, GPUThrottle, GPUXID)
	}
	g.mu.Lock()
	g.faults[replica] = f
	g.mu.Unlock()
	return nil
}

func (g *GPUs) fault(replica int) GPUFault {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.faults[replica]
}

// Render returns replica's dcgm-exporter page in the text format.
func (g *GPUs) Render(replica int) ([]byte, error) {
	if replica < 0 || replica >= len(g.fleet.replicas) {
		return nil, fmt.Errorf("no replica %d", replica)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(&gpuCollector{r: g.fleet.replicas[replica], fault: g.fault(replica)}); err != nil {
		return nil, err
	}
	return render(reg.Gather, textFormat)
}

// Handler serves replica's page at /metrics, as dcgm-exporter does.
func (g *GPUs) Handler(replica int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		page, err := g.Render(replica)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", string(textFormat))
		_, _ = w.Write(page)
	})
	return mux
}

// Serve serves every replica's exporter on its own port of host (e.g.
// "127.0.0.1") until ctx ends, and returns their addresses in replica
// order.
func (g *GPUs) Serve(ctx context.Context, host string) ([]string, error) {
	var addrs []string
	var servers []*http.Server
	for i := range g.fleet.replicas {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			for _, s := range servers {
				s.Close()
			}
			return nil, err
		}
		s := &http.Server{Handler: g.Handler(i)}
		servers = append(servers, s)
		addrs = append(addrs, l.Addr().String())
		go func() { _ = s.Serve(l) }()
	}
	go func() {
		<-ctx.Done()
		for _, s := range servers {
			s.Close()
		}
	}()
	return addrs, nil
}

// gpuState is one simulated GPU's figures.
type gpuState struct {
	util, usedMiB, watts, temp, smMHz, reasons, xid float64
}

// state computes a GPU's figures from its engine's load. Real vLLM
// reserves its whole KV cache at start; the simulated framebuffer counts
// only the blocks in use, so that memory visibly follows the cache.
func gpuStateOf(e *engine, fault GPUFault) gpuState {
	busy := 0.0
	if n := len(e.running); n > 0 {
		// decode is memory-bound: the GPU is busy on every step, more so
		// as the batch grows
		busy = min(1, 0.3+0.7*float64(n)/64)
	}
	kvMiB := e.kvUsage() * float64(e.cfg.NumGPUBlocks*e.cfg.BlockSize*simKVBytesPerTok) / (1 << 20)
	s := gpuState{
		util:    busy,
		usedMiB: min(simFBTotalMiB, simWeightsMiB+simOverheadMiB+kvMiB),
		watts:   simIdleWatts + busy*(simPowerLimit-simIdleWatts-60),
		temp:    30 + busy*45,
		smMHz:   simMaxSMClockMHz,
	}
	switch fault {
	case GPUThrottle:
		s.temp, s.smMHz, s.reasons = simSlowdownTemp, 1200, 0x20|0x40 // SW and HW thermal slowdown
	case GPUXID:
		s.xid = simXID
	}
	return s
}

// gpuCollector exports one replica's GPUs under dcgm-exporter's default
// families (DCGM 3 names) and labels.
type gpuCollector struct {
	r     *Replica
	fault GPUFault
}

var gpuLabels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "container", "namespace", "pod"}

var gpuFamilies = []struct {
	name, help string
	value      func(s gpuState) float64
}{
	{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", func(s gpuState) float64 { return float64(int(s.util * 100)) }},
	{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", func(s gpuState) float64 { return float64(int(s.usedMiB)) }},
	{"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", func(s gpuState) float64 { return simFBTotalMiB - float64(int(s.usedMiB)) }},
	{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", func(s gpuState) float64 { return s.watts }},
	{"DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W).", func(gpuState) float64 { return simPowerLimit }},
	{"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", func(s gpuState) float64 { return float64(int(s.temp)) }},
	{"DCGM_FI_DEV_SLOWDOWN_TEMP", "Slowdown temperature (in C).", func(gpuState) float64 { return simSlowdownTemp }},
	{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", func(s gpuState) float64 { return s.smMHz }},
	{"DCGM_FI_DEV_MAX_SM_CLOCK", "Maximum SM clock frequency (in MHz).", func(gpuState) float64 { return simMaxSMClockMHz }},
	{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons.", func(s gpuState) float64 { return s.reasons }},
	{"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", func(s gpuState) float64 { return s.xid }},
	{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Number of remapped rows for uncorrectable errors", func(gpuState) float64 { return 0 }},
}

// Describe sends nothing: the collector is unchecked, as its series are
// built per scrape.
func (c *gpuCollector) Describe(chan<- *prometheus.Desc) {}

// Collect advances a real-time replica to now and emits its GPUs.
func (c *gpuCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.Lock()
	c.r.syncToWall()
	states := make([]gpuState, len(c.r.engines))
	for i, e := range c.r.engines {
		states[i] = gpuStateOf(e, c.fault)
	}
	c.r.mu.Unlock()
	for _, f := range gpuFamilies {
		desc := prometheus.NewDesc(f.name, f.help, gpuLabels, nil)
		for i, s := range states {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, f.value(s), c.labels(i)...)
		}
	}
}

// labels are the GPU's identity: stable per replica and engine.
func (c *gpuCollector) labels(gpu int) []string {
	idx := c.r.index
	return []string{
		strconv.Itoa(gpu),
		fmt.Sprintf("GPU-5e6d0000-%04x-4000-8000-%012x", idx, gpu),
		fmt.Sprintf("00000000:%02X:00.0", 0x18+gpu*0x10),
		"nvidia" + strconv.Itoa(gpu),
		simGPUModel,
		"sim-node-" + strconv.Itoa(idx),
		"vllm", simNamespace, PodName(idx),
	}
}
