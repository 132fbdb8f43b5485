package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// simRecording records one simulated replica in virtual time for d at
// 1 s, configured by cfg, as `vtop record` would.
func simRecording(t testing.TB, cfg func(*sim.ReplicaConfig), d time.Duration) *record.Recording {
	t.Helper()
	return simRecordingWith(t, cfg, d, nil)
}

// simRecordingWith is simRecording with the targets dead beside the
// replica: every scrape of theirs failed.
func simRecordingWith(t testing.TB, cfg func(*sim.ReplicaConfig), d time.Duration, dead []scrape.Target) *record.Recording {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 42, Configure: func(_ int, c *sim.ReplicaConfig) { cfg(c) }})
	if err != nil {
		t.Fatal(err)
	}
	target := scrape.Target{Name: "127.0.0.1:8000", URL: "http://127.0.0.1:8000/metrics"}
	start := time.Unix(1_800_000_000, 0)
	path := filepath.Join(t.TempDir(), "r.vtrec")
	rec, err := record.Create(path, record.Options{Targets: append([]scrape.Target{target}, dead...), Interval: time.Second, Start: start, Config: analysis.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	for s := range int(d / time.Second) {
		fleet.Advance(time.Second)
		body, err := fleet.Replicas()[0].Render(expfmt.NewFormat(expfmt.TypeTextPlain))
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(time.Duration(s+1) * time.Second)
		rec.Page(scrape.Page{Target: target, Time: at, Body: body, ContentType: "text/plain; version=0.0.4"})
		for _, d := range dead {
			rec.Page(scrape.Page{Target: d, Time: at, Err: "connection refused"})
		}
	}
	rec.Close()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// longChat is the preempting scenario's traffic: long answers whose KV
// cache outgrows a small cache after admission.
func longChat(kvBlocks int) func(*sim.ReplicaConfig) {
	return func(c *sim.ReplicaConfig) {
		c.NumGPUBlocks = kvBlocks
		c.Workload = sim.Steady(1.1, sim.LongChat)
	}
}

func TestCompare(t *testing.T) {
	testutil.SkipShort(t, "recordings of eight simulated minutes")
	bigKV := simRecording(t, longChat(27000), 8*time.Minute)
	cases := []struct {
		name      string
		candidate *record.Recording
		want      []string // in the verdict
		unfair    bool
	}{
		{"smaller KV cache preempts", simRecording(t, longChat(4096), 8*time.Minute), []string{"preemptions/s", "p99 TTFT ×", "worse under this load"}, false},
		{"twice the load", simRecording(t, func(c *sim.ReplicaConfig) { c.NumGPUBlocks = 27000; c.Workload = sim.Steady(2.2, sim.LongChat) }, 8*time.Minute),
			[]string{"not comparable: its load differs, arrivals ", "req/s)"}, true},
		{"the same run", bigKV, []string{"no difference beyond noise"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Compare(bigKV, c.candidate, "big-kv", "candidate", Options{Skip: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := res.Text(&text); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + text.String())
			for _, w := range c.want {
				if !strings.Contains(res.Verdict, w) {
					t.Errorf("verdict %q lacks %q", res.Verdict, w)
				}
			}
			if c.unfair && (strings.Contains(res.Verdict, "better") || strings.Contains(res.Verdict, "worse")) {
				t.Errorf("verdict %q judges the candidate across different loads", res.Verdict)
			}
			if (len(res.Unfair) > 0) != c.unfair {
				t.Errorf("unfair %v, want %v", res.Unfair, c.unfair)
			}
			if c.unfair && !strings.Contains(text.String(), "warning: arrival rate differs") {
				t.Errorf("no arrival-rate warning in the text")
			}
			var js bytes.Buffer
			if err := res.JSON(&js); err != nil || !json.Valid(js.Bytes()) {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

func TestCompareWindow(t *testing.T) {
	rec := simRecording(t, longChat(27000), 3*time.Minute)
	res, err := Compare(rec, rec, "a", "b", Options{Skip: time.Minute, Length: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Baseline.To.Sub(res.Baseline.From); got < 50*time.Second || got > time.Minute {
		t.Errorf("window of %v, want about a minute", got)
	}
	if _, err := Compare(rec, rec, "a", "b", Options{Skip: time.Hour}); err == nil {
		t.Error("a part beyond the end compared")
	}
}

// The verdict names the trade-off under one load. When the loads differ
// beyond UnfairShare, latency and throughput moved with the load as much
// as with the candidate: the verdict says the loads differ and judges
// neither better nor worse (a candidate offered 3.3× the requests cannot
// be "not better" for a p99 e2e 44 % higher).
func TestVerdictSentence(t *testing.T) {
	cases := []struct {
		gains, losses []string
		loadDiffers   []string
		want          string
	}{
		{[]string{"+4 % generation tok/s"}, []string{"p99 TTFT +35 %", "0.8 preemptions/s"}, nil,
			"candidate: +4 % generation tok/s but p99 TTFT +35 % and 0.8 preemptions/s: not better under this load"},
		{nil, []string{"p99 ITL +20 %"}, nil, "candidate: p99 ITL +20 %: worse under this load"},
		{[]string{"−30 % p99 TTFT"}, nil, nil, "candidate: −30 % p99 TTFT: better under this load"},
		{nil, nil, nil, "candidate: no difference beyond noise under this load"},
		{[]string{"×4.72 generation tok/s", "×3.28 requests/s", "−90 % p99 TTFT"}, []string{"p99 e2e +44 %"},
			[]string{"arrivals ×3.3 (9.1 → 30 req/s)"},
			"candidate: not comparable: its load differs, arrivals ×3.3 (9.1 → 30 req/s); latency and throughput move with the load, so no verdict: compare recordings of the same load"},
		{[]string{"−30 % p99 TTFT"}, nil, []string{"arrivals -40 % (10 → 6 req/s)", "mean prompt +25 % (400 → 500 tokens)"},
			"candidate: not comparable: its load differs, arrivals -40 % (10 → 6 req/s) and mean prompt +25 % (400 → 500 tokens); latency and throughput move with the load, so no verdict: compare recordings of the same load"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := sentence(c.gains, c.losses, c.loadDiffers); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// How the loads differ is said with both figures.
func TestLoadDifferences(t *testing.T) {
	cases := []struct {
		b, c Load
		want []string
	}{
		{Load{ArrivalsPerSecond: 9.1, MeanPromptTokens: 500}, Load{ArrivalsPerSecond: 29.9, MeanPromptTokens: 510}, []string{"arrivals ×3.29 (9.1 → 29.9 req/s)"}},
		{Load{ArrivalsPerSecond: 10, MeanPromptTokens: 400}, Load{ArrivalsPerSecond: 6, MeanPromptTokens: 500}, []string{"arrivals -40 % (10 → 6 req/s)", "mean prompt +25 % (400 → 500 tokens)"}},
		{Load{ArrivalsPerSecond: 10, MeanPromptTokens: 400}, Load{ArrivalsPerSecond: 10.5, MeanPromptTokens: 420}, nil},
		{Load{ArrivalsPerSecond: analysis.NA, MeanPromptTokens: analysis.NA}, Load{ArrivalsPerSecond: 10, MeanPromptTokens: 420}, nil},
	}
	for i, c := range cases {
		if got := loadDifferences(c.b, c.c); strings.Join(got, "; ") != strings.Join(c.want, "; ") {
			t.Errorf("%d: %q, want %q", i, got, c.want)
		}
	}
}

// The load's length quantiles are histogram_quantile over the increase of
// each bucket between the first and the last reading: linear inside the
// bucket of the rank, the last finite bound when the rank is in +Inf, and
// n/a where Prometheus gives none (no +Inf bucket, nothing observed, the
// bounds changed, the histogram absent).
func TestLengthQuantiles(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{100, 1000, inf}
	tests := []struct {
		name        string
		first, last catalogue.Buckets
		p50, p90    analysis.Num
	}{
		{"linear inside the bucket", catalogue.Buckets{Bounds: bounds, Counts: []float64{10, 10, 10}},
			catalogue.Buckets{Bounds: bounds, Counts: []float64{30, 110, 110}}, 437.5, 887.5},
		{"the rank in +Inf", catalogue.Buckets{Bounds: bounds, Counts: []float64{0, 0, 0}},
			catalogue.Buckets{Bounds: bounds, Counts: []float64{1, 2, 100}}, 1000, 1000},
		{"no +Inf bucket", catalogue.Buckets{Bounds: []float64{100, 1000}, Counts: []float64{0, 0}},
			catalogue.Buckets{Bounds: []float64{100, 1000}, Counts: []float64{5, 10}}, analysis.NA, analysis.NA},
		{"nothing observed", catalogue.Buckets{Bounds: bounds, Counts: []float64{5, 5, 5}},
			catalogue.Buckets{Bounds: bounds, Counts: []float64{5, 5, 5}}, analysis.NA, analysis.NA},
		{"the bounds changed", catalogue.Buckets{Bounds: []float64{inf}, Counts: []float64{0}},
			catalogue.Buckets{Bounds: bounds, Counts: []float64{5, 5, 5}}, analysis.NA, analysis.NA},
		{"absent", catalogue.Buckets{}, catalogue.Buckets{}, analysis.NA, analysis.NA},
	}
	same := func(a, b analysis.Num) bool { return a == b || !a.Known() && !b.Known() }
	for _, tt := range tests {
		if p50, p90 := lengthQuantiles(tt.first, tt.last); !same(p50, tt.p50) || !same(p90, tt.p90) {
			t.Errorf("%s: p50 %v, p90 %v; want %v, %v", tt.name, p50, p90, tt.p50, tt.p90)
		}
	}
}
