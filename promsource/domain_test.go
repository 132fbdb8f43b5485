package promsource

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
)

// TestValuesOutOfDomain: Prometheus stores whatever a server wrote; a
// value out of its figure's domain (catalogue.Fold.Takes, the rule the
// page parser follows too) makes the figure n/a with a warning naming the
// family, and no state rests on it.
func TestValuesOutOfDomain(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name    string
		raw     model.Matrix
		figure  func(f *analysis.Figures) float64
		warning string
	}{
		{
			name:    "running NaN",
			raw:     model.Matrix{series(lbl("vllm:num_requests_running"), [2]float64{0.5, nan})},
			figure:  func(f *analysis.Figures) float64 { return float64(f.Running) },
			warning: "vllm:num_requests_running: value NaN is out of its domain (not a finite number)",
		},
		{
			name:    "running 1e308",
			raw:     model.Matrix{series(lbl("vllm:num_requests_running"), [2]float64{0.5, 1e308})},
			figure:  func(f *analysis.Figures) float64 { return float64(f.Running) },
			warning: "vllm:num_requests_running: value 1e+308 is out of its domain (past 2^53",
		},
		{
			name:    "KV cache +Inf",
			raw:     model.Matrix{series(lbl("vllm:kv_cache_usage_perc"), [2]float64{0.5, inf})},
			figure:  func(f *analysis.Figures) float64 { return float64(f.KVCacheUsage) },
			warning: "vllm:kv_cache_usage_perc: value +Inf is out of its domain (not a finite number)",
		},
		{
			name:    "KV cache 1.5",
			raw:     model.Matrix{series(lbl("vllm:kv_cache_usage_perc"), [2]float64{0.5, 1.5})},
			figure:  func(f *analysis.Figures) float64 { return float64(f.KVCacheUsage) },
			warning: "vllm:kv_cache_usage_perc: value 1.5 is out of its domain (a fraction is within 0–1)",
		},
		{
			name: "preemptions NaN",
			raw: model.Matrix{
				series(lbl("vllm:num_preemptions_total"), [2]float64{9.5, nan}, [2]float64{5, nan}, [2]float64{0.5, nan}),
				series(lbl("vllm:num_requests_running"), [2]float64{0.5, 3}),
			},
			figure:  func(f *analysis.Figures) float64 { return float64(f.PreemptionsPerSecond) },
			warning: "vllm:num_preemptions_total: value NaN is out of its domain (not a finite number)",
		},
	}
	// A histogram whose counts alternate 1e308 and 1e307: past 2^53,
	// refused as the page parser refuses them, so that no drop between
	// them reads as a restart.
	alternating := func(name string, kv ...string) *model.SampleStream {
		var pts [][2]float64
		for s := 9.5; s >= 0; s-- {
			pts = append(pts, [2]float64{s, []float64{1e308, 1e307}[int(s)%2]})
		}
		return series(lbl(name, kv...), pts...)
	}
	tests = append(tests, struct {
		name    string
		raw     model.Matrix
		figure  func(f *analysis.Figures) float64
		warning string
	}{
		name: "TTFT counts alternating 1e308 and 1e307",
		raw: model.Matrix{
			alternating("vllm:time_to_first_token_seconds_bucket", "le", "0.5"),
			alternating("vllm:time_to_first_token_seconds_bucket", "le", "+Inf"),
			alternating("vllm:time_to_first_token_seconds_count"),
			alternating("vllm:time_to_first_token_seconds_sum"),
			steady(lbl("vllm:num_requests_running"), 1, 0),
		},
		figure:  func(f *analysis.Figures) float64 { return float64(f.TTFT.P50) },
		warning: "vllm:time_to_first_token_seconds: count 1e+30",
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := analyze(t, testSource(t, Config{}), tt.raw, nil)
			r := rep.Replicas[0]
			if v := tt.figure(&r.Figures); !math.IsNaN(v) {
				t.Errorf("figure %v, want n/a", v)
			}
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, tt.warning) }) {
				t.Errorf("warnings %q, want one holding %q", r.Warnings, tt.warning)
			}
			if r.Restarted {
				t.Errorf("restarted at %s on values that are n/a (reasons %q)", r.RestartedAt, r.Reasons)
			}
			if r.State == analysis.StatePreempting || r.State == analysis.StateFull {
				t.Errorf("state %v on a figure that is n/a (reasons %q)", r.State, r.Reasons)
			}
		})
	}
}
