package sim_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/gpu"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/sim"
)

func readGPUs(t *testing.T, g *sim.GPUs, replica int) []device.GPU {
	t.Helper()
	page, err := g.Render(replica)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := gpu.ParseDCGM(page, "sim")
	if err != nil {
		t.Fatalf("the page does not parse as dcgm-exporter's: %v", err)
	}
	return gs
}

func fleet(t *testing.T, s sim.Scenario, n int) *sim.Fleet {
	t.Helper()
	f, err := sim.NewFleet(sim.Options{Replicas: n, Scenario: s, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestGPUsFollowLoad: utilisation follows the running batch and memory the
// KV cache in use; an idle replica's GPU holds only the weights.
func TestGPUsFollowLoad(t *testing.T) {
	idle := sim.NewGPUs(fleet(t, sim.Idle, 1))
	fullFleet := fleet(t, sim.Full, 1)
	fullFleet.Advance(3 * time.Minute)
	full := sim.NewGPUs(fullFleet)

	i := readGPUs(t, idle, 0)[0]
	f := readGPUs(t, full, 0)[0]
	if i.Utilization != 0 || f.Utilization < 0.99 {
		t.Errorf("utilisation idle %v, full %v", i.Utilization, f.Utilization)
	}
	if !(f.MemoryUsedBytes > i.MemoryUsedBytes+20<<30) {
		t.Errorf("memory idle %v, full %v: the KV cache in use is not counted", i.MemoryUsedBytes, f.MemoryUsedBytes)
	}
	if i.MemoryTotalBytes != 81559<<20 || f.MemoryTotalBytes != i.MemoryTotalBytes {
		t.Errorf("total %v / %v", i.MemoryTotalBytes, f.MemoryTotalBytes)
	}
	if !(f.PowerWatts > i.PowerWatts) || !(f.TemperatureCelsius > i.TemperatureCelsius) {
		t.Errorf("power %v→%v, temperature %v→%v", i.PowerWatts, f.PowerWatts, i.TemperatureCelsius, f.TemperatureCelsius)
	}
	if f.ClockEventReasons != 0 || f.XID != 0 || f.SMClockHz != f.MaxSMClockHz {
		t.Errorf("a healthy GPU shows a fault: %+v", f)
	}
}

func TestGPUsPerEngineAndPod(t *testing.T) {
	g := sim.NewGPUs(fleet(t, sim.Mixed, 2)) // replica 0 has two engines
	for replica, n := range []int{2, 1} {
		gs := readGPUs(t, g, replica)
		if len(gs) != n {
			t.Fatalf("replica %d: %d GPUs, want %d", replica, len(gs), n)
		}
		for _, x := range gs {
			if x.Pod != sim.PodName(replica) || x.Namespace != sim.PodNamespace() || x.Model != "NVIDIA H100 80GB HBM3" {
				t.Errorf("replica %d GPU %+v", replica, x)
			}
		}
	}
	if a, b := readGPUs(t, g, 0), readGPUs(t, g, 1); a[0].UUID == b[0].UUID || a[0].UUID == a[1].UUID {
		t.Errorf("UUIDs repeat: %s %s %s", a[0].UUID, a[1].UUID, b[0].UUID)
	}
}

func TestGPUFaults(t *testing.T) {
	g := sim.NewGPUs(fleet(t, sim.Healthy, 2))
	if err := g.SetFault(0, sim.GPUThrottle); err != nil {
		t.Fatal(err)
	}
	if err := g.SetFault(1, sim.GPUXID); err != nil {
		t.Fatal(err)
	}
	th := readGPUs(t, g, 0)[0]
	if th.ClockEventReasons != 0x60 || th.SlowdownMarginCelsius != 0 || th.SMClockHz != 1200e6 || th.XID != 0 {
		t.Errorf("throttled GPU %+v", th)
	}
	if x := readGPUs(t, g, 1)[0]; x.XID != 79 || x.ClockEventReasons != 0 {
		t.Errorf("XID GPU %+v", x)
	}
	if err := g.SetFault(0, sim.GPUHealthy); err != nil || readGPUs(t, g, 0)[0].ClockEventReasons != 0 {
		t.Errorf("fault not cleared: %v", err)
	}
	for _, bad := range []struct {
		replica int
		fault   sim.GPUFault
	}{{2, sim.GPUXID}, {-1, sim.GPUXID}, {0, "melt"}} {
		if err := g.SetFault(bad.replica, bad.fault); err == nil {
			t.Errorf("SetFault(%d, %q): no error", bad.replica, bad.fault)
		}
	}
}

func TestGPUsServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := sim.NewGPUs(fleet(t, sim.Healthy, 2))
	addrs, err := g.Serve(ctx, "127.0.0.1")
	if err != nil || len(addrs) != 2 {
		t.Fatalf("%v %v", addrs, err)
	}
	resp, err := http.Get("http://" + addrs[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	gs, err := gpu.ParseDCGM(page, addrs[1])
	if err != nil || len(gs) != 1 || gs[0].Pod != sim.PodName(1) {
		t.Errorf("served page: %v %+v", err, gs)
	}
}
