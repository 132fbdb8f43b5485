package collect

import (
	"math"
	"testing"

	"github.com/vtop-dev/vtop/gpu/device"
)

func TestMerge(t *testing.T) {
	smi := device.Unknown()
	smi.UUID, smi.Index, smi.Source = "GPU-a", 0, device.SourceSMI
	smi.Utilization, smi.PowerLimitWatts, smi.PIDs, smi.ClockEventReasons = 0.5, 700, []int{42}, 4
	exp := device.Unknown()
	exp.UUID, exp.Index, exp.Source, exp.XID, exp.Pod = "GPU-a", 0, "http://localhost:9400/metrics", 79, "vllm-0"
	exp.Utilization = 0.6
	other := device.Unknown()
	other.UUID, other.Index, other.Source = "GPU-b", 1, device.SourceSMI

	gs, notes := Merge(Snapshot{GPUs: []device.GPU{smi, other}, OK: true},
		Snapshot{GPUs: []device.GPU{exp}, Note: "dcgm-exporter slow"}, Snapshot{Note: "x"})
	if len(gs) != 2 || len(notes) != 2 {
		t.Fatalf("%d GPUs, notes %v", len(gs), notes)
	}
	g := gs[0]
	if g.Source != exp.Source || g.XID != 79 || g.Pod != "vllm-0" || g.Utilization != 0.6 ||
		g.PowerLimitWatts != 700 || g.ClockEventReasons != 4 || len(g.PIDs) != 1 || !math.IsNaN(g.PowerWatts) {
		t.Errorf("merged %+v", g)
	}
	if gs[1].UUID != "GPU-b" {
		t.Errorf("second %+v", gs[1])
	}
}
