package analysis

import (
	"cmp"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// storedFrom is what a store answers for the samples' buckets over the
// window [at−window, at]: each bucket's increase() by Prometheus's rule
// (ExtrapolatedRate, tested against Prometheus itself), per histogram.
func storedFrom(samples []catalogue.Sample, at time.Time, window time.Duration) *catalogue.WindowBuckets {
	st := &catalogue.WindowBuckets{At: at, Window: window}
	startMs, endMs := at.Add(-window).UnixMilli(), at.UnixMilli()
	for h := range catalogue.NumHistograms {
		bounds := boundsOfHistog[h]
		for j, upper := range bounds {
			var ts []int64
			var vs []float64
			for _, s := range samples {
				if ms := s.Time.UnixMilli(); ms >= startMs && ms <= endMs && s.Total.Histograms[h].Present() {
					ts, vs = append(ts, ms), append(vs, s.Total.Histograms[h].Counts[j])
				}
			}
			if inc, ok := ExtrapolatedRate(ts, vs, startMs, endMs, true, false); ok {
				st.Histograms[h] = append(st.Histograms[h], catalogue.BucketIncrease{Upper: upper, Increase: inc})
			}
		}
	}
	return st
}

// closeNum: both unknown, or equal to 1e-9 relative.
func closeNum(a, b Num) bool {
	if !a.Known() || !b.Known() {
		return a.Known() == b.Known()
	}
	return math.Abs(float64(a-b)) <= 1e-9*math.Max(1, math.Abs(float64(a)))
}

// sameQuantiles fails where two summaries of one histogram differ.
func sameQuantiles(t *testing.T, name string, raw, stored Quantiles) {
	t.Helper()
	for _, c := range []struct {
		what string
		a, b Num
	}{{"mean", raw.Mean, stored.Mean}, {"p50", raw.P50, stored.P50}, {"p90", raw.P90, stored.P90}, {"p99", raw.P99, stored.P99},
		{"observations", raw.Observations, stored.Observations},
		{"p99 bucket lower", raw.P99Bucket.Lower, stored.P99Bucket.Lower}, {"p99 bucket upper", raw.P99Bucket.Upper, stored.P99Bucket.Upper}} {
		if !closeNum(c.a, c.b) {
			t.Errorf("%s %s: raw %v, stored %v", name, c.what, c.a, c.b)
		}
	}
}

// TestStoredBuckets: a replica whose buckets the store evaluated gets the
// figures and the state of the same replica read raw, over the window the
// store evaluated; over any other window its quantiles are n/a.
func TestStoredBuckets(t *testing.T) {
	slow := chat
	slow.ttft, slow.queue, slow.prefill = 3, 0.2, 2.8
	cfg := DefaultConfig()
	tests := []struct {
		name  string
		steps []step
		// storedAt shifts the store's evaluation from the report's time;
		// storedWindow is its window (cfg.Window when 0).
		storedAt     time.Duration
		storedWindow time.Duration
		scrapes      int // scrapes 5 s apart after the first
		wantState    State
		wantKnown    bool // the p99 TTFT is known from the stored buckets
	}{
		{name: "healthy chat", steps: []step{finishing(4, chat)}, scrapes: 8, wantState: StateHealthy, wantKnown: true},
		{name: "slow TTFT", steps: []step{finishing(4, slow)}, scrapes: 8, wantState: StateSlow, wantKnown: true},
		{name: "full queue", steps: []step{finishing(4, chat), queueing(20, 1), func(s *server, _ int) { s.running = 256 }},
			scrapes: 8, wantState: StateFull, wantKnown: true},
		{name: "buckets reset by a restart", steps: []step{finishing(4, slow), func(s *server, i int) {
			if i == 5 {
				fresh := newServer()
				s.hist = fresh.hist
			}
		}}, scrapes: 8, wantState: StateSlow, wantKnown: true},
		{name: "store evaluated another time", steps: []step{finishing(4, chat)}, scrapes: 8, storedAt: -5 * time.Second, wantKnown: false},
		{name: "store evaluated another window", steps: []step{finishing(4, chat)}, scrapes: 8, storedWindow: 20 * time.Second, wantKnown: false},
		{name: "window shortened to the first scrape", steps: []step{finishing(4, chat)}, scrapes: 3, wantKnown: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running = 40
			samples, now := run(s, tt.scrapes, 5*time.Second, tt.steps...)
			sw := cmp.Or(tt.storedWindow, cfg.Window)
			stored := storedFrom(samples, now.Add(tt.storedAt), sw)
			raw := analyzeOne(samples, now, cfg)
			got := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: withBucketsOnly(samples), Buckets: stored}}, cfg, nil).Replicas[0]
			if got.Figures.TTFT.P99.Known() != tt.wantKnown {
				t.Fatalf("p99 TTFT known %v (%v), want %v", got.Figures.TTFT.P99.Known(), got.Figures.TTFT.P99, tt.wantKnown)
			}
			if !tt.wantKnown {
				// The means come from _sum and _count, read raw: known.
				if !closeNum(raw.Figures.TTFT.Mean, got.Figures.TTFT.Mean) || !got.Figures.TTFT.Mean.Known() {
					t.Errorf("mean TTFT raw %v, stored %v", raw.Figures.TTFT.Mean, got.Figures.TTFT.Mean)
				}
				return
			}
			f, g := &raw.Figures, &got.Figures
			for _, q := range []struct {
				name string
				a, b Quantiles
			}{{"TTFT", f.TTFT, g.TTFT}, {"ITL", f.ITL, g.ITL}, {"E2E", f.E2E, g.E2E}, {"queue", f.Queue, g.Queue},
				{"prefill", f.Prefill, g.Prefill}, {"decode", f.Decode, g.Decode}} {
				sameQuantiles(t, q.name, q.a, q.b)
			}
			if !closeNum(f.Goodput, g.Goodput) || !closeNum(f.MeanPromptTokens, g.MeanPromptTokens) {
				t.Errorf("goodput %v / %v, mean prompt %v / %v", f.Goodput, g.Goodput, f.MeanPromptTokens, g.MeanPromptTokens)
			}
			if raw.State != tt.wantState || got.State != raw.State {
				t.Errorf("state raw %s, stored %s, want %s", raw.State, got.State, tt.wantState)
			}
			if strings.Join(raw.Reasons, "\n") != strings.Join(got.Reasons, "\n") || raw.Action != got.Action {
				t.Errorf("reasons differ:\nraw    %q %q\nstored %q %q", raw.Reasons, raw.Action, got.Reasons, got.Action)
			}
		})
	}
}

// TestStoredBucketsRawFirst: where the samples hold a histogram's
// buckets, the store's are not read; an engine's figures never read the
// replica's stored buckets.
func TestStoredBucketsRawFirst(t *testing.T) {
	cfg := DefaultConfig()
	s := newServer()
	s.running = 40
	samples, now := run(s, 8, 5*time.Second, finishing(4, chat))
	bogus := &catalogue.WindowBuckets{At: now, Window: cfg.Window}
	bogus.Histograms[catalogue.TTFT] = []catalogue.BucketIncrease{{Upper: 100, Increase: 1}, {Upper: inf, Increase: 1}}
	raw := analyzeOne(samples, now, cfg)
	got := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples, Buckets: bogus}}, cfg, nil).Replicas[0]
	if !closeNum(raw.Figures.TTFT.P99, got.Figures.TTFT.P99) {
		t.Errorf("raw buckets present: p99 TTFT %v, want the raw %v", got.Figures.TTFT.P99, raw.Figures.TTFT.P99)
	}

	s = newServer()
	s.engines = []string{"0", "1"}
	samples, now = run(s, 8, 5*time.Second, finishing(4, chat))
	got = Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: withBucketsOnly(samples), Buckets: storedFrom(samples, now, cfg.Window)}}, cfg, nil).Replicas[0]
	if !got.Figures.TTFT.P99.Known() || len(got.Engines) != 2 {
		t.Fatalf("replica p99 TTFT %v, %d engines", got.Figures.TTFT.P99, len(got.Engines))
	}
	if e := got.Engines[0].Figures.TTFT.P99; e.Known() {
		t.Errorf("engine 0 read the replica's stored buckets: p99 TTFT %v", e)
	}
}
