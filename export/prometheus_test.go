package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/replay"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// tools returns the paths of prometheus and promtool, skipping the test
// when they are absent (failing instead under VTOP_REQUIRE_PROMETHEUS).
func tools(t *testing.T) (prom, promtool string) {
	t.Helper()
	prom, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		msg := "prometheus and promtool are not on PATH (Debian: apt-get install prometheus)"
		if os.Getenv("VTOP_REQUIRE_PROMETHEUS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return prom, promtool
}

// virtualRecording records a simulated fleet in virtual time, one page
// per replica per interval, as `vtop record` does.
func virtualRecording(t testing.TB, o sim.Options, steps int, every time.Duration) string {
	t.Helper()
	fleet, err := sim.NewFleet(o)
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	var targets []scrape.Target
	for i := range fleet.Replicas() {
		name := fmt.Sprintf("127.0.0.%d:8000", i+1)
		targets = append(targets, scrape.Target{Name: name, URL: "http://" + name + "/metrics"})
	}
	start := time.Unix(1_800_000_000, 0)
	path := filepath.Join(t.TempDir(), "fleet.vtrec")
	cfg := analysis.DefaultConfig()
	rec, err := record.Create(path, record.Options{Targets: targets, Interval: every, Start: start, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for s := range steps {
		fleet.Advance(every)
		for i, r := range fleet.Replicas() {
			body, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
			if err != nil {
				t.Fatal(err)
			}
			rec.Page(scrape.Page{Target: targets[i], Time: start.Add(time.Duration(s+1) * every), Body: body, ContentType: "text/plain; version=0.0.4"})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
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

// startPrometheus serves the blocks in dir on a free loopback port until
// the test ends and returns its URL.
func startPrometheus(t *testing.T, prom, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("scrape_configs: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+dir, "--storage.tsdb.retention.time=100y",
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://" + addr
	for range 300 {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prometheus did not become ready:\n%s", logs.String())
	return ""
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
	prom, promtool := tools(t)
	path := virtualRecording(t, sim.Options{Replicas: 2, Scenario: sim.Preempting, Seed: 21}, 240, time.Second)
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	dir, stats := blocks(t, promtool, rec)
	if stats.Samples == 0 || stats.Skipped != 0 {
		t.Fatalf("export stats %+v", stats)
	}
	base := startPrometheus(t, prom, dir)

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
