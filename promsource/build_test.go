package promsource

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// t0 is the evaluation time of the tests below.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// series is one raw series over the window: labels and (seconds before
// t0, value) pairs.
func series(labels map[string]string, points ...[2]float64) *model.SampleStream {
	m := model.Metric{}
	for k, v := range labels {
		m[model.LabelName(k)] = model.LabelValue(v)
	}
	ss := &model.SampleStream{Metric: m}
	for _, p := range points {
		ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(-time.Duration(p[0] * float64(time.Second))).UnixNano()), Value: model.SampleValue(p[1])})
	}
	return ss
}

// lbl builds labels: name, then key/value pairs.
func lbl(name string, kv ...string) map[string]string {
	m := map[string]string{"__name__": name, "job": "vllm", "instance": "10.0.0.1:8000"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// steady is a counter growing by per every second over the 10 s window.
func steady(labels map[string]string, start, per float64) *model.SampleStream {
	var pts [][2]float64
	for s := 9.5; s >= 0; s-- {
		pts = append(pts, [2]float64{s, start + per*(9.5-s)})
	}
	return series(labels, pts...)
}

// testSource is a source that is never run: the tests feed it answers.
func testSource(t *testing.T, cfg Config) *Source {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = "http://prometheus.invalid:9090"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// analyze feeds one refresh to a source and evaluates it at t0 over 10 s.
func analyze(t *testing.T, s *Source, raw, up model.Matrix) analysis.Report {
	t.Helper()
	s.apply(t0, 10*time.Second, fetched{raw: decodedOf(raw), up: decodedOf(up)})
	cfg := analysis.DefaultConfig()
	cfg.Window = 10 * time.Second
	return analysis.Analyze(t0, s.snapshot(), cfg, nil)
}

// Every spelling of vLLM's names reads as the same figure.
func TestPrefixesReadAlike(t *testing.T) {
	for _, prefix := range catalogue.Prefixes {
		s := testSource(t, Config{})
		rep := analyze(t, s, model.Matrix{
			steady(lbl(prefix+"generation_tokens_total"), 1000, 50),
			series(lbl(prefix+"num_requests_running"), [2]float64{0.5, 7}),
		}, nil)
		if len(rep.Replicas) != 1 {
			t.Fatalf("prefix %q: %d replicas", prefix, len(rep.Replicas))
		}
		f := rep.Replicas[0].Figures
		if math.Abs(float64(f.GenerationTokensPerSecond)-50) > 1e-9 || f.Running != 7 {
			t.Errorf("prefix %q: generation %v/s, running %v; want 50, 7", prefix, f.GenerationTokensPerSecond, f.Running)
		}
	}
}

// A legacy name is read only when the replica lacks the current one.
func TestLegacyNamesGiveWay(t *testing.T) {
	tests := []struct {
		name   string
		raw    model.Matrix
		wantKV float64
	}{
		{"current only", model.Matrix{series(lbl("vllm:kv_cache_usage_perc"), [2]float64{1, 0.4})}, 0.4},
		{"legacy only", model.Matrix{series(lbl("vllm:gpu_cache_usage_perc"), [2]float64{1, 0.3})}, 0.3},
		{"both", model.Matrix{
			series(lbl("vllm:gpu_cache_usage_perc"), [2]float64{1, 0.3}),
			series(lbl("vllm:kv_cache_usage_perc"), [2]float64{1, 0.4}),
		}, 0.4},
	}
	for _, tt := range tests {
		rep := analyze(t, testSource(t, Config{}), tt.raw, nil)
		if got := float64(rep.Replicas[0].Figures.KVCacheUsage); math.Abs(got-tt.wantKV) > 1e-12 {
			t.Errorf("%s: KV usage %v, want %v", tt.name, got, tt.wantKV)
		}
	}
}

// Replicas are the values of the grouping label: pod where present, else
// instance, or the label asked for.
func TestGrouping(t *testing.T) {
	raw := model.Matrix{
		series(lbl("vllm:num_requests_running", "pod", "vllm-a", "instance", "10.0.0.1:8000", "zone", "z1"), [2]float64{1, 1}),
		series(lbl("vllm:num_requests_running", "pod", "vllm-b", "instance", "10.0.0.2:8000", "zone", "z1"), [2]float64{1, 2}),
		series(lbl("vllm:num_requests_running", "instance", "10.0.0.3:8000", "zone", "z2"), [2]float64{1, 4}),
	}
	tests := []struct {
		groupBy string
		want    map[string]float64 // running by replica
	}{
		{"", map[string]float64{"vllm-a": 1, "vllm-b": 2, "10.0.0.3:8000": 4}},
		{"instance", map[string]float64{"10.0.0.1:8000": 1, "10.0.0.2:8000": 2, "10.0.0.3:8000": 4}},
		{"zone", map[string]float64{"z1": 3, "z2": 4}},
	}
	for _, tt := range tests {
		rep := analyze(t, testSource(t, Config{GroupBy: tt.groupBy}), raw, nil)
		got := map[string]float64{}
		for _, r := range rep.Replicas {
			got[r.Target] = float64(r.Figures.Running)
		}
		if len(got) != len(tt.want) {
			t.Errorf("group by %q: replicas %v, want %v", tt.groupBy, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("group by %q: replicas %v, want %v", tt.groupBy, got, tt.want)
				break
			}
		}
	}
}

// Two engines keep their split; the replica is their sum (KV usage their
// mean), histograms included.
func TestEnginesKeepTheirSplit(t *testing.T) {
	var raw model.Matrix
	for e, per := range []float64{10, 30} {
		eng := string(rune('0' + e))
		raw = append(raw,
			steady(lbl("vllm:generation_tokens_total", "engine", eng), 100, per),
			series(lbl("vllm:kv_cache_usage_perc", "engine", eng), [2]float64{1, 0.2 * float64(e+1)}),
		)
		for _, le := range []string{"0.1", "1", "+Inf"} {
			raw = append(raw, steady(lbl("vllm:time_to_first_token_seconds_bucket", "engine", eng, "le", le), 0, per/10))
		}
	}
	rep := analyze(t, testSource(t, Config{}), raw, nil)
	r := rep.Replicas[0]
	if len(r.Engines) != 2 || r.Engines[0].Engine != "0" || r.Engines[1].Engine != "1" {
		t.Fatalf("engines %+v", r.Engines)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"replica tokens/s", float64(r.Figures.GenerationTokensPerSecond), 40},
		{"engine 0 tokens/s", float64(r.Engines[0].Figures.GenerationTokensPerSecond), 10},
		{"engine 1 tokens/s", float64(r.Engines[1].Figures.GenerationTokensPerSecond), 30},
		{"replica KV", float64(r.Figures.KVCacheUsage), 0.3},
		{"engine 1 KV", float64(r.Engines[1].Figures.KVCacheUsage), 0.4},
		// every observation is in the lowest bucket: p50 = 0.05 by interpolation
		{"replica TTFT p50", float64(r.Figures.TTFT.P50), 0.05},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// A series that starts inside the window is extrapolated as PromQL does
// over the whole range (half an interval back, or to its zero point), not
// over the part of the window since its first sample.
func TestSeriesStartingInsideTheWindow(t *testing.T) {
	tests := []struct {
		name   string
		points [][2]float64 // seconds before t0, value
	}{
		{"new counter far from zero", [][2]float64{{4, 500}, {3, 520}, {2, 540}, {1, 560}, {0, 580}}},
		{"new counter from zero", [][2]float64{{4, 0}, {3, 20}, {2, 40}, {1, 60}, {0, 80}}},
		{"new counter near zero", [][2]float64{{4, 10}, {3, 30}, {2, 50}, {1, 70}, {0.2, 90}}},
		{"whole window", [][2]float64{{9.6, 5}, {7, 20}, {5, 40}, {3, 60}, {1, 80}}},
	}
	for _, tt := range tests {
		rep := analyze(t, testSource(t, Config{}), model.Matrix{series(lbl("vllm:prompt_tokens_total"), tt.points...)}, nil)
		var ts []int64
		var vs []float64
		for _, p := range tt.points {
			ts = append(ts, t0.Add(-time.Duration(p[0]*float64(time.Second))).UnixMilli())
			vs = append(vs, p[1])
		}
		want, _ := analysis.ExtrapolatedRate(ts, vs, t0.Add(-10*time.Second).UnixMilli(), t0.UnixMilli(), true, true)
		if got := float64(rep.Replicas[0].Figures.PromptTokensPerSecond); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: %v/s, rate() over the whole range is %v/s", tt.name, got, want)
		}
	}
}

// Failed scrapes (up = 0) of the replica's own target turn it DOWN with
// the reason; another target of the same pod (a sidecar) does not; a
// replica with nothing for a while is DOWN with the time of its last
// sample.
func TestDownReasons(t *testing.T) {
	podLbl := func(name, inst string, kv ...string) map[string]string {
		return lbl(name, append([]string{"pod", "p", "instance", inst}, kv...)...)
	}
	counter := steady(podLbl("vllm:prompt_tokens_total", "10.0.0.1:8000"), 0, 5)
	tests := []struct {
		name    string
		raw, up model.Matrix
		want    string // in the error; "" for not DOWN
	}{
		{"healthy", model.Matrix{counter}, model.Matrix{series(podLbl("up", "10.0.0.1:8000"), [2]float64{0.5, 1})}, ""},
		{"up is 0", model.Matrix{steady(podLbl("vllm:prompt_tokens_total", "10.0.0.1:8000"), 0, 5)},
			model.Matrix{series(podLbl("up", "10.0.0.1:8000"), [2]float64{1.5, 1}, [2]float64{0.4, 0})}, "up is 0"},
		{"a sidecar's up is 0", model.Matrix{counter},
			model.Matrix{series(podLbl("up", "10.0.0.1:9100"), [2]float64{0.4, 0})}, ""},
		{"series stopped", model.Matrix{series(podLbl("vllm:prompt_tokens_total", "10.0.0.1:8000"), [2]float64{9, 1}, [2]float64{8, 2}, [2]float64{7, 3})},
			nil, "no samples since 11:59:53"},
	}
	for _, tt := range tests {
		rep := analyze(t, testSource(t, Config{Interval: time.Second}), tt.raw, tt.up)
		r := rep.Replicas[0]
		if (tt.want == "") != (r.State != analysis.StateDown) || !strings.Contains(r.Error, tt.want) {
			t.Errorf("%s: %s, error %q; want error with %q", tt.name, r.State, r.Error, tt.want)
		}
	}
}

// Known replicas missing from a refresh stay, DOWN with their last data,
// until Forget has passed since their last sample.
func TestVanishedReplicas(t *testing.T) {
	s := testSource(t, Config{Interval: time.Second, Forget: time.Minute})
	s.apply(t0, 10*time.Second, fetched{raw: decodedOf(model.Matrix{
		steady(lbl("vllm:num_requests_running", "pod", "gone"), 3, 0),
		steady(lbl("vllm:num_requests_running", "pod", "stays"), 3, 0),
	})})
	stays := fetched{raw: decodedOf(model.Matrix{steady(lbl("vllm:num_requests_running", "pod", "stays"), 3, 0)})}
	tests := []struct {
		after    time.Duration
		wantGone bool // still listed
	}{
		{30 * time.Second, true},
		{2 * time.Minute, false},
	}
	for _, tt := range tests {
		at := t0.Add(tt.after)
		s.apply(at, 10*time.Second, shift(stays, tt.after))
		rep := analysis.Analyze(at, s.snapshot(), analysis.DefaultConfig(), nil)
		var gone *analysis.ReplicaReport
		for i := range rep.Replicas {
			if rep.Replicas[i].Target == "gone" {
				gone = &rep.Replicas[i]
			}
		}
		if (gone != nil) != tt.wantGone {
			t.Errorf("after %s: gone listed %v, want %v", tt.after, gone != nil, tt.wantGone)
			continue
		}
		if gone != nil && (gone.State != analysis.StateDown || !strings.Contains(gone.Error, "no samples since 11:59:59") || gone.Figures.Running != 3) {
			t.Errorf("after %s: gone is %s, error %q, running %v; want DOWN, its last sample time and its last data", tt.after, gone.State, gone.Error, gone.Figures.Running)
		}
	}
}

// shift moves every sample of f later by d.
func shift(f fetched, d time.Duration) fetched {
	var out matrix
	for _, ss := range f.raw {
		c := &sampleStream{Metric: ss.Metric}
		for _, p := range ss.Values {
			c.Values = append(c.Values, model.SamplePair{Timestamp: p.Timestamp.Add(d), Value: p.Value})
		}
		out = append(out, c)
	}
	return fetched{raw: out}
}

// Label values from the server are made safe where they enter.
func TestLabelsAreSanitized(t *testing.T) {
	evil := "\x1b[2Jpod\x1b]0;pwned\x07"
	rep := analyze(t, testSource(t, Config{}), model.Matrix{
		steady(lbl("vllm:generation_tokens_total", "pod", evil, "model_name", evil, "engine", "0"), 0, 1),
		steady(lbl("vllm:generation_tokens_total", "pod", evil, "model_name", evil, "engine", evil), 0, 1),
	}, nil)
	r := rep.Replicas[0]
	texts := []string{r.Target, r.Model}
	for _, e := range r.Engines {
		texts = append(texts, e.Engine)
	}
	if len(texts) != 4 {
		t.Fatalf("texts %q", texts)
	}
	for _, s := range texts {
		if !safetext.IsSafe(s) {
			t.Errorf("%q is not safe to draw", s)
		}
	}
}
