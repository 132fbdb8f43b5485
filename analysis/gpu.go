package analysis

import (
	"math"
	"slices"
	"strconv"

	"github.com/vtop-dev/vtop/gpu/device"
)

// GPUSource is the state of one source of GPU figures: nvidia-smi on this
// host, a dcgm-exporter, or the DCGM series of a Prometheus server.
type GPUSource struct {
	// Name is "nvidia-smi", the exporter's URL, or "Prometheus URL".
	Name string `json:"name"`
	// GPUs is how many GPUs (or MIG instances) it reports now.
	GPUs int `json:"gpus"`
	// Note says what is wrong with it (missing, failing, down), or what
	// is tried while it starts; "" when all is well. Safe to draw.
	Note string `json:"note,omitempty"`
}

// ApplyGPUs puts the GPUs under the fleet (each GPU's Replica set by
// device.Join) and the state of their sources into a report, and, for
// each replica, the GPU evidence that changes what to do
// (device.Evidence); the state itself is the metrics'. gs is taken over.
func ApplyGPUs(r *Report, gs []device.GPU, sources []GPUSource) {
	if gs == nil {
		gs = []device.GPU{}
	}
	device.Sort(gs)
	r.GPUs, r.GPUSources = gs, sources
	byReplica := map[string][]device.GPU{}
	for _, g := range gs {
		if g.Replica != "" {
			byReplica[g.Replica] = append(byReplica[g.Replica], g)
		}
	}
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		if joined := byReplica[rep.Target]; len(joined) > 0 {
			applyEvidence(rep, joined)
		}
	}
}

// applyEvidence adds one replica's GPU findings to its reasons; a fault,
// the cause of everything else, or a finding that explains the state takes
// the first action, since it changes what to do.
func applyEvidence(rep *ReplicaReport, joined []device.GPU) {
	rep.Reasons = slices.Clone(rep.Reasons) // never append into a slice the analysis may share
	rep.GPUCount = len(joined)
	var util, used, total float64
	utilN := 0
	for _, g := range joined {
		if !math.IsNaN(g.Utilization) {
			util += g.Utilization
			utilN++
		}
		used += g.MemoryUsedBytes
		total += g.MemoryTotalBytes
	}
	rep.GPUUtilization, rep.GPUMemoryUsage = NA, NA
	if utilN > 0 {
		rep.GPUUtilization = Num(util / float64(utilN))
	}
	if total > 0 && !math.IsNaN(used) {
		rep.GPUMemoryUsage = Num(used / total)
	}
	s := device.Situation{
		Full:       rep.State == StateFull,
		Slow:       rep.State == StateSlow,
		Preempting: rep.State == StatePreempting,
		KVUsage:    rep.KVCacheUsage.Float(),
	}
	findings := device.Evidence(joined, s)
	// Faults first: they are the first thing to act on.
	slices.SortStableFunc(findings, func(a, b device.Finding) int {
		return boolRank(b.Fault) - boolRank(a.Fault)
	})
	actionSet := false
	for _, f := range findings {
		switch f.Kind {
		case device.FindingXID, device.FindingRemappedRows:
			if rep.Fault == "" {
				rep.Fault = faultBadge(f, joined)
			}
		}
		if !actionSet && f.Action != "" && (f.Fault || rep.State >= StateSlow) {
			rep.Action, actionSet = f.Action, true
			rep.Reasons = slices.Insert(rep.Reasons, 0, f.Reason) // the action's reason leads: the pane shows it
			continue
		}
		rep.Reasons = append(rep.Reasons, f.Reason)
	}
}

// faultBadge is the short text of a fault's badge: "XID 79", "ROWS".
func faultBadge(f device.Finding, joined []device.GPU) string {
	if f.Kind == device.FindingRemappedRows {
		return "ROW REMAP"
	}
	for _, g := range joined {
		if g.Name() == f.GPU && g.XID > 0 {
			return "XID " + strconv.Itoa(g.XID)
		}
	}
	return "XID"
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ReplicaGPUs returns the GPUs of r joined to target, in the strip's order.
func (r *Report) ReplicaGPUs(target string) []device.GPU {
	var out []device.GPU
	for _, g := range r.GPUs {
		if g.Replica == target {
			out = append(out, g)
		}
	}
	return out
}

// AddFaultEvents adds an event for each replica whose GPU fault badge is
// new since prev: a GPU falling off the bus is news.
func AddFaultEvents(r, prev *Report) {
	before := make(map[string]string, len(prev.Replicas))
	for i := range prev.Replicas {
		before[prev.Replicas[i].Target] = prev.Replicas[i].Fault
	}
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		old, seen := before[rep.Target]
		if rep.Fault == "" || !seen || old == rep.Fault {
			continue
		}
		text := rep.Fault
		if len(rep.Reasons) > 0 {
			text = rep.Reasons[0]
		}
		r.Events = append(r.Events, Event{Time: r.Time, Target: rep.Target, State: rep.State, Text: "GPU fault: " + text})
	}
}
