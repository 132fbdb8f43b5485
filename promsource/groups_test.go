package promsource

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// promRate is PromQL's rate() of one series of (seconds before t0, value)
// points over the 10 s window ending at t0.
func promRate(points [][2]float64) float64 {
	var ts []int64
	var vs []float64
	for _, p := range points {
		ts = append(ts, t0.Add(-time.Duration(p[0]*float64(time.Second))).UnixMilli())
		vs = append(vs, p[1])
	}
	r, _ := analysis.ExtrapolatedRate(ts, vs, t0.Add(-10*time.Second).UnixMilli(), t0.UnixMilli(), true, true)
	return r
}

// counterPoints is a counter scraped every second from offset seconds
// before t0 back over the window, starting at start and growing by per,
// dropping to zero at the scrape resetAt seconds before t0 (when > 0).
func counterPoints(offset, start, per, resetAt float64) [][2]float64 {
	var pts [][2]float64
	v := start
	for s := offset + 9; s >= offset-1e-9; s-- {
		if resetAt > 0 && math.Abs(s-resetAt) < 1e-9 {
			v = 0
		}
		pts = append(pts, [2]float64{s, v})
		v += per
	}
	return pts
}

// A group of several instances (--group-by job) sums what adds up and
// nothing else: its rates are the sum of each instance's rate() (as
// PromQL's sum(rate(x[w])) is), whatever their scrape times and counter
// values; its gauges are the sum of each instance's newest value; it says
// how many instances it holds; a restart of one instance is named as
// that instance's, and the group did not restart.
func TestGroupsSumInstances(t *testing.T) {
	type inst struct {
		name    string
		offset  float64 // seconds before t0 of its newest scrape
		start   float64 // its counter's first value in the window
		per     float64 // its counter's growth per scrape
		resetAt float64 // seconds before t0 of a restart; 0 for none
		running float64
	}
	tests := []struct {
		name        string
		instances   []inst
		wantRestart string // in a warning; "" for none
	}{
		{"one instance is the replica itself", []inst{{"10.0.0.1:8000", 0.3, 100, 5, 0, 7}}, ""},
		{"staggered scrapes, unlike counter values", []inst{
			{"10.0.0.1:8000", 0.1, 1_000_000, 5, 0, 7},
			{"10.0.0.2:8000", 0.45, 20, 2, 0, 3},
			{"10.0.0.3:8000", 0.8, 500_000, 11, 0, 12},
		}, ""},
		{"one instance restarts", []inst{
			{"10.0.0.1:8000", 0.1, 1_000_000, 5, 0, 7},
			{"10.0.0.2:8000", 0.45, 90_000, 2, 4.45, 3},
		}, "10.0.0.2:8000 restarted at 11:59:55"},
	}
	for _, tt := range tests {
		var raw model.Matrix
		wantRate, wantRunning := 0.0, 0.0
		for _, in := range tt.instances {
			pts := counterPoints(in.offset, in.start, in.per, in.resetAt)
			raw = append(raw,
				series(lbl("vllm:generation_tokens_total", "instance", in.name), pts...),
				series(lbl("vllm:num_requests_running", "instance", in.name), [2]float64{in.offset + 1, 999}, [2]float64{in.offset, in.running}))
			if in.resetAt > 0 {
				// The new process's start time, as a real server says.
				var start [][2]float64
				for _, p := range pts {
					v := 1000.0
					if p[0] <= in.resetAt+1e-9 {
						v = 2000
					}
					start = append(start, [2]float64{p[0], v})
				}
				raw = append(raw, series(lbl("process_start_time_seconds", "instance", in.name), start...))
			}
			wantRate += promRate(pts)
			wantRunning += in.running
		}
		rep := analyze(t, testSource(t, Config{GroupBy: "job"}), raw, nil)
		if len(rep.Replicas) != 1 || rep.Replicas[0].Target != "vllm" {
			t.Fatalf("%s: replicas %+v, want the one group vllm", tt.name, rep.Replicas)
		}
		r := rep.Replicas[0]
		if got := float64(r.Figures.GenerationTokensPerSecond); math.Abs(got-wantRate) > 1e-9*wantRate {
			t.Errorf("%s: %v tokens/s, the sum of the instances' rate() is %v", tt.name, got, wantRate)
		}
		if r.Figures.Running != analysis.Num(wantRunning) {
			t.Errorf("%s: running %v, the sum of the newest values is %v", tt.name, r.Figures.Running, wantRunning)
		}
		if want := len(tt.instances); r.Instances != want && (want > 1 || r.Instances > 1) {
			t.Errorf("%s: %d instances, want %d", tt.name, r.Instances, want)
		}
		if r.Restarted || r.State == analysis.StateDown {
			t.Errorf("%s: group %s, restarted %v: a restart of one instance is not the group's", tt.name, r.State, r.Restarted)
		}
		warned := strings.Join(r.Warnings, "\n")
		if (tt.wantRestart == "") != !strings.Contains(warned, "restarted") || !strings.Contains(warned, tt.wantRestart) {
			t.Errorf("%s: warnings %q, want the restart %q", tt.name, r.Warnings, tt.wantRestart)
		}
	}
}

// One instance of a group failing (up is 0) does not turn the group DOWN:
// the group says which instance fails and keeps the others' figures; all
// failing turns it DOWN.
func TestGroupWithAFailingInstance(t *testing.T) {
	good := func(inst string) *model.SampleStream {
		return series(lbl("vllm:generation_tokens_total", "instance", inst), counterPoints(0.2, 100, 5, 0)...)
	}
	up := func(inst string, v float64) *model.SampleStream {
		return series(lbl("up", "instance", inst), [2]float64{1.2, 1}, [2]float64{0.1, v})
	}
	tests := []struct {
		name     string
		up       model.Matrix
		wantDown bool
		wantWarn string
	}{
		{"all up", model.Matrix{up("a:1", 1), up("b:1", 1)}, false, ""},
		{"one down", model.Matrix{up("a:1", 1), up("b:1", 0)}, false, "b:1"},
		{"all down", model.Matrix{up("a:1", 0), up("b:1", 0)}, true, ""},
	}
	for _, tt := range tests {
		rep := analyze(t, testSource(t, Config{GroupBy: "job"}), model.Matrix{good("a:1"), good("b:1")}, tt.up)
		r := rep.Replicas[0]
		if (r.State == analysis.StateDown) != tt.wantDown {
			t.Errorf("%s: %s (%q), want DOWN %v", tt.name, r.State, r.Error, tt.wantDown)
		}
		if tt.wantWarn != "" && !strings.Contains(strings.Join(r.Warnings, "\n"), tt.wantWarn) {
			t.Errorf("%s: warnings %q, want one naming %s", tt.name, r.Warnings, tt.wantWarn)
		}
	}
}

// After a gap at the start of the window (Prometheus itself restarted),
// the instances' first samples are further from the window's edge than
// rate() extrapolates: the group's counters still never go down (no
// restart is read into the gap) and its rate is still the sum of the
// instances' rate().
func TestGroupAfterAGapAtTheWindowStart(t *testing.T) {
	var raw model.Matrix
	want := 0.0
	for i, per := range []float64{5, 0.3, 2} {
		var pts [][2]float64
		for k := range 7 {
			s := 7.3 - 0.4*float64(i) - float64(k)
			pts = append(pts, [2]float64{s, 100*float64(i) + per*float64(k)})
		}
		raw = append(raw, series(lbl("vllm:num_preemptions_total", "instance", fmt.Sprintf("10.0.0.%d:8000", i+1)), pts...))
		want += promRate(pts)
	}
	rep := analyze(t, testSource(t, Config{GroupBy: "job"}), raw, nil)
	r := rep.Replicas[0]
	if got := float64(r.Figures.PreemptionsPerSecond); math.Abs(got-want) > 1e-9*want || r.Restarted {
		t.Errorf("%v preemptions/s, restarted %v (%q); the sum of the instances' rate() is %v", got, r.Restarted, r.Reasons, want)
	}
}

// The instances of a group sum as every whole does (catalogue.Merge): the
// sleep level is the least asleep, and an instance whose buckets differ
// from the group's is left out of that histogram's sum, and named.
func TestGroupCombinesByTheCatalogueRules(t *testing.T) {
	instance := func(bounds, counts []float64, sleep float64) []catalogue.Sample {
		var out []catalogue.Sample
		for i := range 2 {
			s := catalogue.NewSample(t0.Add(time.Duration(i-1) * time.Second))
			s.HasVLLM = true
			s.Total.Scalars[catalogue.SleepLevel] = sleep
			s.Total.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: bounds, Counts: counts, Sum: 1, Count: counts[len(counts)-1]}
			out = append(out, s)
		}
		return out
	}
	got := combine([]string{"a:1", "b:1"}, [][]catalogue.Sample{
		instance([]float64{1, 2}, []float64{3, 5}, 0),
		instance([]float64{1, 4}, []float64{1, 2}, 2),
	}, time.Time{}, t0, nil)
	s := got[len(got)-1]
	if v := s.Total.Scalars[catalogue.SleepLevel]; v != 0 {
		t.Errorf("sleep level %v, want 0: one instance is awake", v)
	}
	if b := s.Total.Histograms[catalogue.TTFT]; !slices.Equal(b.Counts, []float64{3, 5}) || b.Count != 5 {
		t.Errorf("TTFT %+v, want instance a:1's alone", b)
	}
	if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, "instance b:1: buckets of vllm:time_to_first_token_seconds") {
		t.Errorf("warnings %q, want one naming b:1's buckets", s.Warnings)
	}
}

// The counters of a group's instances beside the scalars sum too: each
// speculative position over the instances that report it, and the API
// server's garbage collections and HTTP requests.
func TestGroupSumsSpeculativePositionsAndProcessCounters(t *testing.T) {
	instance := func(positions int, base float64) []catalogue.Sample {
		var out []catalogue.Sample
		for i := range 2 {
			s := catalogue.NewSample(t0.Add(time.Duration(i-1) * time.Second))
			s.HasVLLM = true
			for p := range positions {
				s.Total.SpecAcceptedPerPos = append(s.Total.SpecAcceptedPerPos, base+float64(10*p+i))
			}
			s.GCCollections, s.HTTPRequests = base+float64(i), 2*base+float64(i)
			out = append(out, s)
		}
		return out
	}
	got := combine([]string{"a:1", "b:1"}, [][]catalogue.Sample{instance(2, 100), instance(1, 200)}, time.Time{}, t0, nil)
	s := got[len(got)-1]
	if want := []float64{302, 111}; !slices.Equal(s.Total.SpecAcceptedPerPos, want) {
		t.Errorf("speculative positions %v, want %v", s.Total.SpecAcceptedPerPos, want)
	}
	if s.GCCollections != 302 || s.HTTPRequests != 602 {
		t.Errorf("GC %v, HTTP %v, want 302 and 602", s.GCCollections, s.HTTPRequests)
	}
}
