package e2e

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// The three sources read the same pages: a page scraped directly, the
// same page as a Prometheus server scraping it every second stores it,
// and the same page recorded and replayed. The pages do not change while
// they are read (the fleet's clock stands still), so every scrape of a
// target is the same page and the three Samples must be equal: every
// figure known on one side known on the others, to 1e-6. Rates and
// quantiles over a window are left out on purpose: they depend on where
// each source's samples fall, and they are computed from these Samples
// by the one analysis.

// threeWays reads each target (a metrics URL) directly, through a real
// Prometheus scraping it at 1 s, and from a recording of it; each slice is
// in the order of urls. also, when set, is given the Prometheus source
// while it runs.
func threeWays(t *testing.T, urls []string, also func(*promsource.Source)) (direct, prom, replayed []catalogue.Sample) {
	t.Helper()
	server := startPrometheusURLs(t, time.Second, urls)
	targets := parseTargets(t, urls)
	path := filepath.Join(t.TempDir(), "parity.vtrec")
	rec, err := record.Create(path, record.Options{Interval: time.Second, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		body, contentType := get(t, tg.URL)
		s, err := page.NewIngester().Ingest(body, contentType)
		if err != nil {
			t.Fatalf("%s: %v", tg.URL, err)
		}
		direct = append(direct, s)
		rec.Page(scrape.Page{Target: tg, Time: time.Now(), Body: body, ContentType: contentType})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	replayed = replay(t, path, len(urls))
	server.WaitForWindow(3 * time.Second)
	return direct, throughPrometheus(t, server.URL(), urls, also), replayed
}

// get fetches a page.
func get(t *testing.T, u string) ([]byte, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %v, status %d", u, err, resp.StatusCode)
	}
	return body, resp.Header.Get("Content-Type")
}

// replay reads the first frame of each target of a recording, as the
// replay reads it.
func replay(t *testing.T, path string, n int) []catalogue.Sample {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c := record.NewCursor(r)
	defer c.Close()
	out := make([]catalogue.Sample, n)
	for i := range n {
		if len(r.Frames(i)) == 0 {
			t.Fatalf("target %d: no frame recorded", i)
		}
		out[i] = c.Sample(i, 0)
	}
	return out
}

// throughPrometheus reads the newest sample of each target from the
// server, by its instance (host:port), as --prometheus does.
func throughPrometheus(t *testing.T, server string, urls []string, also func(*promsource.Source)) []catalogue.Sample {
	t.Helper()
	src, err := promsource.New(promsource.Config{URL: server, Interval: time.Second, Window: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = src.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-src.Refresh()
	if also != nil {
		also(src)
	}
	byName := map[string]catalogue.Sample{}
	for _, r := range src.Readings(nil) {
		if n := len(r.Samples); n > 0 {
			byName[r.Target] = r.Samples[n-1]
		}
	}
	out := make([]catalogue.Sample, len(urls))
	for i, raw := range urls {
		u, _ := url.Parse(raw)
		s, ok := byName[u.Host]
		if !ok {
			t.Fatalf("Prometheus has no replica %s (status %+v)", u.Host, src.Status())
		}
		out[i] = s
	}
	return out
}

// checkHistory checks the history Prometheus gives of each target (by
// instance) against the direct reading of its page, for the charted
// gauges and rates: a page that does not change has its gauges' values
// and rates of 0 (quantiles of no new requests are unknown). A chart of a
// figure the page has (not derived from others) must be known.
func checkHistory(t *testing.T, src *promsource.Source, urls []string) {
	t.Helper()
	hist, err := src.History(t.Context(), 5*time.Second, 5)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]catalogue.HistoryPoint{}
	for _, th := range hist {
		byName[th.Target] = th.Points[len(th.Points)-1]
	}
	compared := 0
	for _, raw := range urls {
		u, _ := url.Parse(raw)
		body, ct := get(t, raw)
		s, err := page.NewIngester().Ingest(body, ct)
		if err != nil {
			t.Fatal(err)
		}
		for f, c := range catalogue.Charts {
			v, have := s.Total.Scalars[c.Scalar], byName[u.Host].Values[f]
			if c.Op == catalogue.ChartQuantile || math.IsNaN(v) || s.Derived.Has(c.Figure()) {
				continue
			}
			if c.Op == catalogue.ChartRate {
				v = 0
			}
			if !sameNum(v, have) {
				t.Errorf("%s: history of %v (chart %d) %v, want %v", u.Host, c.Scalar, f, have, v)
			}
			compared++
		}
	}
	if compared < 3*len(urls) {
		t.Errorf("%d charted figures compared for %d targets: the history proves little", compared, len(urls))
	}
}

// sameSample lists where got differs from want: a figure known on one
// side and not on the other, or of another value.
func sameSample(want, got *catalogue.Sample) []string {
	var diffs []string
	num := func(what string, a, b float64) {
		if !sameNum(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s %v, %v", what, a, b))
		}
	}
	if want.Err != "" || got.Err != "" {
		return []string{fmt.Sprintf("errors %q, %q", want.Err, got.Err)}
	}
	num("KV capacity", want.KVCapacityTokens, got.KVCapacityTokens)
	num("process start", want.ProcessStartTime, got.ProcessStartTime)
	num("RSS", want.ProcessRSSBytes, got.ProcessRSSBytes)
	num("GC", want.GCCollections, got.GCCollections)
	num("HTTP requests", want.HTTPRequests, got.HTTPRequests)
	if want.Model != got.Model || want.EngineKind != got.EngineKind || want.Role != got.Role || want.Router != got.Router ||
		want.Derived != got.Derived || want.LoRA.Present != got.LoRA.Present || want.HasVLLM != got.HasVLLM {
		diffs = append(diffs, fmt.Sprintf("model %q %q, engine %v %v, role %v %v, router %v %v, derived %b %b, LoRA %v %v, vLLM %v %v",
			want.Model, got.Model, want.EngineKind, got.EngineKind, want.Role, got.Role, want.Router, got.Router,
			want.Derived, got.Derived, want.LoRA.Present, got.LoRA.Present, want.HasVLLM, got.HasVLLM))
	}
	diffs = append(diffs, sameSeries("total", &want.Total, &got.Total)...)
	if len(want.Engines) != len(got.Engines) {
		return append(diffs, fmt.Sprintf("%d engines, %d", len(want.Engines), len(got.Engines)))
	}
	for i := range want.Engines {
		diffs = append(diffs, sameSeries("engine "+want.Engines[i].Name, &want.Engines[i].Series, &got.Engines[i].Series)...)
	}
	return diffs
}

// sameSeries lists where two series differ.
func sameSeries(what string, want, got *catalogue.Series) []string {
	var diffs []string
	num := func(fig string, a, b float64) {
		if !sameNum(a, b) {
			diffs = append(diffs, fmt.Sprintf("%s: %s %v, %v", what, fig, a, b))
		}
	}
	for k := range catalogue.NumScalars {
		num(k.String(), want.Scalars[k], got.Scalars[k])
	}
	for r := range catalogue.NumFinishReasons {
		num("finished "+catalogue.FinishReasonNames[r], want.Finished[r], got.Finished[r])
	}
	for h := range catalogue.NumHistograms {
		a, b := want.Histograms[h], got.Histograms[h]
		if a.Present() != b.Present() || !slices.Equal(a.Bounds, b.Bounds) {
			diffs = append(diffs, fmt.Sprintf("%s: %v present %v, %v; bounds %v, %v", what, h, a.Present(), b.Present(), a.Bounds, b.Bounds))
			continue
		}
		num(h.String()+" count", a.Count, b.Count)
		num(h.String()+" sum", a.Sum, b.Sum)
		for i := range a.Counts {
			num(fmt.Sprintf("%v bucket %g", h, a.Bounds[i]), a.Counts[i], b.Counts[i])
		}
	}
	if len(want.SpecAcceptedPerPos) != len(got.SpecAcceptedPerPos) {
		return append(diffs, fmt.Sprintf("%s: accepted by position %v, %v", what, want.SpecAcceptedPerPos, got.SpecAcceptedPerPos))
	}
	for p := range want.SpecAcceptedPerPos {
		num(fmt.Sprintf("accepted at position %d", p), want.SpecAcceptedPerPos[p], got.SpecAcceptedPerPos[p])
	}
	return diffs
}

// sameNum: both unknown, or both known and equal to 1e-6.
func sameNum(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) == math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(a))
}

// paritySignals are the figures the newest vLLM exports that a source
// once lost: the fleet must show them, or the test proves nothing.
var paritySignals = []catalogue.Scalar{catalogue.SleepLevel, catalogue.WaitingCapacity, catalogue.WaitingDeferred}

// TestSourcesReadAlike: a simulated fleet of every engine the simulator
// impersonates, vLLM with its newest names (asleep, speculating, with
// waiting by reason), reads the same directly, through Prometheus and
// from a recording.
func TestSourcesReadAlike(t *testing.T) {
	engines := sim.Engines()
	frozen := time.Now()
	fleet, err := sim.NewFleet(sim.Options{Replicas: len(engines) + 1, Scenario: sim.Mixed, Seed: 32, VLLMVersion: sim.Latest,
		Clock: func() time.Time { return frozen },
		Configure: func(i int, c *sim.ReplicaConfig) {
			c.Engine = engines[i%len(engines)]
			if c.Engine == sim.EngineVLLM {
				c.SpecTokens, c.SpecAcceptance = 3, 0.7
			}
			if i == len(engines) { // a second vLLM replica, asleep
				c.SleepLevel, c.Engines = 1, 1
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	urls := testutil.ServeFleet(t.Context(), t, fleet)
	direct, prom, replayed := threeWays(t, urls, func(src *promsource.Source) { checkHistory(t, src, urls) })
	for i, u := range urls {
		name := fmt.Sprintf("%s (%s)", u, engines[i%len(engines)])
		for _, d := range sameSample(&direct[i], &prom[i]) {
			t.Errorf("%s: directly, through Prometheus: %s", name, d)
		}
		for _, d := range sameSample(&direct[i], &replayed[i]) {
			t.Errorf("%s: directly, replayed: %s", name, d)
		}
	}
	vllm, asleep := direct[0].Total, direct[len(engines)].Total
	for _, k := range paritySignals {
		if math.IsNaN(vllm.Scalars[k]) && math.IsNaN(asleep.Scalars[k]) {
			t.Errorf("the fleet does not show %v: the comparison proves nothing of it", k)
		}
	}
	if asleep.Scalars[catalogue.SleepLevel] != 1 || len(vllm.SpecAcceptedPerPos) == 0 {
		t.Errorf("sleep level %v, accepted by position %v: want 1 and some", asleep.Scalars[catalogue.SleepLevel], vllm.SpecAcceptedPerPos)
	}
}

// startPrometheusURLs is testutil.StartPrometheus for the metrics URLs of
// targets whose paths may differ (TensorRT-LLM's /prometheus/metrics):
// each is scraped at its own path.
func startPrometheusURLs(t testing.TB, scrape time.Duration, urls []string) *testutil.Prometheus {
	t.Helper()
	var targets []string
	cfg := "  - job_name: vllm\n    static_configs:\n"
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, u.Host)
		cfg += fmt.Sprintf("      - targets: [%q]\n        labels: {__metrics_path__: %q}\n", u.Host, u.Path)
	}
	return testutil.StartPrometheusJobs(t, scrape, targets, cfg)
}
