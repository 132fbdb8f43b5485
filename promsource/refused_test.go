package promsource

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// TestRefusedIsNotAbsent: a store's values out of their figure's domain
// mark the figure refused in the samples (catalogue.Sample.Refused), as
// the page parser marks them, so that a replica whose running and
// waiting were all NaN is not judged healthy or idle; a family the store
// does not hold is no refusal.
func TestRefusedIsNotAbsent(t *testing.T) {
	nan := math.NaN()
	// Readings every second over the 20 s before t0: a value v, or a
	// counter growing by per a second.
	over := func(labels map[string]string, v, per float64) *model.SampleStream {
		var pts [][2]float64
		for s := 19.5; s >= 0; s-- {
			pts = append(pts, [2]float64{s, v + per*(19.5-s)})
		}
		return series(labels, pts...)
	}
	every := func(name string, v float64) *model.SampleStream { return over(lbl(name), v, 0) }
	ttft := []*model.SampleStream{
		over(lbl("vllm:time_to_first_token_seconds_bucket", "le", "0.5"), 0, 2),
		over(lbl("vllm:time_to_first_token_seconds_bucket", "le", "+Inf"), 0, 2),
		over(lbl("vllm:time_to_first_token_seconds_count"), 0, 2),
		over(lbl("vllm:time_to_first_token_seconds_sum"), 0, 0.2),
	}
	var gauges catalogue.FigureSet
	gauges.Add(catalogue.ScalarFigure(catalogue.Running))
	gauges.Add(catalogue.ScalarFigure(catalogue.Waiting))
	tests := []struct {
		name    string
		raw     model.Matrix
		refused catalogue.FigureSet
		state   analysis.State
	}{
		{"running and waiting NaN while first tokens come", append(model.Matrix{every("vllm:num_requests_running", nan), every("vllm:num_requests_waiting", nan)}, ttft...),
			gauges, analysis.StateUnjudged},
		{"running and waiting not in the store, first tokens coming", ttft, 0, analysis.StateHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSource(t, Config{})
			s.apply(t0, 20*time.Second, fetched{raw: decodedOf(tt.raw)})
			readings := s.snapshot()
			if len(readings) != 1 || len(readings[0].Samples) == 0 {
				t.Fatalf("readings %+v", readings)
			}
			if newest := readings[0].Samples[len(readings[0].Samples)-1]; newest.Refused != tt.refused {
				t.Errorf("refused %b, want %b", newest.Refused, tt.refused)
			}
			cfg := analysis.DefaultConfig()
			cfg.Window = 20 * time.Second
			r := analysis.Analyze(t0, readings, cfg, nil).Replicas[0]
			if r.State != tt.state {
				t.Errorf("state %v, want %v (reasons %q)", r.State, tt.state, r.Reasons)
			}
		})
	}
}
