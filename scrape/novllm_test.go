package scrape

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/testutil"
)

// A server that answers with process and Go metrics but the families of no
// inference engine (vLLM started with --disable-log-stats, or the wrong
// port) is DOWN with that reason, not a replica whose every figure is 0;
// its neighbour is unaffected.
func TestPageWithoutVLLMMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total", Help: "Requests."}, []string{"handler", "method", "status"})
	requests.WithLabelValues("/v1/completions", "POST", "2xx").Add(1234)
	reg.MustRegister(requests)
	noVLLM, err := ParseTarget(testutil.StartServer(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP))
	if err != nil {
		t.Fatal(err)
	}
	healthy, err := ParseTarget(testutil.StartServer(t, testutil.ServePage(testutil.HealthyPage, "text/plain; version=0.0.4")))
	if err != nil {
		t.Fatal(err)
	}
	p := scrapeOnce(t, []Target{healthy, noVLLM}, Options{Interval: 10 * time.Second, Timeout: time.Second})

	sample := latest(t, p, 1)
	if !sample.OK() || sample.HasEngineMetrics() {
		t.Fatalf("sample: err %q, engine %v; want a good scrape without engine metrics", sample.Err, sample.EngineKind)
	}
	if sample.HTTPRequests != 1234 {
		t.Errorf("http_requests_total = %v, want 1234", sample.HTTPRequests)
	}
	inputs := p.Readings(nil)
	report := analysis.Analyze(newest(inputs), inputs, analysis.DefaultConfig(), nil)
	bad, good := report.Replicas[1], report.Replicas[0]
	if bad.State != analysis.StateDown || len(bad.Reasons) == 0 || !strings.Contains(bad.Reasons[0], "no inference-engine metrics on this page") {
		t.Errorf("page without engine metrics: %v %q, want down with \"no inference-engine metrics on this page\"", bad.State, bad.Reasons)
	}
	if bad.Running.Known() || bad.KVCacheUsage.Known() {
		t.Errorf("figures of a page without engine metrics: running %v, KV %v; want n/a", bad.Running, bad.KVCacheUsage)
	}
	if good.State == analysis.StateDown || good.Running.Float() != 5 {
		t.Errorf("healthy neighbour: %v, running %v", good.State, good.Running)
	}
}
