package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// pastWindow is the window of the tests of the past: Prometheus scrapes
// every second.
const pastWindow = 10 * time.Second

// pastReport is what the tests of the past read of a JSON report.
type pastReport struct {
	Time     time.Time
	Replicas []map[string]any
}

// pastFigure is one figure of a replica's JSON and the PromQL that
// computes it, by instance.
type pastFigure struct {
	name string
	expr string
	get  func(r map[string]any) (float64, bool)
}

// num reads a figure of the replica's JSON: null is unknown.
func num(path ...string) func(r map[string]any) (float64, bool) {
	return func(r map[string]any) (float64, bool) {
		var v any = r
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return 0, false
			}
			v = m[p]
		}
		f, ok := v.(float64)
		return f, ok
	}
}

func pastFigures(window time.Duration) []pastFigure {
	w := fmt.Sprintf("[%dms]", window.Milliseconds())
	return []pastFigure{
		{"requests/s", "sum by (instance) (rate(vllm:request_success_total" + w + "))", num("requests_per_second")},
		{"generation tokens/s", "sum by (instance) (rate(vllm:generation_tokens_total" + w + "))", num("generation_tokens_per_second")},
		{"prompt tokens/s", "sum by (instance) (rate(vllm:prompt_tokens_total" + w + "))", num("prompt_tokens_per_second")},
		{"running", "sum by (instance) (vllm:num_requests_running)", num("running")},
		{"waiting", "sum by (instance) (vllm:num_requests_waiting)", num("waiting")},
		{"p99 TTFT", "histogram_quantile(0.99, sum by (instance, le) (rate(vllm:time_to_first_token_seconds_bucket" + w + ")))", num("ttft_seconds", "p99")},
		{"p50 ITL", "histogram_quantile(0.5, sum by (instance, le) (rate(vllm:inter_token_latency_seconds_bucket" + w + ")))", num("itl_seconds", "p50")},
		{"p90 e2e", "histogram_quantile(0.9, sum by (instance, le) (rate(vllm:e2e_request_latency_seconds_bucket" + w + ")))", num("e2e_seconds", "p90")},
	}
}

// sameAsPromQL: both unknown, or equal to 1e-6 relative.
func sameAsPromQL(got float64, known bool, want float64, present bool) bool {
	if !present || math.IsNaN(want) {
		return !known
	}
	return known && (got == want || math.Abs(got-want) <= 1e-6*math.Max(math.Abs(got), math.Abs(want)))
}

// pastReports parses --jsonl output.
func pastReports(t *testing.T, out string) []pastReport {
	t.Helper()
	var reps []pastReport
	for _, l := range lines(out) {
		var r pastReport
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %.300s", err, l)
		}
		reps = append(reps, r)
	}
	return reps
}

// checkAgainstPromQL compares every figure of every replica of a report
// with PromQL at the report's time; it returns how many were known.
func checkAgainstPromQL(t *testing.T, prom *testutil.Prometheus, r pastReport, instances []string) int {
	t.Helper()
	if len(r.Replicas) != len(instances) {
		t.Fatalf("%s: %d replicas, want %d", r.Time.Format(time.RFC3339Nano), len(r.Replicas), len(instances))
	}
	known := 0
	for _, f := range pastFigures(pastWindow) {
		want := map[string]model.SampleValue{}
		for _, s := range prom.Vector(f.expr, r.Time) {
			want[string(s.Metric["instance"])] = s.Value
		}
		for _, rep := range r.Replicas {
			inst, _ := rep["target"].(string)
			got, ok := f.get(rep)
			w, present := want[inst]
			if !sameAsPromQL(got, ok, float64(w), present) {
				t.Errorf("%s %s %s: vtop %v (known %v), PromQL %v (present %v)", r.Time.Format(time.RFC3339Nano), inst, f.name, got, ok, w, present)
			}
			if ok {
				known++
			}
		}
	}
	return known
}

// TestPastAgainstPrometheus: a spiking fleet scraped by a real
// Prometheus, read back with --from/--to --jsonl and --at --once --json:
// every report, at its time, has the figures Prometheus's own rate() and
// histogram_quantile() give at that time; vtop record --prometheus keeps
// the same stretch, and vtop replay of it prints the same reports.
func TestPastAgainstPrometheus(t *testing.T) {
	testutil.PrometheusTool(t, "prometheus")
	urls := simChild(t, 3, sim.Spike)
	instances := make([]string, len(urls))
	for i, u := range urls {
		instances[i] = strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/metrics")
	}
	prom := testutil.StartPrometheus(t, time.Second, instances)
	prom.WaitForWindow(pastWindow + 15*time.Second)

	// Times in RFC 3339, in UTC and at a millisecond that is no scrape's.
	to := time.Now().Add(-2 * time.Second).UTC().Truncate(time.Millisecond)
	from := to.Add(-12 * time.Second)
	stretch := []string{"--prometheus", prom.URL(), "--selector", `{job="vllm"}`, "--window", "10s", "--interval", "2s",
		"--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano)}

	out, _ := runOK(t, append([]string{"--jsonl"}, stretch...)...)
	reps := pastReports(t, out)
	if len(reps) != 7 || !reps[0].Time.Equal(from) || !reps[6].Time.Equal(to) {
		t.Fatalf("%d reports from %v to %v: want 7, every 2s from %v to %v", len(reps), reps[0].Time, reps[len(reps)-1].Time, from, to)
	}
	known := 0
	for _, r := range reps {
		known += checkAgainstPromQL(t, prom, r, instances)
	}
	if known < len(reps)*len(instances)*5 {
		t.Errorf("only %d figures known over %d reports: the comparison proves little", known, len(reps))
	}

	at := from.Add(5*time.Second + 123*time.Millisecond)
	one, _, code := testutil.RunVtop(t, "--once", "--json", "--prometheus", prom.URL(), "--window", "10s", "--at", at.Format(time.RFC3339Nano))
	if code > command.ExitDown {
		t.Fatalf("--at --once: exit %d\n%s", code, one)
	}
	var r pastReport
	if err := json.Unmarshal([]byte(one), &r); err != nil || !r.Time.Equal(at) {
		t.Fatalf("--at %v --once --json: report at %v (%v)", at, r.Time, err)
	}
	checkAgainstPromQL(t, prom, r, instances)

	path := filepath.Join(t.TempDir(), "past.vtrec")
	_, said := runOK(t, append([]string{"record", "-o", path}, stretch...)...)
	if !strings.Contains(said, "7 reports") {
		t.Errorf("vtop record --prometheus said %q: want the reports it kept", said)
	}
	replayed, _ := runOK(t, "replay", "--jsonl", path)
	if replayed != out {
		t.Errorf("vtop replay of the recorded past differs from --jsonl over it:\nreplay %.500s\njsonl  %.500s", replayed, out)
	}
}

// TestPastFlagErrors: a mistake in the flags of the past is said naming
// the flag, before anything is read.
func TestPastFlagErrors(t *testing.T) {
	prom := "http://" + testutil.ClosedPort(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--at", "-1h", "--once", "localhost:8000"}, command.ExitUsage, "--at goes with --prometheus"},
		{[]string{"--prometheus", prom, "--from", "-1h", "--to", "-2h", "--jsonl"}, command.ExitUsage, "--from -1h"},
		{[]string{"--prometheus", prom, "--at", "2999-01-01T00:00:00Z", "--once"}, command.ExitUsage, "in the future"},
		{[]string{"--prometheus", prom, "--from", "-30h", "--jsonl"}, command.ExitUsage, "over the 24h0m0s a stretch may span"},
		{[]string{"--prometheus", prom, "--at", "yesterday", "--once"}, command.ExitUsage, "--at yesterday: not a time"},
		{[]string{"--prometheus", prom, "--to", "-1h", "--jsonl"}, command.ExitUsage, "--to goes with --from"},
		{[]string{"--prometheus", prom, "--at", "-1h", "--from", "-2h", "--jsonl"}, command.ExitUsage, "exclude each other"},
		{[]string{"record", "-o", filepath.Join(t.TempDir(), "x.vtrec"), "--prometheus", prom}, command.ExitUsage, "give --from TIME"},
		{[]string{"--prometheus", prom, "--from", "-1m", "--jsonl"}, command.ExitNoData, "connection refused"},
	}
	for _, tt := range tests {
		stdout, stderr, code := testutil.RunVtop(t, tt.args...)
		if code != tt.code {
			t.Errorf("vtop %s: exit %d, want %d\n%s%s", strings.Join(tt.args, " "), code, tt.code, stdout, stderr)
		}
		if !strings.Contains(stderr, tt.want) {
			t.Errorf("vtop %s: stderr %q lacks %q", strings.Join(tt.args, " "), stderr, tt.want)
		}
	}
}
