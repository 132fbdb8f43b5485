package monitor

import (
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/gpu/device"
)

// GPUInput is the monitor's second input beside its Source: the GPUs
// under the fleet, read by collectors of their own (nvidia-smi, a
// dcgm-exporter, the DCGM series of a Prometheus server). It is read once
// per report and must answer at once from what its collectors last read:
// a missing or hanging GPU source never delays a report.
type GPUInput interface {
	// GPUs returns the latest GPUs, each joined (device.Join) to one of
	// targets where the evidence names it, and the state of every GPU
	// source.
	GPUs(targets []string) ([]device.GPU, []analysis.GPUSource)
}

// SetGPUs makes every report carry the GPUs of in, joined to its
// replicas, with their evidence in the replicas' reasons. Call it before
// Run.
func (m *Monitor) SetGPUs(in GPUInput) { m.gpus = in }

// AddGPUs puts what in reads into r (nothing when in is nil): for a report
// made outside a Monitor, such as Once's.
func AddGPUs(r *analysis.Report, in GPUInput) { addGPUs(r, nil, in) }

// addGPUs is AddGPUs with the previous report, whose faults are not news.
func addGPUs(r, prev *analysis.Report, in GPUInput) {
	if in == nil {
		return
	}
	targets := make([]string, len(r.Replicas))
	for i := range r.Replicas {
		targets[i] = r.Replicas[i].Target
	}
	gs, sources := in.GPUs(targets)
	analysis.ApplyGPUs(r, gs, sources)
	if prev != nil {
		analysis.AddFaultEvents(r, prev)
	}
}
