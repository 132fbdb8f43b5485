package analysis

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/gpu/device"
)

// testGPU is a healthy, half-used H100 joined to replica.
func testGPU(replica string, set func(*device.GPU)) device.GPU {
	g := device.Unknown()
	g.Host, g.Index, g.UUID, g.Model, g.Source, g.Replica = "gpu-a", 0, "GPU-1", "NVIDIA H100 80GB HBM3", device.SourceSMI, replica
	g.Utilization, g.MemoryUsedBytes, g.MemoryTotalBytes = 0.9, 40<<30, 80<<30
	g.SMClockHz, g.MaxSMClockHz, g.ClockEventReasons = 1980e6, 1980e6, 0
	g.TemperatureCelsius, g.SlowdownMarginCelsius = 60, 27
	if set != nil {
		set(&g)
	}
	return g
}

func TestApplyGPUs(t *testing.T) {
	const target = "gpu-a:8000"
	tests := []struct {
		name       string
		state      State
		kv         float64
		action     string
		gpu        device.GPU
		firstHas   string // "" : the reasons are unchanged
		actionHas  string // prefix of the action after; "" : unchanged
		fault      string
		extraAfter string // a reason appended after the state's own
	}{
		{"FULL, GPU half idle, KV room: raise max_num_seqs", StateFull, 0.4, "add replicas",
			testGPU(target, func(g *device.GPU) { g.Utilization = 0.3 }), "busy 30%", "raise max_num_seqs: the KV cache is 40% used", "", ""},
		{"FULL, GPU half idle, KV full: add replicas", StateFull, 0.95, "add replicas",
			testGPU(target, func(g *device.GPU) { g.Utilization = 0.3 }), "busy 30%", "add replicas: the KV cache (95% used)", "", ""},
		{"FULL, GPU busy: nothing", StateFull, 0.4, "add replicas", testGPU(target, nil), "", "", "", ""},
		{"FULL, utilisation unknown: nothing", StateFull, 0.4, "add replicas",
			testGPU(target, func(g *device.GPU) { g.Utilization = math.NaN() }), "", "", "", ""},
		{"SLOW, clocks cut by thermal slowdown", StateSlow, 0.2, "shorten prompts",
			testGPU(target, func(g *device.GPU) {
				g.SMClockHz, g.ClockEventReasons = 1200e6, catalogue.ClockEventHWThermal
			}), "clocks throttled, SM 1200 of 1980 MHz (hardware thermal slowdown)", "check cooling", "", ""},
		{"SLOW, at the slowdown temperature", StateSlow, 0.2, "shorten prompts",
			testGPU(target, func(g *device.GPU) { g.TemperatureCelsius, g.SlowdownMarginCelsius = 87, 0 }), "slowdown temperature (87 °C)", "check the node's cooling", "", ""},
		{"HEALTHY, throttled: not the question", StateHealthy, 0.2, "",
			testGPU(target, func(g *device.GPU) { g.SMClockHz = 1000e6 }), "", "", "", ""},
		{"DOWN after XID 79", StateDown, math.NaN(), "check the vLLM process",
			testGPU(target, func(g *device.GPU) { g.XID = 79 }), "XID 79 (GPU has fallen off the bus)", "drain the replica", "XID 79", ""},
		{"HEALTHY with a fatal XID: the badge and its action", StateHealthy, 0.2, "",
			testGPU(target, func(g *device.GPU) { g.XID = 48 }), "XID 48 (double-bit ECC error)", "drain the replica", "XID 48", ""},
		{"HEALTHY with an application XID: the badge, no action", StateHealthy, 0.2, "",
			testGPU(target, func(g *device.GPU) { g.XID = 13 }), "", "", "XID 13", "XID 13 (graphics engine exception)"},
		{"uncorrectable remapped rows", StateHealthy, 0.2, "",
			testGPU(target, func(g *device.GPU) { g.UncorrectableRemappedRows = 2 }), "2 rows remapped", "drain the replica and reset the GPU", "ROW REMAP", ""},
		{"PREEMPTING with the framebuffer full", StatePreempting, 0.99, "cap max_num_seqs at 25",
			testGPU(target, func(g *device.GPU) { g.MemoryUsedBytes = 79 << 30 }), "memory 99% full", "cap max_num_seqs, or add VRAM", "", ""},
		{"GPU of another replica: nothing", StateFull, 0.4, "add replicas",
			testGPU("gpu-b:8000", func(g *device.GPU) { g.Utilization, g.XID = 0.1, 79 }), "", "", "", ""},
		{"GPU joined to no replica: nothing", StateDown, math.NaN(), "check the vLLM process",
			testGPU("", func(g *device.GPU) { g.XID = 79 }), "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			own := "the state's own evidence 1"
			rep := Report{Replicas: []ReplicaReport{{Target: target, State: tt.state, Reasons: []string{own}, Action: tt.action,
				Figures: Figures{KVCacheUsage: Num(tt.kv)}}}}
			ApplyGPUs(&rep, []device.GPU{tt.gpu}, []GPUSource{{Name: device.SourceSMI, GPUs: 1}})
			rr := rep.Replicas[0]
			if len(rep.GPUs) != 1 || rep.GPUs[0].UUID != "GPU-1" || len(rep.GPUSources) != 1 {
				t.Fatalf("report GPUs %v, sources %v: every GPU is listed, joined or not", rep.GPUs, rep.GPUSources)
			}
			switch {
			case tt.firstHas == "":
				if rr.Reasons[0] != own {
					t.Errorf("reasons %q: want the state's own first", rr.Reasons)
				}
			case !strings.Contains(rr.Reasons[0], tt.firstHas) || !slices.Contains(rr.Reasons, own):
				t.Errorf("reasons %q: want first %q, then the state's own", rr.Reasons, tt.firstHas)
			}
			if tt.extraAfter != "" && !strings.Contains(rr.Reasons[len(rr.Reasons)-1], tt.extraAfter) {
				t.Errorf("reasons %q: want %q appended", rr.Reasons, tt.extraAfter)
			}
			if tt.firstHas == "" && tt.extraAfter == "" && len(rr.Reasons) != 1 {
				t.Errorf("reasons %q: want nothing added", rr.Reasons)
			}
			wantAction := tt.action
			if tt.actionHas != "" {
				wantAction = tt.actionHas
			}
			if !strings.HasPrefix(rr.Action, wantAction) {
				t.Errorf("action %q, want it to start %q", rr.Action, wantAction)
			}
			if rr.Fault != tt.fault {
				t.Errorf("fault badge %q, want %q", rr.Fault, tt.fault)
			}
			if rr.State != tt.state {
				t.Errorf("state %s changed to %s: the state is the metrics'", tt.state, rr.State)
			}
		})
	}
}

// TestApplyGPUsFigures: a replica's GPU figures are over its own GPUs,
// unknown values left out, never read as 0.
func TestApplyGPUsFigures(t *testing.T) {
	rep := Report{Replicas: []ReplicaReport{{Target: "a"}, {Target: "b"}}}
	gs := []device.GPU{
		testGPU("a", func(g *device.GPU) { g.Index, g.UUID, g.Utilization = 0, "GPU-0", 0.2 }),
		testGPU("a", func(g *device.GPU) {
			g.Index, g.UUID, g.Utilization, g.MemoryUsedBytes = 1, "GPU-1", math.NaN(), 80<<30
		}),
		testGPU("", func(g *device.GPU) { g.Index, g.UUID = 2, "GPU-2" }),
	}
	ApplyGPUs(&rep, gs, nil)
	a, b := rep.Replicas[0], rep.Replicas[1]
	if a.GPUCount != 2 || a.GPUUtilization != 0.2 || a.GPUMemoryUsage != 0.75 {
		t.Errorf("a: %d GPUs, utilisation %v, memory %v; want 2, 0.2 (the unknown left out), 0.75", a.GPUCount, a.GPUUtilization, a.GPUMemoryUsage)
	}
	if b.GPUCount != 0 {
		t.Errorf("b has %d GPUs, none joined", b.GPUCount)
	}
	if got := rep.ReplicaGPUs("a"); len(got) != 2 {
		t.Errorf("ReplicaGPUs(a) = %d GPUs", len(got))
	}
}

// TestReportGPUsJSON: the report's gpus is a list, empty rather than null
// when a GPU source was read and found none.
func TestReportGPUsJSON(t *testing.T) {
	rep := Report{}
	ApplyGPUs(&rep, nil, []GPUSource{{Name: device.SourceSMI, Note: "nvidia-smi not found on PATH"}})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"gpus":[]`) || !strings.Contains(string(b), `"note":"nvidia-smi not found on PATH"`) {
		t.Errorf("JSON %s", b)
	}
}

// TestAddFaultEvents: a fault badge that is new is an event; one already
// shown, or on a replica seen for the first time, is not.
func TestAddFaultEvents(t *testing.T) {
	prev := Report{Replicas: []ReplicaReport{{Target: "a"}, {Target: "b", Fault: "XID 79"}, {Target: "c", Fault: "XID 13"}}}
	r := Report{Replicas: []ReplicaReport{
		{Target: "a", Fault: "XID 79", Reasons: []string{"GPU 0: XID 79 (GPU has fallen off the bus)"}},
		{Target: "b", Fault: "XID 79"},
		{Target: "c", Fault: "XID 48", Reasons: []string{"GPU 1: XID 48 (double-bit ECC error)"}},
		{Target: "d", Fault: "XID 79"},
	}}
	AddFaultEvents(&r, &prev)
	var got []string
	for _, e := range r.Events {
		got = append(got, e.Target+": "+e.Text)
	}
	want := []string{"a: GPU fault: GPU 0: XID 79 (GPU has fallen off the bus)", "c: GPU fault: GPU 1: XID 48 (double-bit ECC error)"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
