package e2e

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/gpu"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// These tests prove the GPU evidence end to end: each simulated replica
// also serves its dcgm-exporter page over real HTTP, consistent with its
// load; the page is fetched by the real scrape client, parsed as
// dcgm-exporter's, joined to its replica by pod (as dcgm-exporter labels
// the workload on Kubernetes) and handed to the analysis beside the
// replica's own metrics.

// gpuRun is a fleetRun with each replica's exporter.
type gpuRun struct {
	*fleetRun
	gpus      *sim.GPUs
	exporters []scrape.Target
}

func newGPURun(t *testing.T, opts sim.Options) *gpuRun {
	t.Helper()
	r := &gpuRun{fleetRun: newFleetRun(t, opts)}
	r.gpus = sim.NewGPUs(r.fleet)
	for i := range r.targets {
		srv := httptest.NewServer(r.gpus.Handler(i))
		t.Cleanup(srv.Close)
		target, err := scrape.ParseTarget(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		r.exporters = append(r.exporters, target)
	}
	return r
}

// step is fleetRun's step with the GPUs read, joined and applied.
func (r *gpuRun) step() analysis.Report {
	r.t.Helper()
	rep := r.fleetRun.step(time.Second)
	var gs []device.GPU
	replicas := make([]device.Replica, len(r.targets))
	for i, e := range r.exporters {
		body, _, err := r.client.Fetch(r.t.Context(), e, healthyTimeout, nil)
		if err != nil {
			r.t.Fatalf("exporter %d: %v", i, err)
		}
		page, err := gpu.ParseDCGM(body, e.URL)
		if err != nil {
			r.t.Fatalf("exporter %d: %v", i, err)
		}
		gs = append(gs, page...)
		replicas[i] = device.Replica{Target: r.targets[i].Name, Host: "127.0.0.1", Pod: sim.PodName(i), Namespace: sim.PodNamespace()}
	}
	device.Join(gs, replicas, nil, "vtop-test-host")
	analysis.ApplyGPUs(&rep, gs, nil)
	return rep
}

// play warms the fleet up and returns the last of scrapeSteps reports.
func (r *gpuRun) play() analysis.Report {
	r.fleet.Advance(warmUp)
	var rep analysis.Report
	for range scrapeSteps {
		rep = r.step()
	}
	return rep
}

func hasReason(rr analysis.ReplicaReport, part string) bool {
	for _, reason := range rr.Reasons {
		if strings.Contains(reason, part) {
			return true
		}
	}
	return false
}

// TestGPUEvidenceChangesTheAction: the rules of the GPU evidence, each on
// a simulated case.
func TestGPUEvidenceChangesTheAction(t *testing.T) {
	t.Run("FULL with the GPU half idle: raise max_num_seqs", func(t *testing.T) {
		// A batch cap of 16 keeps the GPU under half busy while the queue grows.
		r := newGPURun(t, sim.Options{Replicas: 1, Scenario: sim.Full, Seed: 1,
			Configure: func(_ int, c *sim.ReplicaConfig) { c.MaxNumSeqs = 16 }})
		rr := r.play().Replicas[0]
		if rr.State != analysis.StateFull {
			t.Fatalf("state %s, want full; reasons %q", rr.State, rr.Reasons)
		}
		if rr.GPUCount != 1 || !(rr.GPUUtilization < device.LowUtilization) {
			t.Fatalf("joined GPUs %d, utilisation %v: the case needs one GPU under %v busy", rr.GPUCount, rr.GPUUtilization, device.LowUtilization)
		}
		if !strings.Contains(rr.Reasons[0], "busy") || !strings.HasPrefix(rr.Action, "raise max_num_seqs") {
			t.Errorf("reasons %q, action %q: want the idle GPU first and max_num_seqs raised", rr.Reasons, rr.Action)
		}
	})
	t.Run("FULL with the GPU busy: add replicas, no GPU reason", func(t *testing.T) {
		r := newGPURun(t, sim.Options{Replicas: 1, Scenario: sim.Full, Seed: 1})
		rr := r.play().Replicas[0]
		if rr.State != analysis.StateFull || rr.GPUCount != 1 {
			t.Fatalf("state %s with %d GPUs", rr.State, rr.GPUCount)
		}
		if hasReason(rr, "GPU") || !strings.HasPrefix(rr.Action, "add replicas") {
			t.Errorf("reasons %q, action %q: a busy GPU changes nothing", rr.Reasons, rr.Action)
		}
	})
	t.Run("SLOW with clocks throttled: check the cooling", func(t *testing.T) {
		r := newGPURun(t, sim.Options{Replicas: 1, Scenario: sim.Slow, Seed: 1})
		if err := r.gpus.SetFault(0, sim.GPUThrottle); err != nil {
			t.Fatal(err)
		}
		rr := r.play().Replicas[0]
		if rr.State != analysis.StateSlow {
			t.Fatalf("state %s, want slow; reasons %q", rr.State, rr.Reasons)
		}
		if !strings.Contains(rr.Reasons[0], "clocks throttled, SM 1200 of 1980 MHz") || !hasReason(rr, "slowdown temperature") ||
			!strings.HasPrefix(rr.Action, "check cooling") {
			t.Errorf("reasons %q, action %q", rr.Reasons, rr.Action)
		}
	})
	t.Run("DOWN after an XID: the fault badge and its action", func(t *testing.T) {
		r := newGPURun(t, sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 1})
		if err := r.gpus.SetFault(0, sim.GPUXID); err != nil {
			t.Fatal(err)
		}
		if err := r.fleet.Replicas()[0].SetFault(sim.FaultHTTP500); err != nil {
			t.Fatal(err)
		}
		rr := r.play().Replicas[0]
		if rr.State != analysis.StateDown {
			t.Fatalf("state %s, want down; reasons %q", rr.State, rr.Reasons)
		}
		if rr.Fault != "XID 79" || !strings.Contains(rr.Reasons[0], "XID 79 (GPU has fallen off the bus)") ||
			!strings.HasPrefix(rr.Action, "drain the replica; reset the GPU") {
			t.Errorf("fault %q, reasons %q, action %q", rr.Fault, rr.Reasons, rr.Action)
		}
	})
	t.Run("HEALTHY and its GPUs fine: nothing added", func(t *testing.T) {
		r := newGPURun(t, sim.Options{Replicas: 2, Scenario: sim.Healthy, Seed: 1})
		rep := r.play()
		if len(rep.GPUs) != 2 {
			t.Fatalf("%d GPUs, want one per replica", len(rep.GPUs))
		}
		for _, rr := range rep.Replicas {
			if rr.State != analysis.StateHealthy || rr.Fault != "" || hasReason(rr, "GPU") || rr.Action != "" || rr.GPUCount != 1 {
				t.Errorf("%s: state %s, fault %q, reasons %q, action %q, %d GPUs", rr.Target, rr.State, rr.Fault, rr.Reasons, rr.Action, rr.GPUCount)
			}
		}
		for _, g := range rep.GPUs {
			if want := r.targets[podIndex(t, g.Pod)].Name; g.Replica != want {
				t.Errorf("GPU of pod %s joined to %q, want %q", g.Pod, g.Replica, want)
			}
		}
	})
}

// podIndex is the replica index of a simulated pod name.
func podIndex(t *testing.T, pod string) int {
	t.Helper()
	for i := range 100 {
		if sim.PodName(i) == pod {
			return i
		}
	}
	t.Fatalf("pod %q is no simulated replica's", pod)
	return -1
}
