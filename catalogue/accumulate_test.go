package catalogue

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// value is one series' value as a source hands it to the Accumulator.
type value struct {
	family, engine string
	labels         map[string]string
	v              float64
}

// addAll folds the values in, each resolved through its row as a source
// resolves it.
func addAll(t *testing.T, a *Accumulator, values []value) {
	t.Helper()
	for _, x := range values {
		row, ok := LookupFamily([]byte(x.family))
		if !ok {
			t.Fatalf("%s: not in the alias table", x.family)
		}
		a.Family(row)
		to := Reads[row].Resolve(func(name string) string { return x.labels[name] })
		var e *EngineAcc
		if to.To.PerEngine() {
			e = a.Engine(x.engine)
		}
		a.Add(row, to, e, x.v)
	}
}

// TestAccumulatorRules: the rules every source's samples are built by,
// one figure at a time.
func TestAccumulatorRules(t *testing.T) {
	sleep := func(state string, v float64) value {
		return value{family: "vllm:engine_sleep_state", labels: map[string]string{LabelSleepState: state}, v: v}
	}
	tests := []struct {
		name   string
		values []value
		figure func(s *Sample) float64
		want   float64
	}{
		{"KV cache usage of one engine's series is their mean",
			[]value{{family: "vllm:kv_cache_usage_perc", v: 0.25}, {family: "vllm:kv_cache_usage_perc", v: 0.75}},
			func(s *Sample) float64 { return s.Total.Scalars[KVCacheUsage] }, 0.5},
		{"running requests sum",
			[]value{{family: "vllm:num_requests_running", v: 2}, {family: "vllm:num_requests_running", v: 3}},
			func(s *Sample) float64 { return s.Total.Scalars[Running] }, 5},
		{"the process start is the latest",
			[]value{{family: "process_start_time_seconds", v: 100}, {family: "process_start_time_seconds", v: 300}, {family: "process_start_time_seconds", v: 200}},
			func(s *Sample) float64 { return s.ProcessStartTime }, 300},
		{"the sleep level is the deepest whose state is 1",
			[]value{sleep("discard_all", 1), sleep("awake", 0), sleep("weights_offloaded", 1)},
			func(s *Sample) float64 { return s.Total.Scalars[SleepLevel] }, 2},
		{"a value out of its domain is n/a, not 0",
			[]value{{family: "vllm:num_requests_running", v: math.NaN()}},
			func(s *Sample) float64 { return s.Total.Scalars[Running] }, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var notes Notes
			a := NewAccumulator(time.Time{}, &notes)
			addAll(t, &a, tt.values)
			s := a.Finish()
			if got := tt.figure(&s); got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAccumulatorRefusalSaidOnce: a refused value marks its figure
// refused in its own sample, and the samples sharing their Notes (a
// replica's scrapes from one read) say the family once.
func TestAccumulatorRefusalSaidOnce(t *testing.T) {
	var notes Notes
	for _, v := range []float64{-1, -2} {
		a := NewAccumulator(time.Time{}, &notes)
		addAll(t, &a, []value{{family: "vllm:num_requests_running", v: v}})
		if s := a.Finish(); !s.Refused.Has(ScalarFigure(Running)) {
			t.Errorf("value %v: refused %b, want running", v, s.Refused)
		}
	}
	if len(notes.Warnings) != 1 || !strings.HasPrefix(notes.Warnings[0], "vllm:num_requests_running: value -1 ") {
		t.Errorf("warnings %q, want the first refusal alone", notes.Warnings)
	}
}

// TestAccumulatorLoRANewest: of several series of lora_requests_info, the
// newest (the highest value) is the state, whatever their order.
func TestAccumulatorLoRANewest(t *testing.T) {
	var notes Notes
	a := NewAccumulator(time.Time{}, &notes)
	for _, x := range []struct {
		at      float64
		running string
	}{{5, "new"}, {3, "old"}, {4, "older than new"}} {
		a.AddLoRA(x.at, func() LoRA { return LoRA{Present: true, Running: []string{x.running}} })
	}
	if s := a.Finish(); !slices.Equal(s.LoRA.Running, []string{"new"}) {
		t.Errorf("running adapters %q, want the newest series' [new]", s.LoRA.Running)
	}
}

// TestAccumulatorEngines: named engines are listed by length then name,
// the unlabeled series summed into the total but not listed; an engine
// whose buckets differ from the others' is left out of that histogram's
// total, and said.
func TestAccumulatorEngines(t *testing.T) {
	var notes Notes
	a := NewAccumulator(time.Time{}, &notes)
	ttft, _ := LookupFamily([]byte("vllm:time_to_first_token_seconds"))
	for i, name := range []string{"10", "9", "0"} {
		addAll(t, &a, []value{{family: "vllm:num_requests_running", engine: name, v: 1}})
		bounds := []float64{1, math.Inf(1)}
		if i == 0 {
			bounds = []float64{2, math.Inf(1)}
		}
		a.AddHistogram(ttft, a.Engine(name), TTFT, Buckets{Bounds: bounds, Counts: []float64{1, 1}, Sum: 1, Count: 1})
	}
	run, _ := LookupFamily([]byte("vllm:num_requests_running"))
	a.Add(run, Fold{To: ToScalar, Which: int(Running)}, a.Unlabeled(), 4)
	s := a.Finish()
	var names []string
	for _, e := range s.Engines {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"0", "9", "10"}) || s.Total.Scalars[Running] != 7 {
		t.Errorf("engines %q running %v, want [0 9 10] and 7", names, s.Total.Scalars[Running])
	}
	if c := s.Total.Histograms[TTFT].Count; c != 2 {
		t.Errorf("TTFT count %v, want 2 (engine 10 left out)", c)
	}
	want := "engines disagree on the buckets of vllm:time_to_first_token_seconds; engine 10 left out of the total"
	if !slices.Contains(notes.Warnings, want) {
		t.Errorf("warnings %q, want %q", notes.Warnings, want)
	}
}
