package device

import (
	"fmt"
	"math"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// Thresholds of the GPU evidence.
const (
	// LowUtilization is the busy share under which a FULL replica's GPU
	// is not what limits it.
	LowUtilization = 0.5
	// RoomInKVCache is the KV cache usage under which a batch can grow.
	RoomInKVCache = 0.8
	// ClockCut is the share of its maximum under which an SM clock is
	// throttled.
	ClockCut = 0.8
	// ThermalMargin is how near (°C) the slowdown temperature counts as at
	// the limit.
	ThermalMargin = 2.0
	// MemoryFull is the framebuffer share at which a preempting replica
	// cannot give its KV cache more room.
	MemoryFull = 0.95
)

// Situation is what the analysis has concluded about one replica, as the
// GPU evidence needs it.
type Situation struct {
	// Full, Slow and Preempting are the replica's state (or reasons).
	Full, Slow, Preempting bool
	// KVUsage is the replica's KV cache usage, 0–1 (NaN unknown).
	KVUsage float64
}

// Finding is one piece of GPU evidence for a replica.
type Finding struct {
	// Kind names the rule, for tests and for the screen's badge.
	Kind FindingKind
	// Fault marks a hardware fault: the replica is DOWN or carries a
	// fault badge whatever its metrics say.
	Fault bool
	// GPU names the GPU ("GPU 3").
	GPU string
	// Reason is the evidence with its numbers; Action the first thing to
	// do. Both safe to draw.
	Reason, Action string
}

// FindingKind names a rule of the GPU evidence.
type FindingKind string

// The rules.
const (
	FindingXID           FindingKind = "xid"
	FindingRemappedRows  FindingKind = "remapped-rows"
	FindingLowUtilFull   FindingKind = "low-utilization-full"
	FindingThrottled     FindingKind = "throttled"
	FindingThermalLimit  FindingKind = "thermal-limit"
	FindingMemoryPreempt FindingKind = "memory-full-preempting"
)

// Evidence returns the GPU evidence for a replica from its joined GPUs:
// faults always; throttling and heat when it is SLOW; low utilisation
// when it is FULL; a full framebuffer when it is PREEMPTING.
func Evidence(gs []GPU, s Situation) []Finding {
	var out []Finding
	for _, g := range gs {
		out = append(out, faults(g)...)
		if s.Full {
			out = append(out, lowUtil(g, s)...)
		}
		if s.Slow {
			out = append(out, throttled(g)...)
		}
		if s.Preempting {
			out = append(out, memoryFull(g)...)
		}
	}
	return out
}

// Name is how a finding names the GPU: "GPU 3", "GPU 0 MIG 1g.6gb #3".
func (g GPU) Name() string {
	n := "GPU ?"
	if g.Index >= 0 {
		n = fmt.Sprintf("GPU %d", g.Index)
	}
	if g.MIG != "" {
		n += fmt.Sprintf(" MIG %s #%d", g.MIG, g.MIGInstance)
	}
	return n
}

// fatalXIDs need the GPU reset or replaced; other XIDs are often the
// application's (13, 31, 43, 45) and earn a badge only. From NVIDIA's XID
// catalogue.
var fatalXIDs = map[int]string{
	48: "double-bit ECC error", 62: "internal micro-controller halt", 64: "row remapping failed",
	74: "NVLink error", 79: "GPU has fallen off the bus", 92: "high single-bit ECC error rate",
	94: "contained ECC error", 95: "uncontained ECC error", 119: "GSP RPC timeout", 120: "GSP error",
}

var otherXIDs = map[int]string{
	13: "graphics engine exception", 31: "GPU memory page fault", 43: "GPU stopped processing",
	45: "preemptive cleanup", 63: "row remapping recorded",
}

func faults(g GPU) []Finding {
	var out []Finding
	if g.XID > 0 {
		what, fatal := fatalXIDs[g.XID]
		if !fatal {
			what = otherXIDs[g.XID]
		}
		f := Finding{Kind: FindingXID, Fault: fatal, GPU: g.Name(), Reason: fmt.Sprintf("%s: XID %d", g.Name(), g.XID)}
		if what != "" {
			f.Reason += " (" + what + ")"
		}
		f.Action = "check the process's log and dmesg for the XID"
		if fatal {
			f.Action = "drain the replica; reset the GPU (or reboot the node) and replace it if the XID returns"
		}
		out = append(out, f)
	}
	if g.UncorrectableRemappedRows > 0 || g.RowRemapFailure >= 1 {
		f := Finding{Kind: FindingRemappedRows, Fault: true, GPU: g.Name(),
			Reason: fmt.Sprintf("%s: %s remapped after uncorrectable memory errors", g.Name(), plural(g.UncorrectableRemappedRows, "row")),
			Action: "drain the replica and reset the GPU so the remap takes effect"}
		if g.RowRemapFailure >= 1 {
			f.Reason = g.Name() + ": row remapping failed"
			f.Action = "drain the replica and replace the GPU"
		}
		out = append(out, f)
	}
	return out
}

func lowUtil(g GPU, s Situation) []Finding {
	if !(g.Utilization < LowUtilization) {
		return nil // unknown (NaN) or busy
	}
	f := Finding{Kind: FindingLowUtilFull, GPU: g.Name(),
		Reason: fmt.Sprintf("FULL with %s busy %s of the time: the batch cap, not the GPU, limits throughput", g.Name(), percent(g.Utilization))}
	switch {
	case s.KVUsage < RoomInKVCache:
		f.Action = fmt.Sprintf("raise max_num_seqs: the KV cache is %s used", percent(s.KVUsage))
	case s.KVUsage >= RoomInKVCache:
		f.Action = fmt.Sprintf("add replicas: the KV cache (%s used) leaves no room for a larger batch", percent(s.KVUsage))
	default:
		f.Action = "raise max_num_seqs if the KV cache has room"
	}
	return []Finding{f}
}

func throttled(g GPU) []Finding {
	var out []Finding
	reasons := throttleReasons(g.ClockEventReasons)
	cut := g.SMClockHz < ClockCut*g.MaxSMClockHz
	if len(reasons) > 0 || cut {
		r := g.Name() + ": clocks throttled"
		if !math.IsNaN(g.SMClockHz) && !math.IsNaN(g.MaxSMClockHz) {
			r += fmt.Sprintf(", SM %.0f of %.0f MHz", g.SMClockHz/1e6, g.MaxSMClockHz/1e6)
		}
		if len(reasons) > 0 {
			r += " (" + strings.Join(reasons, ", ") + ")"
		}
		out = append(out, Finding{Kind: FindingThrottled, GPU: g.Name(), Reason: r,
			Action: "check cooling and the power cap (nvidia-smi -q -d PERFORMANCE)"})
	}
	if g.SlowdownMarginCelsius <= ThermalMargin {
		out = append(out, Finding{Kind: FindingThermalLimit, GPU: g.Name(),
			Reason: fmt.Sprintf("%s at its slowdown temperature (%.0f °C)", g.Name(), g.TemperatureCelsius),
			Action: "check the node's cooling and airflow"})
	}
	return out
}

// throttleReasons names the bits of a clock event mask that slow a busy
// GPU down (idle, application clocks, sync boost and display do not).
func throttleReasons(mask int64) []string {
	if mask <= 0 {
		return nil
	}
	names := []struct {
		bit  int64
		name string
	}{
		{catalogue.ClockEventSWPowerCap, "power cap"}, {catalogue.ClockEventHWSlowdown, "hardware slowdown"},
		{catalogue.ClockEventSWThermal, "software thermal slowdown"}, {catalogue.ClockEventHWThermal, "hardware thermal slowdown"},
		{catalogue.ClockEventHWPowerBrake, "power brake"},
	}
	var out []string
	for _, n := range names {
		if mask&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func memoryFull(g GPU) []Finding {
	share := g.MemoryShare()
	if !(share >= MemoryFull) {
		return nil
	}
	return []Finding{{Kind: FindingMemoryPreempt, GPU: g.Name(),
		Reason: fmt.Sprintf("PREEMPTING with %s memory %s full (%.1f of %.1f GiB): the KV cache cannot grow",
			g.Name(), percent(share), g.MemoryUsedBytes/(1<<30), g.MemoryTotalBytes/(1<<30)),
		Action: "cap max_num_seqs, or add VRAM (tensor parallel) or replicas"}}
}

func percent(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func plural(n float64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%.0f %ss", n, what)
}
