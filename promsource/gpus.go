package promsource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/gpu"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/promql"
)

// maxGPUSeries caps the DCGM series one refresh reads: a Prometheus of a
// whole cluster may hold the GPUs of every team.
const maxGPUSeries = 100000

// dcgmState is what the DCGM query of the newest refresh read: the GPUs
// under the fleet, from the same server, at the same evaluation time.
type dcgmState struct {
	mu   sync.Mutex
	gpus []device.GPU
	note string
	read bool // a refresh has asked at least once
}

// GPUs returns the GPUs of the DCGM series (dcgm-exporter, DCGM 3 or 4
// names) the newest refresh read, and a note when the query failed or
// found none. Safe to call while Run runs.
func (s *Source) GPUs() ([]device.GPU, string) {
	s.dcgm.mu.Lock()
	defer s.dcgm.mu.Unlock()
	if !s.dcgm.read {
		return nil, "reading the DCGM series"
	}
	return append([]device.GPU(nil), s.dcgm.gpus...), s.dcgm.note
}

// startGPUs asks for the DCGM series at the refresh's evaluation time,
// beside the fleet's own queries: one instant query per refresh, however
// many GPUs, when Config.GPUs asks for it. The returned wait blocks until it is in.
func (s *Source) startGPUs(ctx context.Context, at time.Time) (wait func()) {
	if !s.cfg.GPUs {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gs, note := s.readGPUs(ctx, at)
		if ctx.Err() != nil {
			return
		}
		s.dcgm.mu.Lock()
		defer s.dcgm.mu.Unlock()
		s.dcgm.read, s.dcgm.note = true, note
		if note == "" || len(gs) > 0 {
			s.dcgm.gpus = gs
		}
	}()
	return func() { <-done }
}

// readGPUs runs the DCGM query. A failure is a note: the fleet's figures
// do not depend on it.
func (s *Source) readGPUs(ctx context.Context, at time.Time) ([]device.GPU, string) {
	v, _, err := s.query(ctx, promql.DCGMQuery(), at)
	if err != nil {
		// The note's source is named after the server: not again here.
		return nil, "DCGM series: " + problemOf(err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, "DCGM series: the answer is not an instant vector"
	}
	if len(vec) > maxGPUSeries {
		return nil, fmt.Sprintf("DCGM series: %d series, more than the cap of %d", len(vec), maxGPUSeries)
	}
	if len(vec) == 0 {
		return nil, "no DCGM series on " + s.name + " (no dcgm-exporter scraped)"
	}
	series := make([]gpu.Series, 0, len(vec))
	for _, smp := range vec {
		labels := make(map[string]string, len(smp.Metric))
		for k, lv := range smp.Metric {
			if k != model.MetricNameLabel {
				labels[string(k)] = string(lv)
			}
		}
		series = append(series, gpu.Series{Family: string(smp.Metric[model.MetricNameLabel]), Labels: labels, Value: float64(smp.Value)})
	}
	return gpu.FromDCGMSeries(series, "Prometheus "+s.name, true), ""
}
