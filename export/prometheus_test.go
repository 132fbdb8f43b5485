package export

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/replay"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// promtoolPath returns the path of promtool, skipping the test when it is
// absent (failing instead under VTOP_REQUIRE_PROMETHEUS).
func promtoolPath(t *testing.T) string {
	t.Helper()
	return testutil.PrometheusTool(t, "promtool")
}

// blocks exports rec and turns it into TSDB blocks with promtool.
func blocks(t *testing.T, promtool string, rec *record.Recording) (dir string, stats Stats) {
	t.Helper()
	om := filepath.Join(t.TempDir(), "export.om")
	f, err := os.Create(om)
	if err != nil {
		t.Fatal(err)
	}
	stats, err = Export(f, rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	dir = t.TempDir()
	out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool refused the export: %v\n%s", err, out)
	}
	return dir, stats
}

// query runs an instant PromQL query and returns the single value, NaN
// when the result is empty.
func query(t *testing.T, base, q string, at time.Time) float64 {
	t.Helper()
	u := base + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("%s: %v %s", q, err, body.Error)
	}
	switch len(body.Data.Result) {
	case 0:
		return math.NaN()
	case 1:
		v, _ := strconv.ParseFloat(body.Data.Result[0].Value[1].(string), 64)
		return v
	}
	t.Fatalf("%s: %d series", q, len(body.Data.Result))
	return 0
}

// TestPrometheusAgrees exports a recording, builds blocks with promtool,
// serves them with a real Prometheus, and checks that PromQL gives, at
// several report times, the figures of the replayed reports.
func TestPrometheusAgrees(t *testing.T) {
	promtool := promtoolPath(t)
	path := simrec.Record(t, sim.Options{Replicas: 2, Scenario: sim.Preempting, Seed: 21}, 240, time.Second)
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	dir, stats := blocks(t, promtool, rec)
	if stats.Samples == 0 || stats.Skipped != 0 {
		t.Fatalf("export stats %+v", stats)
	}
	base := testutil.ServeBlocks(t, dir).URL()

	var reports []analysis.Report
	if err := replay.Reports(rec, replay.Config(rec), func(r analysis.Report) error { reports = append(reports, r); return nil }); err != nil {
		t.Fatal(err)
	}
	type check struct {
		name string
		q    string
		f    func(r *analysis.ReplicaReport) analysis.Num
	}
	checks := []check{
		{"running", `vllm:num_requests_running{instance="$I"}`, func(r *analysis.ReplicaReport) analysis.Num { return r.Running }},
		{"waiting", `vllm:num_requests_waiting{instance="$I"}`, func(r *analysis.ReplicaReport) analysis.Num { return r.Waiting }},
		{"kv usage", `vllm:kv_cache_usage_perc{instance="$I"}`, func(r *analysis.ReplicaReport) analysis.Num { return r.KVCacheUsage }},
		{"generation tok/s", `rate(vllm:generation_tokens_total{instance="$I"}[$W])`, func(r *analysis.ReplicaReport) analysis.Num { return r.GenerationTokensPerSecond }},
		{"prompt tok/s", `rate(vllm:prompt_tokens_total{instance="$I"}[$W])`, func(r *analysis.ReplicaReport) analysis.Num { return r.PromptTokensPerSecond }},
		{"preemptions/s", `rate(vllm:num_preemptions_total{instance="$I"}[$W])`, func(r *analysis.ReplicaReport) analysis.Num { return r.PreemptionsPerSecond }},
		{"TTFT p99", `histogram_quantile(0.99, rate(vllm:time_to_first_token_seconds_bucket{instance="$I"}[$W]))`, func(r *analysis.ReplicaReport) analysis.Num { return r.TTFT.P99 }},
		{"ITL p50", `histogram_quantile(0.5, rate(vllm:inter_token_latency_seconds_bucket{instance="$I"}[$W]))`, func(r *analysis.ReplicaReport) analysis.Num { return r.ITL.P50 }},
		{"e2e p90", `histogram_quantile(0.9, rate(vllm:e2e_request_latency_seconds_bucket{instance="$I"}[$W]))`, func(r *analysis.ReplicaReport) analysis.Num { return r.E2E.P90 }},
	}
	compared := 0
	for _, idx := range []int{40, 95, 150, 200, len(reports) - 1} {
		r := &reports[idx]
		window := strconv.Itoa(int(r.WindowSeconds)) + "s"
		for ri := range r.Replicas {
			rep := &r.Replicas[ri]
			for _, c := range checks {
				q := strings.NewReplacer("$I", rep.Target, "$W", window).Replace(c.q)
				got, want := query(t, base, q, r.Time), c.f(rep).Float()
				if !close(got, want) {
					t.Errorf("report %d %s %s: PromQL %v, vtop %v", idx, rep.Target, c.name, got, want)
				}
				if !math.IsNaN(want) {
					compared++
				}
			}
		}
	}
	t.Logf("%d figures compared; %d series, %d samples exported", compared, stats.Series, stats.Samples)
	if compared < 50 {
		t.Errorf("only %d figures compared", compared)
	}
}

// close compares to 1e-6, relative for large values; NaN matches NaN.
func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
