package promsource

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// quantileFigures are the figures read off a histogram's buckets, by
// histogram, for the comparison of the two paths.
func quantileFigures(f *analysis.Figures) map[catalogue.Histogram]analysis.Quantiles {
	return map[catalogue.Histogram]analysis.Quantiles{
		catalogue.TTFT: f.TTFT, catalogue.ITL: f.ITL, catalogue.E2E: f.E2E, catalogue.QueueTime: f.Queue,
		catalogue.PrefillTime: f.Prefill, catalogue.DecodeTime: f.Decode,
		catalogue.PreemptionsPerRequest: f.PreemptionsPerRequest, catalogue.NIXLTransferTime: f.NIXLTransfer,
	}
}

// samePaths fails where a replica judged from raw buckets and the same
// replica judged from the server's buckets differ: a figure read off the
// buckets (to 1e-6), the state, its reasons or its action. The server
// evaluates only the judged histograms' buckets; every histogram's are
// read raw for the replica wanted: the others' quantiles must be n/a for
// the other replicas (their means and counts, from _sum and _count, the
// same).
func samePaths(t *testing.T, round int, raw, lean *analysis.Report, judged []catalogue.Histogram, wanted string) (quantilesKnown int) {
	t.Helper()
	if len(raw.Replicas) != len(lean.Replicas) {
		t.Fatalf("round %d: %d replicas raw, %d from the server's buckets", round, len(raw.Replicas), len(lean.Replicas))
	}
	for i := range raw.Replicas {
		r, l := &raw.Replicas[i], &lean.Replicas[i]
		if r.Target != l.Target {
			t.Fatalf("round %d: replica %d is %s raw, %s from the server's buckets", round, i, r.Target, l.Target)
		}
		lq := quantileFigures(&l.Figures)
		for name, rq := range quantileFigures(&r.Figures) {
			if !slices.Contains(judged, name) && r.Target != wanted {
				if lq[name].P50.Known() || lq[name].P99.Known() || !sameFigure(lq[name].Mean, float64(rq.Mean), rq.Mean.Known()) ||
					!sameFigure(lq[name].Observations, float64(rq.Observations), rq.Observations.Known()) {
					t.Errorf("round %d, %s: %s is not judged: from the server, p50 %v, p99 %v (want n/a), mean %v of %v (raw %v of %v)",
						round, r.Target, name, lq[name].P50, lq[name].P99, lq[name].Mean, lq[name].Observations, rq.Mean, rq.Observations)
				}
				continue
			}
			for _, c := range []struct {
				what string
				a, b analysis.Num
			}{{"p50", rq.P50, lq[name].P50}, {"p90", rq.P90, lq[name].P90}, {"p99", rq.P99, lq[name].P99},
				{"mean", rq.Mean, lq[name].Mean}, {"observations", rq.Observations, lq[name].Observations},
				{"p99 bucket upper", rq.P99Bucket.Upper, lq[name].P99Bucket.Upper}} {
				if !sameFigure(c.b, float64(c.a), c.a.Known()) {
					t.Errorf("round %d, %s: %s %s raw %v, from the server's buckets %v", round, r.Target, name, c.what, c.a, c.b)
				}
			}
			if rq.P99.Known() {
				quantilesKnown++
			}
		}
		if !sameFigure(l.Figures.Goodput, float64(r.Figures.Goodput), r.Figures.Goodput.Known()) {
			t.Errorf("round %d, %s: goodput raw %v, from the server's buckets %v", round, r.Target, r.Figures.Goodput, l.Figures.Goodput)
		}
		// The same state, for the same reasons: the texts are compared with
		// their digits masked, since a figure equal to 1e-6 may still
		// round to another last digit (206 ms and 207 ms for 0.2065).
		if r.State != l.State || masked(r.Action) != masked(l.Action) || masked(strings.Join(r.Reasons, "\n")) != masked(strings.Join(l.Reasons, "\n")) {
			t.Errorf("round %d, %s: raw %s %q %q; from the server's buckets %s %q %q", round, r.Target,
				r.State, r.Reasons, r.Action, l.State, l.Reasons, l.Action)
		}
	}
	return quantilesKnown
}

// masked is a text with every digit replaced by #.
func masked(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, s)
}

// TestBucketsFromPrometheus: a fleet over the threshold is read with the
// buckets left to a real Prometheus, and judged as the same fleet read
// raw from the same server at the same times: every figure read off the
// buckets equal to 1e-6, the same states with the same reasons (the
// hysteresis carried on each side). The replicas serve two data-parallel
// engines each, whose buckets both paths sum.
func TestBucketsFromPrometheus(t *testing.T) {
	testutil.PrometheusTool(t, "prometheus")
	fleet, err := sim.NewFleet(sim.Options{Replicas: 6, Scenario: sim.Mixed, Seed: 11,
		Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = 2 }})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	urls := testutil.ServeFleet(t.Context(), t, fleet)
	instances := make([]string, len(urls))
	for i, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = pu.Host
	}
	prom := testutil.StartPrometheus(t, itScrape, instances)
	prom.WaitForWindow(itWindow + 2*itScrape)

	clock := testutil.NewClock(time.Now())
	acfg := analysis.DefaultConfig()
	acfg.Window = itWindow
	// Refreshes only when asked (an interval of a minute), each at the
	// clock's time: a refresh at the time of the one before reads whole.
	base := Config{URL: prom.URL(), Selector: `{job="vllm"}`, Interval: time.Minute, Window: itWindow, Now: clock.Now}
	rawCfg, leanCfg := base, base
	rawCfg.BucketsAbove = -1
	leanCfg.BucketsAbove = len(instances) - 1
	// The server evaluates the buckets the states read, as vtop asks it to.
	judged := analysis.JudgedHistograms(acfg)
	leanCfg.Histograms = judged
	raw, lean := runSource(t, rawCfg), runSource(t, leanCfg)

	var prevRaw, prevLean *analysis.Report
	compared, known := 0, 0
	for round := range 8 {
		clock.Add(time.Since(clock.Now()))
		rr, rat := evaluated(raw)
		lr, lat := evaluated(lean)
		if !rat.Equal(lat) {
			// A sample on a window's edge moves one source's time back by
			// a millisecond (avoidEdge): not the same evaluation.
			t.Logf("round %d: evaluated at %s and %s, not compared", round, rat, lat)
			prevRaw, prevLean = nil, nil
			continue
		}
		rawRep := analysis.Analyze(rat, rr, acfg, prevRaw)
		leanRep := analysis.Analyze(lat, lr, acfg, prevLean)
		known += samePaths(t, round, &rawRep, &leanRep, judged, "")
		prevRaw, prevLean = &rawRep, &leanRep
		compared++
		time.Sleep(itInterval * 7 / 10)
	}
	if compared < 5 || known == 0 {
		t.Fatalf("%d rounds compared with %d p99s known: want 5 or more, with quantiles", compared, known)
	}
	rs, ls := raw.Stats(), lean.Stats()
	if rs.Bucketless || !ls.Bucketless || ls.BucketRows == 0 {
		t.Errorf("raw source bucketless %v; lean source bucketless %v with %d rows", rs.Bucketless, ls.Bucketless, ls.BucketRows)
	}
	// The first round may read whole again (the clock not yet moved from
	// the start's refresh); the others are increments.
	if increments := ls.Refreshes - ls.FullReads; increments < compared-1 {
		t.Errorf("lean source: %d full reads in %d refreshes, want increments after the first", ls.FullReads, ls.Refreshes)
	}
	t.Logf("raw path: %d series read at the last refresh; server's buckets: %d series and %d bucket rows", rs.Series, ls.Series, ls.BucketRows)
	checkWanted(t, raw, lean, clock, acfg, judged, instances[0])
	if st := lean.Status(); !st.OK() || len(st.Warnings) > 0 {
		t.Errorf("lean source status %+v: want OK, with no warning (the buckets are the server's by design)", st)
	}
}

// evaluated refreshes the source and returns its readings with the time
// they were evaluated at, from one refresh.
func evaluated(src *Source) ([]catalogue.Readings, time.Time) {
	<-src.Refresh()
	return src.ReadingsAt(nil)
}

// TestBucketQueries: the buckets' queries carry the selector, group by the
// labels a scrape target's series are built under, and cover every
// summarised histogram once.
func TestBucketQueries(t *testing.T) {
	tests := []struct {
		groupBy, matchers string
		wantBy            string
	}{
		{"", `job="vllm"`, "sum by (pod, instance, job, le)"},
		{"instance", "", "sum by (instance, job, le)"},
		{"job", `namespace="prod"`, "sum by (job, instance, le)"},
	}
	for _, tt := range tests {
		q := newQueries(tt.matchers, time.Second, grouper{by: tt.groupBy}, true)
		exprs := q.buckets(30*time.Second, summarised)
		if len(exprs) != bucketSplit {
			t.Fatalf("%d queries, want %d", len(exprs), bucketSplit)
		}
		all := strings.Join(exprs, "\n")
		if !strings.Contains(all, tt.wantBy) || !strings.Contains(all, "[30s]") {
			t.Errorf("group by %q: no %q over [30s] in\n%s", tt.groupBy, tt.wantBy, all)
		}
		if tt.matchers != "" && strings.Count(all, tt.matchers) != strings.Count(all, "{__name__") {
			t.Errorf("matchers %s on %d of %d selectors", tt.matchers, strings.Count(all, tt.matchers), strings.Count(all, "{__name__"))
		}
		for _, h := range summarised {
			if n := strings.Count(all, `"`+labelHistogram+`", "`+h.String()+`"`); n != 1 {
				t.Errorf("histogram %s tagged %d times", h, n)
			}
		}
		for _, re := range q.halves {
			if strings.Contains(re, "_bucket") {
				t.Errorf("raw read of a bucketless source reads buckets: %s", re)
			}
		}
	}
}

// TestBucketQueriesOfSomeHistograms: the buckets' queries ask for the
// histograms configured and no other, in at most bucketSplit queries
// and none empty; a histogram vtop reads no quantiles of is passed over.
func TestBucketQueriesOfSomeHistograms(t *testing.T) {
	tests := []struct {
		config      []catalogue.Histogram
		wantQueries int
		want        []catalogue.Histogram
	}{
		{nil, bucketSplit, summarised},
		{[]catalogue.Histogram{catalogue.TTFT}, 1, []catalogue.Histogram{catalogue.TTFT}},
		{[]catalogue.Histogram{catalogue.TTFT, catalogue.ITL, catalogue.PrefillTime, catalogue.NIXLTransferTime}, bucketSplit,
			[]catalogue.Histogram{catalogue.TTFT, catalogue.ITL, catalogue.PrefillTime, catalogue.NIXLTransferTime}},
		{[]catalogue.Histogram{catalogue.ITL, catalogue.PromptLength}, 1, []catalogue.Histogram{catalogue.ITL}},
		{[]catalogue.Histogram{}, 0, nil},
	}
	for _, tt := range tests {
		cfg := Config{Histograms: tt.config}.withDefaults()
		exprs := newQueries("", time.Second, grouper{}, true).buckets(30*time.Second, cfg.Histograms)
		if len(exprs) != tt.wantQueries {
			t.Errorf("histograms %v: %d queries, want %d", tt.config, len(exprs), tt.wantQueries)
		}
		all := strings.Join(exprs, "\n")
		for _, e := range exprs {
			if strings.TrimSpace(e) == "" {
				t.Errorf("histograms %v: an empty query", tt.config)
			}
		}
		for h := range catalogue.NumHistograms {
			tagged := strings.Count(all, `"`+labelHistogram+`", "`+h.String()+`"`)
			if want := slices.Contains(tt.want, h); (tagged == 1) != want || tagged > 1 {
				t.Errorf("histograms %v: %s tagged %d times, want it %v", tt.config, h, tagged, want)
			}
		}
	}
}

// TestReadBuckets: rows land on their scrape target and histogram; a
// replica of several targets sums them by bound.
func TestReadBuckets(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	row := func(instance, h, le string, v float64) *model.SampleStream {
		return &model.SampleStream{Metric: model.Metric{"instance": model.LabelValue(instance), "job": "vllm",
			labelHistogram: model.LabelValue(h), "le": model.LabelValue(le)},
			Values: []model.SamplePair{{Timestamp: model.TimeFromUnixNano(at.UnixNano()), Value: model.SampleValue(v)}}}
	}
	m := model.Matrix{row("a:1", "ttft", "0.5", 3), row("a:1", "ttft", "+Inf", 4), row("b:1", "ttft", "0.5", 1),
		row("b:1", "ttft", "+Inf", 2), row("a:1", "itl", "+Inf", 9), row("a:1", "unknown", "+Inf", 9), row("a:1", "ttft", "x", 9)}
	g := grouper{}
	got := readBuckets(decodedOf(m), g, at, 30*time.Second)
	a := got[g.key(labelsOf(m[0].Metric))]
	if a == nil || len(got) != 2 || len(a.Histograms[catalogue.TTFT]) != 2 || len(a.Histograms[catalogue.ITL]) != 1 || !a.At.Equal(at) {
		t.Fatalf("read %+v", got)
	}
	sum := sumBuckets([]*catalogue.WindowBuckets{a, nil, got[g.key(labelsOf(m[2].Metric))]})
	want := []catalogue.BucketIncrease{{Upper: 0.5, Increase: 4}, {Upper: math.Inf(1), Increase: 6}}
	if !slices.Equal(sum.Histograms[catalogue.TTFT], want) || len(sum.Histograms[catalogue.ITL]) != 1 {
		t.Errorf("summed %v, want %v", sum.Histograms[catalogue.TTFT], want)
	}
	if sumBuckets([]*catalogue.WindowBuckets{nil}) != nil {
		t.Error("no buckets summed into some")
	}
}

// checkWanted: the replica wanted (a detail view's) gets its raw buckets
// again, so its prompt-length heatmap and its engines' quantiles, and the
// same figures as the raw path; the others still have none.
func checkWanted(t *testing.T, raw, lean *Source, clock *testutil.Clock, acfg analysis.Config, judged []catalogue.Histogram, wanted string) {
	t.Helper()
	lean.SetWanted([]string{wanted})
	for range 3 {
		clock.Add(time.Since(clock.Now()))
		rr, rat := evaluated(raw)
		lr, lat := evaluated(lean)
		if !rat.Equal(lat) {
			continue
		}
		rawRep, leanRep := analysis.Analyze(rat, rr, acfg, nil), analysis.Analyze(lat, lr, acfg, nil)
		samePaths(t, -1, &rawRep, &leanRep, judged, wanted)
		for i := range leanRep.Replicas {
			r := &leanRep.Replicas[i]
			heatmap := r.Point.PromptLengthBounds != nil
			engineP99 := len(r.Engines) > 0 && r.Engines[0].Figures.TTFT.P99.Known()
			if want := r.Target == wanted; heatmap != want || engineP99 != want {
				t.Errorf("%s (wanted %v): heatmap %v, engine p99 TTFT known %v", r.Target, want, heatmap, engineP99)
			}
		}
		return
	}
	t.Fatal("no two evaluations at one time")
}
