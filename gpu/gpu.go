// Package gpu is vtop's model of the GPUs under the inference servers: one
// GPU (or MIG instance) with what its source reports and NaN for what it
// does not, the readers' pure halves (nvidia-smi CSV rows, dcgm-exporter
// pages, DCGM series from Prometheus, which promql.DCGMQuery asks for), the
// join of GPUs to replicas on evidence only, and the GPU evidence the
// analysis adds to a replica's state. It does no I/O: the child process and
// the HTTP fetches live in gpu/collect.
package gpu

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// SourceSMI is the Source of GPUs read from nvidia-smi on this host.
const SourceSMI = "nvidia-smi"

// GPU is one GPU, or one MIG instance of a GPU, as one source last reported
// it. Every float is NaN when the source does not give it: "n/a" is never
// a fake 0.
type GPU struct {
	// Host is the machine the GPU is in: the exporter's Hostname label, or
	// this host's name for nvidia-smi. Safe to draw.
	Host string
	// Index is the GPU's index on its host (nvidia-smi index, DCGM gpu
	// label); -1 when unknown. MIG instances carry their parent's.
	Index int
	// UUID is "GPU-…" (a MIG instance carries its parent's).
	UUID string
	// Model is the product name, "NVIDIA H100 80GB HBM3".
	Model string
	// MIG is the MIG profile of an instance ("1g.6gb"); "" for a whole GPU.
	MIG string
	// MIGInstance is the GPU instance id of a MIG instance; -1 otherwise.
	MIGInstance int
	// Utilization is the busy share, 0–1.
	Utilization float64
	// MemoryUsedBytes and MemoryTotalBytes are the framebuffer in bytes.
	MemoryUsedBytes, MemoryTotalBytes float64
	// PowerWatts is the draw; PowerLimitWatts the enforced limit.
	PowerWatts, PowerLimitWatts float64
	// TemperatureCelsius is the GPU core temperature.
	TemperatureCelsius float64
	// SlowdownMarginCelsius is how far the temperature is below the one at
	// which the GPU slows itself down (nvidia-smi temperature.gpu.tlimit,
	// or DCGM's slowdown temperature minus the temperature).
	SlowdownMarginCelsius float64
	// SMClockHz is the SM clock; MaxSMClockHz its maximum.
	SMClockHz, MaxSMClockHz float64
	// ClockEventReasons is the NVML clock event (throttle) bit mask
	// (catalogue.ClockEvent*); -1 when unknown.
	ClockEventReasons int64
	// XID is the last XID error; 0 when none or unknown.
	XID int
	// UncorrectableRemappedRows counts rows remapped after uncorrectable
	// memory errors; RowRemapFailure is 1 when remapping has failed.
	UncorrectableRemappedRows, RowRemapFailure float64
	// Pod, Namespace and Container are the Kubernetes workload using the
	// GPU, as the exporter labels it; "" outside Kubernetes.
	Pod, Namespace, Container string
	// PIDs are the compute processes on the GPU (nvidia-smi only).
	PIDs []int
	// Replica is the target of the replica the GPU is joined to; "" when
	// the evidence does not name one (the GPU is shown under its host).
	Replica string
	// Source is SourceSMI or the exporter's URL.
	Source string
}

// Unknown returns a GPU with every figure unknown, for a reader to fill.
func Unknown() GPU {
	n := math.NaN()
	return GPU{
		Index: -1, MIGInstance: -1, ClockEventReasons: -1,
		Utilization: n, MemoryUsedBytes: n, MemoryTotalBytes: n,
		PowerWatts: n, PowerLimitWatts: n, TemperatureCelsius: n,
		SlowdownMarginCelsius: n, SMClockHz: n, MaxSMClockHz: n,
		UncorrectableRemappedRows: n, RowRemapFailure: n,
	}
}

// Key identifies the GPU or MIG instance within its host.
func (g GPU) Key() string {
	k := g.UUID
	if k == "" {
		k = "gpu" + strconv.Itoa(g.Index)
	}
	if g.MIGInstance >= 0 {
		k += "/" + strconv.Itoa(g.MIGInstance)
	}
	return k
}

// MemoryShare is used ÷ total, NaN when either is unknown.
func (g GPU) MemoryShare() float64 {
	if !(g.MemoryTotalBytes > 0) {
		return math.NaN()
	}
	return g.MemoryUsedBytes / g.MemoryTotalBytes
}

// Sort orders GPUs by host, index and MIG instance: the order of the strip.
func Sort(gs []GPU) {
	slices.SortStableFunc(gs, func(a, b GPU) int {
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Index, b.Index),
			cmp.Compare(a.MIGInstance, b.MIGInstance), cmp.Compare(a.UUID, b.UUID))
	})
}

// jsonGPU is the shape of one GPU in --once --json and --jsonl: null for
// what the source does not give.
type jsonGPU struct {
	Host        string   `json:"host"`
	Index       *int     `json:"index"`
	UUID        *string  `json:"uuid"`
	Model       *string  `json:"model"`
	MIG         *string  `json:"mig"`
	Utilization *float64 `json:"utilization"`
	MemUsed     *float64 `json:"memory_used_bytes"`
	MemTotal    *float64 `json:"memory_total_bytes"`
	Power       *float64 `json:"power_watts"`
	PowerLimit  *float64 `json:"power_limit_watts"`
	Temperature *float64 `json:"temperature_celsius"`
	SMClock     *float64 `json:"sm_clock_hz"`
	XID         *int     `json:"xid"`
	Pod         *string  `json:"pod"`
	Replica     *string  `json:"replica"`
	Source      string   `json:"source"`
}

// MarshalJSON writes the GPU in the report's shape.
func (g GPU) MarshalJSON() ([]byte, error) {
	j := jsonGPU{
		Host: g.Host, UUID: str(g.UUID), Model: str(g.Model), MIG: str(g.MIG),
		Utilization: num(g.Utilization), MemUsed: num(g.MemoryUsedBytes), MemTotal: num(g.MemoryTotalBytes),
		Power: num(g.PowerWatts), PowerLimit: num(g.PowerLimitWatts), Temperature: num(g.TemperatureCelsius),
		SMClock: num(g.SMClockHz), Pod: str(g.Pod), Replica: str(g.Replica), Source: g.Source,
	}
	if g.Index >= 0 {
		j.Index = &g.Index
	}
	if g.XID > 0 {
		j.XID = &g.XID
	}
	return json.Marshal(j)
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
