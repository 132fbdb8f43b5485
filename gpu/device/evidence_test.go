package device

import (
	"math"
	"strings"
	"testing"
)

func TestEvidence(t *testing.T) {
	base := func(edit func(g *GPU)) GPU {
		g := Unknown()
		g.Index, g.Utilization, g.TemperatureCelsius = 0, 0.95, 60
		g.SMClockHz, g.MaxSMClockHz, g.ClockEventReasons = 1980e6, 1980e6, 0
		g.MemoryUsedBytes, g.MemoryTotalBytes = 60<<30, 80<<30
		g.SlowdownMarginCelsius = 25
		if edit != nil {
			edit(&g)
		}
		return g
	}
	type want struct {
		kind   FindingKind
		fault  bool
		reason string // a part of it
		action string // a part of it
	}
	tests := []struct {
		name string
		g    GPU
		s    Situation
		want []want
	}{
		{"healthy GPU, healthy replica", base(nil), Situation{}, nil},
		{"healthy GPU under every state", base(nil), Situation{Full: true, Slow: true, Preempting: true, KVUsage: 0.5}, nil},
		{"fatal XID", base(func(g *GPU) { g.XID = 79 }), Situation{},
			[]want{{FindingXID, true, "GPU 0: XID 79 (GPU has fallen off the bus)", "reset the GPU"}}},
		{"application XID", base(func(g *GPU) { g.XID = 13 }), Situation{},
			[]want{{FindingXID, false, "XID 13 (graphics engine exception)", "log and dmesg"}}},
		{"unknown XID", base(func(g *GPU) { g.XID = 999 }), Situation{}, []want{{FindingXID, false, "XID 999", "dmesg"}}},
		{"uncorrectable rows", base(func(g *GPU) { g.UncorrectableRemappedRows = 3 }), Situation{},
			[]want{{FindingRemappedRows, true, "3 rows remapped after uncorrectable memory errors", "reset the GPU"}}},
		{"remap failed", base(func(g *GPU) { g.RowRemapFailure = 1 }), Situation{},
			[]want{{FindingRemappedRows, true, "row remapping failed", "replace the GPU"}}},
		{"FULL, idle GPU, room in the cache", base(func(g *GPU) { g.Utilization = 0.35 }), Situation{Full: true, KVUsage: 0.42},
			[]want{{FindingLowUtilFull, false, "busy 35% of the time", "raise max_num_seqs: the KV cache is 42% used"}}},
		{"FULL, idle GPU, cache full", base(func(g *GPU) { g.Utilization = 0.35 }), Situation{Full: true, KVUsage: 0.93},
			[]want{{FindingLowUtilFull, false, "busy 35%", "add replicas: the KV cache (93% used)"}}},
		{"FULL, cache unknown", base(func(g *GPU) { g.Utilization = 0.2 }), Situation{Full: true, KVUsage: math.NaN()},
			[]want{{FindingLowUtilFull, false, "busy 20%", "if the KV cache has room"}}},
		{"FULL, utilisation unknown", base(func(g *GPU) { g.Utilization = math.NaN() }), Situation{Full: true}, nil},
		{"idle GPU but not FULL", base(func(g *GPU) { g.Utilization = 0.1 }), Situation{Slow: true}, nil},
		{"SLOW, thermal throttling", base(func(g *GPU) { g.SMClockHz, g.ClockEventReasons = 1200e6, 0x60 }), Situation{Slow: true},
			[]want{{FindingThrottled, false, "SM 1200 of 1980 MHz (software thermal slowdown, hardware thermal slowdown)", "cooling"}}},
		{"SLOW, power cap bit only", base(func(g *GPU) { g.ClockEventReasons = 0x4 }), Situation{Slow: true},
			[]want{{FindingThrottled, false, "clocks throttled, SM 1980 of 1980 MHz (power cap)", "power cap"}}},
		{"SLOW, clock cut, reasons unknown", base(func(g *GPU) { g.SMClockHz, g.ClockEventReasons = 1000e6, -1 }), Situation{Slow: true},
			[]want{{FindingThrottled, false, "SM 1000 of 1980 MHz", ""}}},
		{"SLOW, idle bit is no throttle", base(func(g *GPU) { g.ClockEventReasons = 0x1 }), Situation{Slow: true}, nil},
		{"SLOW, at the slowdown temperature", base(func(g *GPU) { g.SlowdownMarginCelsius, g.TemperatureCelsius = 0, 87 }), Situation{Slow: true},
			[]want{{FindingThermalLimit, false, "GPU 0 at its slowdown temperature (87 °C)", "cooling"}}},
		{"hot but not SLOW", base(func(g *GPU) { g.SlowdownMarginCelsius, g.ClockEventReasons = 0, 0x40 }), Situation{Full: true, KVUsage: 0.5}, nil},
		{"PREEMPTING, memory full", base(func(g *GPU) { g.MemoryUsedBytes = 79 << 30 }), Situation{Preempting: true},
			[]want{{FindingMemoryPreempt, false, "memory 99% full (79.0 of 80.0 GiB)", "cap max_num_seqs"}}},
		{"PREEMPTING, memory unknown", base(func(g *GPU) { g.MemoryTotalBytes = math.NaN() }), Situation{Preempting: true}, nil},
		{"MIG instance named", base(func(g *GPU) { g.MIG, g.MIGInstance, g.XID = "1g.6gb", 3, 48 }), Situation{},
			[]want{{FindingXID, true, "GPU 0 MIG 1g.6gb #3: XID 48 (double-bit ECC error)", ""}}},
	}
	for _, tt := range tests {
		got := Evidence([]GPU{tt.g}, tt.s)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %d findings %+v, want %d", tt.name, len(got), got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			f := got[i]
			if f.Kind != w.kind || f.Fault != w.fault || !strings.Contains(f.Reason, w.reason) || !strings.Contains(f.Action, w.action) {
				t.Errorf("%s: %+v\nwant %+v", tt.name, f, w)
			}
		}
	}
}

func TestEvidenceSeveralGPUs(t *testing.T) {
	a, b := Unknown(), Unknown()
	a.Index, b.Index, b.XID = 0, 1, 79
	got := Evidence([]GPU{a, b}, Situation{})
	if len(got) != 1 || got[0].GPU != "GPU 1" {
		t.Errorf("findings %+v", got)
	}
}
