package monitor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/gpu/device"
)

// joiningInput is a GPUInput with one GPU, joined to whatever target it is
// asked about first, at XID 79; it counts the reads and which targets it
// was asked about.
type joiningInput struct {
	reads   atomic.Int64
	targets atomic.Value // []string
}

func (in *joiningInput) GPUs(targets []string) ([]device.GPU, []analysis.GPUSource) {
	in.reads.Add(1)
	in.targets.Store(targets)
	g := device.Unknown()
	g.Host, g.Index, g.UUID, g.XID, g.Source = "gpu-a", 0, "GPU-1", 79, "test"
	if len(targets) > 0 {
		g.Replica = targets[0]
	}
	return []device.GPU{g}, []analysis.GPUSource{{Name: "test", GPUs: 1}}
}

// TestMonitorReadsGPUsEachReport: every report carries the GPU input's
// GPUs, joined to the report's targets, with their evidence in the
// replica's reasons.
func TestMonitorReadsGPUsEachReport(t *testing.T) {
	var hits atomic.Int64
	p, tg := countingPoller(t, &hits, 50*time.Millisecond)
	in := &joiningInput{}
	reports := make(chan analysis.Report, 100)
	cfg := analysis.DefaultConfig()
	cfg.Window = time.Second
	m := New(Of(p), cfg, func(r analysis.Report) error { reports <- r; return nil })
	m.SetGPUs(in)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	for range 3 {
		r := receive(t, reports)
		if len(r.GPUs) != 1 || r.GPUs[0].Replica != tg.Name || len(r.GPUSources) != 1 {
			t.Fatalf("report GPUs %+v, sources %+v", r.GPUs, r.GPUSources)
		}
		if rr := r.Replicas[0]; rr.Fault != "XID 79" || rr.GPUCount != 1 {
			t.Errorf("replica fault %q, %d GPUs: the evidence was not applied", rr.Fault, rr.GPUCount)
		}
	}
	if got, _ := in.targets.Load().([]string); len(got) != 1 || got[0] != tg.Name {
		t.Errorf("asked about targets %v, want the report's", got)
	}
	if in.reads.Load() < 3 {
		t.Errorf("%d reads for 3 reports", in.reads.Load())
	}
}

// TestAddGPUsWithoutInput: no input, nothing added; the report's gpus stay
// nil (none asked), not an empty list (asked, none found).
func TestAddGPUsWithoutInput(t *testing.T) {
	r := analysis.Report{Replicas: []analysis.ReplicaReport{{Target: "a"}}}
	AddGPUs(&r, nil)
	if r.GPUs != nil || r.GPUSources != nil {
		t.Errorf("GPUs %v, sources %v", r.GPUs, r.GPUSources)
	}
}
