package main

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// reading is one saved page of the lesson's server.
type reading struct {
	running, finished, generationTokens, ttftSum float64
	// model is the model_name label (the lesson's Llama when empty);
	// started is process_start_time_seconds (absent when 0).
	model   string
	started float64
}

// writePage renders a reading with client_golang's real exposition, the way
// vLLM's prometheus_client would serve it, and saves it like
// `curl …/metrics > file`.
func writePage(t *testing.T, path string, r reading) {
	t.Helper()
	model := cmp.Or(r.model, "meta-llama/Llama-3.1-8B-Instruct")
	labels := prometheus.Labels{"model_name": model, "engine": "0"}
	desc := func(name string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, name, extra, labels)
	}
	ttftBuckets := map[float64]uint64{0.25: uint64(r.finished * 0.2), 0.5: uint64(r.finished * 0.6), 0.75: uint64(r.finished * 0.9), 1: uint64(r.finished)}
	metrics := []prometheus.Metric{
		prometheus.MustNewConstMetric(desc("vllm:num_requests_running"), prometheus.GaugeValue, r.running),
		prometheus.MustNewConstMetric(desc("vllm:num_requests_waiting"), prometheus.GaugeValue, 0),
		prometheus.MustNewConstMetric(desc("vllm:kv_cache_usage_perc"), prometheus.GaugeValue, 0.42),
		prometheus.MustNewConstMetric(desc("vllm:request_success_total", "finished_reason"), prometheus.CounterValue, r.finished, "stop"),
		prometheus.MustNewConstMetric(desc("vllm:request_success_total", "finished_reason"), prometheus.CounterValue, 0, "length"),
		prometheus.MustNewConstMetric(desc("vllm:generation_tokens_total"), prometheus.CounterValue, r.generationTokens),
		prometheus.MustNewConstMetric(desc("vllm:prompt_tokens_total"), prometheus.CounterValue, r.finished*500),
		prometheus.MustNewConstMetric(desc("vllm:num_preemptions_total"), prometheus.CounterValue, 0),
		prometheus.MustNewConstHistogram(desc("vllm:time_to_first_token_seconds"), uint64(r.finished), r.ttftSum, ttftBuckets),
	}
	if r.started != 0 {
		metrics = append(metrics, prometheus.MustNewConstMetric(
			prometheus.NewDesc("process_start_time_seconds", "start", nil, nil), prometheus.GaugeValue, r.started))
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(constCollector(metrics))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&page, mf); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// constCollector collects a fixed set of metrics.
type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// The lesson's worked example, through the command a person runs: two
// readings 60 s apart, 48 running both times → 6 requests/s, 1,800 tokens/s,
// 8 s running, mean TTFT 0.5 s.
func TestAnalyzeWorkedExample(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.txt"), filepath.Join(dir, "after.txt")
	writePage(t, before, reading{running: 48, finished: 12040, generationTokens: 3612000, ttftSum: 2516})
	writePage(t, after, reading{running: 48, finished: 12400, generationTokens: 3720000, ttftSum: 2696})

	stdout, stderr, code := testutil.RunVtop(t, "analyze", before, after, "--seconds", "60", "--json")
	if code != command.ExitHealthy {
		t.Fatalf("exit code %d, want %d (healthy); stderr: %s", code, command.ExitHealthy, stderr)
	}
	var report struct {
		WindowSeconds float64 `json:"window_seconds"`
		Replicas      []struct {
			State                     string   `json:"state"`
			RequestsPerSecond         *float64 `json:"requests_per_second"`
			GenerationTokensPerSecond *float64 `json:"generation_tokens_per_second"`
			TimeRunningSeconds        *float64 `json:"time_running_seconds"`
			TTFT                      struct {
				Mean *float64 `json:"mean"`
			} `json:"ttft_seconds"`
			PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate"`
		} `json:"replicas"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if report.WindowSeconds != 60 || len(report.Replicas) != 1 {
		t.Fatalf("window %v, %d replicas; want 60 and 1", report.WindowSeconds, len(report.Replicas))
	}
	r := report.Replicas[0]
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"requests_per_second", r.RequestsPerSecond, 6},
		{"generation_tokens_per_second", r.GenerationTokensPerSecond, 1800},
		{"time_running_seconds", r.TimeRunningSeconds, 8},
		{"ttft_seconds.mean", r.TTFT.Mean, 0.5},
	}
	for _, c := range checks {
		if c.got == nil || *c.got < c.want-1e-9 || *c.got > c.want+1e-9 {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), c.want)
		}
	}
	if r.State != "healthy" {
		t.Errorf("state %q, want healthy", r.State)
	}
	if r.PrefixCacheHitRate != nil {
		t.Errorf("prefix_cache_hit_rate = %v for a page without prefix-cache counters, want null", *r.PrefixCacheHitRate)
	}

	text, _, _ := testutil.RunVtop(t, "analyze", before, after, "--seconds", "60")
	for _, want := range []string{"HEALTHY", "6 req/s", "1,800 gen tok/s", "time running 8s", "mean TTFT 500ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
}

// The lesson's two readings, as saved one minute apart.
var (
	lessonBefore = reading{running: 48, finished: 12040, generationTokens: 3612000, ttftSum: 2516, started: 1.7e9}
	lessonAfter  = reading{running: 48, finished: 12400, generationTokens: 3720000, ttftSum: 2696, started: 1.7e9}
)

// analyzeReport is what TestAnalyzeReadings reads of a JSON report.
type analyzeReport struct {
	Time          time.Time `json:"time"`
	WindowSeconds float64   `json:"window_seconds"`
	Replicas      []struct {
		State             string   `json:"state"`
		RequestsPerSecond *float64 `json:"requests_per_second"`
	} `json:"replicas"`
}

// `vtop analyze` must read two files as two readings of one server, in
// order, dated when they were taken: files given the wrong way round, of two
// servers or across a restart are refused as bad data (65) rather than
// turned into rates (every counter backwards once made 479 req/s and a
// SLOW verdict); without --seconds the files' modification times say how far
// apart they are, and --time or the AFTER file's time dates the report
// (never 2000-01-01).
func TestAnalyzeReadings(t *testing.T) {
	saved := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		before, after reading
		beforeAt      time.Time // the files' modification times
		afterAt       time.Time
		cutNewline    bool // the AFTER file lacks its final newline
		args          []string
		wantCode      int
		wantErr       string  // in stderr
		wantRate      float64 // requests/s, when the report is printed
		wantTime      time.Time
	}{
		{name: "in order, --seconds", before: lessonBefore, after: lessonAfter, beforeAt: saved, afterAt: saved,
			args: []string{"--seconds", "60"}, wantCode: command.ExitHealthy, wantRate: 6, wantTime: saved},
		{name: "in order, modification times a minute apart", before: lessonBefore, after: lessonAfter,
			beforeAt: saved.Add(-time.Minute), afterAt: saved, wantCode: command.ExitHealthy, wantRate: 6, wantTime: saved},
		{name: "--time dates the report", before: lessonBefore, after: lessonAfter, beforeAt: saved, afterAt: saved,
			args: []string{"--seconds", "60", "--time", "2026-02-03T04:05:06Z"}, wantCode: command.ExitHealthy,
			wantRate: 6, wantTime: time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)},
		{name: "a file without its final newline is read whole", before: lessonBefore, after: lessonAfter,
			beforeAt: saved, afterAt: saved, cutNewline: true, args: []string{"--seconds", "60"},
			wantCode: command.ExitHealthy, wantRate: 6, wantTime: saved},
		{name: "swapped files", before: lessonAfter, after: lessonBefore, beforeAt: saved, afterAt: saved,
			args: []string{"--seconds", "60"}, wantCode: command.ExitData, wantErr: "swapped"},
		{name: "swapped by start time", before: reading{running: 1, finished: 10, started: 1.7e9 + 600},
			after: reading{running: 1, finished: 20, started: 1.7e9}, beforeAt: saved, afterAt: saved,
			args: []string{"--seconds", "60"}, wantCode: command.ExitData, wantErr: "swapped"},
		{name: "a restart between the readings", before: lessonBefore,
			after:    reading{running: 48, finished: 500, generationTokens: 150000, ttftSum: 100, started: 1.7e9 + 30},
			beforeAt: saved, afterAt: saved, args: []string{"--seconds", "60"}, wantCode: command.ExitData, wantErr: "restarted between"},
		{name: "two servers' pages", before: lessonBefore,
			after:    reading{running: 48, finished: 12400, generationTokens: 3720000, ttftSum: 2696, started: 1.7e9, model: "Qwen/Qwen3-8B"},
			beforeAt: saved, afterAt: saved, args: []string{"--seconds", "60"}, wantCode: command.ExitData, wantErr: "different models"},
		{name: "counters both ways", before: lessonBefore,
			after:    reading{running: 48, finished: 12400, generationTokens: 3000000, ttftSum: 2696, started: 1.7e9},
			beforeAt: saved, afterAt: saved, args: []string{"--seconds", "60"}, wantCode: command.ExitData, wantErr: "not two readings of one server"},
		{name: "no --seconds and the same modification time", before: lessonBefore, after: lessonAfter,
			beforeAt: saved, afterAt: saved, wantCode: command.ExitUsage, wantErr: "give --seconds"},
		{name: "no --seconds and AFTER saved first", before: lessonBefore, after: lessonAfter,
			beforeAt: saved, afterAt: saved.Add(-time.Minute), wantCode: command.ExitUsage, wantErr: "give --seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			before, after := filepath.Join(dir, "before.txt"), filepath.Join(dir, "after.txt")
			writePage(t, before, tt.before)
			writePage(t, after, tt.after)
			if tt.cutNewline {
				trimFinalNewline(t, after)
			}
			for path, at := range map[string]time.Time{before: tt.beforeAt, after: tt.afterAt} {
				if err := os.Chtimes(path, at, at); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"analyze", before, after, "--json"}, tt.args...)
			stdout, stderr, code := testutil.RunVtop(t, args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if tt.wantErr != "" {
				if !strings.HasPrefix(stderr, "vtop: ") || !strings.Contains(stderr, tt.wantErr) || stdout != "" {
					t.Errorf("stderr %q, stdout %q; want vtop: … %q and no report", stderr, stdout, tt.wantErr)
				}
				return
			}
			var r analyzeReport
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("not a JSON report: %v\n%s", err, stdout)
			}
			if !r.Time.Equal(tt.wantTime) || r.WindowSeconds != 60 {
				t.Errorf("report at %s over %gs, want %s over 60s", r.Time, r.WindowSeconds, tt.wantTime)
			}
			if len(r.Replicas) != 1 || r.Replicas[0].RequestsPerSecond == nil || *r.Replicas[0].RequestsPerSecond != tt.wantRate {
				t.Errorf("replicas %+v, want one at %g req/s", r.Replicas, tt.wantRate)
			}
		})
	}
}

// trimFinalNewline drops the newline a saved page ends with, as a page
// copied out of a terminal into a ticket often loses it.
func trimFinalNewline(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(path, bytes.TrimSuffix(b, []byte("\n")), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// serveScenario serves one simulated replica of the scenario on loopback
// until the test ends, after a warm-up long enough for its state to form,
// and returns its URL.
func serveScenario(t *testing.T, scenario sim.Scenario) string {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: scenario, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	return testutil.ServeFleet(t.Context(), t, fleet)[0]
}

// TestOnceExitCodes runs `vtop --once` against replicas in each kind of
// state and checks the documented exit code and what is printed.
func TestOnceExitCodes(t *testing.T) {
	garbage := testutil.StartServer(t, testutil.ServePage("<html><body>502 Bad Gateway</body></html>", "text/html"))
	down := testutil.ClosedPort(t)
	full := serveScenario(t, sim.Full)
	idle := serveScenario(t, sim.Idle)

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // in stdout
	}{
		{"idle replica", []string{"--once", "--window", "2s", idle}, command.ExitHealthy,
			[]string{"IDLE", "fleet: 1 replica, 1 up"}},
		{"full replica is degraded", []string{"--once", "--window", "2s", full}, command.ExitDegraded,
			[]string{"FULL", "add replicas"}},
		{"full beside idle: the worst decides", []string{"--once", "--json", "--window", "2s", idle, full}, command.ExitDegraded,
			[]string{`"state": "full"`, `"state": "idle"`}},
		{"refused target is down", []string{"--once", "--window", "2s", down}, command.ExitDown,
			[]string{down, "DOWN", "connection refused"}},
		{"html page is down with the reason", []string{"--once", "--json", "--window", "2s", garbage}, command.ExitDown,
			[]string{`"state": "down"`, "HTML"}},
		{"down beats degraded", []string{"--once", "--window", "2s", full, down}, command.ExitDown,
			[]string{"FULL", "DOWN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := testutil.RunVtop(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if stderr != "" {
				t.Errorf("stderr %q, want nothing: the report says it all", stderr)
			}
		})
	}
}

// TestRejections runs the binary with every mistake the command line
// catches: each must exit 64 at once with a message naming the flag or
// argument, and repeat no credential.
func TestRejections(t *testing.T) {
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte("gpu-a:8000\nftp://gpu-b:8000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	commentsOnly := filepath.Join(dir, "none.txt")
	if err := os.WriteFile(commentsOnly, []byte("# the fleet, commented out\n# gpu-a:8000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	simulated := filepath.Join(dir, "sim.txt") // as `vtop sim --dcgm` prints
	if err := os.WriteFile(simulated, []byte("http://127.0.0.1:40001/metrics\ndcgm http://127.0.0.1:40002/metrics\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "page.txt")
	writePage(t, page, reading{running: 1, finished: 1, generationTokens: 1, ttftSum: 1})
	longLine := filepath.Join(dir, "long.txt") // a line of 1 MB after a good one
	if err := os.WriteFile(longLine, append([]byte("gpu-a:8000\n"), bytes.Repeat([]byte("x"), 1<<20)...), 0o600); err != nil {
		t.Fatal(err)
	}
	const target = "127.0.0.1:1"

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		// Found by the parser.
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag --no-such-flag"},
		{"interval not a duration", []string{"--interval", "soon", target}, "--interval"},
		{"unknown colour mode", []string{"--color", "sometimes", target}, "--color must be one of"},
		{"unknown demo scenario", []string{"--demo", "--demo-scenario", "busy"}, "--demo-scenario must be one of"},
		{"missing targets file", []string{"-f", "no-such-file.txt"}, "no-such-file.txt"},
		{"missing CA file", []string{"--ca-file", "no-such.pem", target}, "no-such.pem"},
		{"analyze without --seconds, the files' times equal", []string{"analyze", page, page}, "give --seconds"},
		{"analyze at a time not RFC 3339", []string{"analyze", page, page, "--seconds", "60", "--time", "noon"}, "--time"},
		{"analyze a missing page", []string{"analyze", page, "no-such-page.txt", "--seconds", "60"}, "no-such-page.txt"},
		{"sim with an unknown vLLM version", []string{"sim", "--vllm-version", "v2"}, "--vllm-version must be one of"},
		// Found by the commands.
		{"interval too short", []string{"--interval", "50ms", target}, "--interval 50ms is too short (at least 100ms)"},
		{"timeout as long as the interval", []string{"--timeout", "1s", target}, "--timeout 1s must be shorter than --interval 1s"},
		{"negative timeout", []string{"--timeout=-1s", target}, "--timeout -1s must be shorter than --interval 1s"},
		{"window of one scrape", []string{"--once", "--window", "1s", target}, "--window 1s must hold at least two scrapes (--interval 1s)"},
		{"window shorter than two intervals", []string{"--interval", "10s", "--window", "15s", target}, "--window 15s must hold at least two scrapes (--interval 10s)"},
		{"history shorter than the interval", []string{"--history", "500ms", target}, "--history 500ms must hold at least one scrape"},
		{"json without once", []string{"--json", target}, "--json goes with --once"},
		{"once with jsonl", []string{"--once", "--jsonl", target}, "--once and --jsonl exclude each other"},
		{"duration without jsonl", []string{"--duration", "5s", target}, "--duration goes with --jsonl"},
		{"negative duration", []string{"--jsonl", "--duration=-5s", target}, "--duration -5s: want a positive duration"},
		{"demo with targets", []string{"--demo", target}, "--demo watches its own simulated fleet: give no targets"},
		{"demo with a targets file", []string{"--demo", "-f", targets}, "--demo watches its own simulated fleet"},
		{"demo fleet of none", []string{"--demo", "--demo-fleet", "0"}, "--demo-fleet 0: want 1 to 500"},
		{"demo fleet too large", []string{"--demo", "--demo-fleet", "501"}, "--demo-fleet 501: want 1 to 500"},
		{"max body not a size", []string{"--max-body", "lots", target}, `--max-body: "lots" is not a size`},
		{"max body of zero", []string{"--max-body", "0", target}, `--max-body: "0" is not a size`},
		{"max body too large", []string{"--max-body", "9999999999GiB", target}, "is too large"},
		{"slo-ttft of zero", []string{"--slo-ttft", "0s", target}, "--slo-ttft 0s: want a positive latency"},
		{"negative slo-itl", []string{"--slo-itl=-1ms", target}, "--slo-itl -1ms: want a positive latency"},
		{"negative slo-e2e", []string{"--slo-e2e=-1s", target}, "--slo-e2e -1s: want a positive latency"},
		{"target queue time of zero", []string{"--target-queue-time", "0s", target}, "--target-queue-time 0s: want a positive time"},
		{"credentials in URL", []string{"--once", "http://user:secret@127.0.0.1:1/metrics"}, "credentials"},
		{"target of another scheme", []string{"ftp://gpu-a:8000"}, "scheme must be http or https"},
		{"bad target in the file", []string{"-f", targets}, "scheme must be http or https"},
		{"targets file of comments only", []string{"-f", commentsOnly}, "none.txt: no targets in it"},
		{"a dcgm-exporter in the targets file", []string{"-f", simulated}, "sim.txt:2: \"dcgm http://127.0.0.1:40002/metrics\" is a dcgm-exporter, not an inference server: read its GPUs with --dcgm http://127.0.0.1:40002/metrics"},
		{"header without a colon", []string{"--header", "no-colon", target}, `header must be "Key: Value"`},
		{"header with a line break in its value", []string{"--header", "X-Token: secret\r\nX-Other: b", target}, `--header "X-Token": its value holds a control character (CR, LF, NUL…), which no HTTP request carries`},
		{"header with a line break in its value, to Prometheus", []string{"--prometheus", "http://127.0.0.1:1", "--header", "X-Token: secret\nb"}, `--header "X-Token": its value holds a control character`},
		{"alertmanager header with a line break", []string{"--jsonl", "--alertmanager", "http://am:9093", "--alertmanager-header", "X-Token: secret\rb", target}, `--alertmanager-header "X-Token": its value holds a control character`},
		{"header name of a space", []string{"--header", "X Token: secret", target}, `header must be "Key: Value"`},
		{"target port out of range", []string{"--once", "127.0.0.1:99999"}, `invalid target "127.0.0.1:99999": port 99999 is not 1–65535`},
		{"target URL port out of range", []string{"--once", "http://127.0.0.1:0/metrics"}, `invalid target "http://127.0.0.1:0/metrics": port 0 is not 1–65535`},
		{"target port not a number", []string{"--once", "gpu-a:http"}, `invalid target "gpu-a:http": port "http" is not 1–65535`},
		{"targets file of a line of 1 MB", []string{"-f", longLine}, "long.txt:2: a line over 64 KiB: one target per line"},
		{"targets file of /dev/zero", []string{"-f", "/dev/zero"}, "/dev/zero:1: a line over 64 KiB: one target per line"},
		{"CA file without a certificate", []string{"--ca-file", empty, target}, "no PEM certificate found"},
		{"empty token file", []string{"--bearer-token-file", empty, target}, "is empty"},
		{"analyze zero seconds apart", []string{"analyze", page, page, "--seconds", "0"}, "--seconds 0: the readings must be taken some seconds apart"},
		{"analyze with a zero SLO", []string{"analyze", page, page, "--seconds", "60", "--slo-ttft", "0s"}, "--slo-ttft 0s"},
		{"sim of no replicas", []string{"sim", "--replicas", "0"}, "--replicas 0: want 1 to 2000"},
		{"sim of too many replicas", []string{"sim", "--replicas", "2001"}, "--replicas 2001: want 1 to 2000"},
		{"sim warm-up too long", []string{"sim", "--warm-up", "2h"}, "--warm-up 2h0m0s: want 0 to 1h"},
		{"sim listen without a port", []string{"sim", "--listen", "localhost"}, `--listen "localhost": want HOST:PORT`},
		{"sim with an unknown fault", []string{"sim", "--fault", "fire@1"}, `--fault "fire@1": unknown fault "fire"`},
		{"sim fault on replica 0", []string{"sim", "--replicas", "2", "--fault", "down@0"}, `--fault "down@0": replica 0: want 1 to 2`},
		{"sim fault on a replica beyond the fleet", []string{"sim", "--replicas", "2", "--fault", "down@3"}, `--fault "down@3": replica 3: want 1 to 2`},
		{"demo fault without --demo", []string{"--demo-fault", "down", target}, "--demo-fault goes with --demo"},
		{"demo fault beyond the fleet", []string{"--demo", "--demo-fleet", "2", "--demo-fault", "500@9"}, `--demo-fault "500@9": replica 9: want 1 to 2`},
		{"sim of negative engines", []string{"sim", "--data-parallel=-1"}, "--data-parallel -1: want 0 to 64"},
		{"sim of too many engines", []string{"sim", "--data-parallel", "65"}, "--data-parallel 65: want 0 to 64"},
		{"sim listen on a port out of range", []string{"sim", "--listen", "127.0.0.1:70000"}, `port "70000": want 0 to 65535`},
		{"alertmanager URL without a scheme", []string{"--jsonl", "--alertmanager", "am:9093", target}, `--alertmanager: "am:9093" is not an http(s) URL`},
		{"alertmanager URL with credentials", []string{"--jsonl", "--alertmanager", "http://user:secret@am:9093", target}, "--alertmanager: http://am:9093: credentials do not go in the URL"},
		{"alertmanager re-sent too often", []string{"--jsonl", "--alertmanager", "http://am:9093", "--alertmanager-resend", "100ms", target}, "--alertmanager-resend 100ms: want 1s or more"},
		{"alertmanager option without it", []string{"--jsonl", "--alertmanager-header", "X-A: b", target}, "--alertmanager-header goes with --alertmanager"},
		{"alertmanager CA file without a certificate", []string{"--jsonl", "--alertmanager", "https://am:9093", "--alertmanager-ca-file", empty, target}, "--alertmanager: CA file " + empty + ": no PEM certificate found"},
		{"alertmanager with --once", []string{"--once", "--alertmanager", "http://am:9093", target}, "not with --once"},
		{"on-change with --once", []string{"--once", "--on-change", "true", target}, "not with --once"},
		{"on-change timeout of zero", []string{"--jsonl", "--on-change", "true", "--on-change-timeout", "0s", target}, "--on-change-timeout 0s: want a positive duration"},
		{"on-change rate of none", []string{"--jsonl", "--on-change", "true", "--on-change-per-minute", "0", target}, "--on-change-per-minute 0: want 1 or more"},
		{"bell with --jsonl", []string{"--jsonl", "--bell", "down", target}, "--bell rings the dashboard's terminal: not with --jsonl"},
		{"bell of an unknown state", []string{"--bell", "down,burning", target}, `--bell: "burning" is not a state (want some of healthy,idle,sleeping,unjudged,warming,recovering,stale,slow,full,preempting,stalled,down)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := testutil.RunVtop(t, tt.args...)
			if code != command.ExitUsage {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, command.ExitUsage, stdout, stderr)
			}
			if !strings.HasPrefix(stderr, "vtop: ") || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr %q, want vtop: … %q", stderr, tt.wantErr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			// kong writes file names in full: the checkout's own path
			// may hold any word.
			wd, _ := os.Getwd()
			if strings.Contains(strings.ReplaceAll(stdout+stderr, wd, "."), "secret") {
				t.Errorf("a credential reached the output:\n%s%s", stdout, stderr)
			}
		})
	}
}

// TestTargetsFileFromAPipe reads -f from a pipe, as -f <(kubectl …) gives
// one: the targets it names are watched, though a pipe can be read only
// once (the inputs are checked before the run starts).
func TestTargetsFileFromAPipe(t *testing.T) {
	refused := testutil.ClosedPort(t)
	cmd := testutil.VtopCommand(t, "--once", "--json", "--no-gpus", "--interval", "200ms", "--window", "1s", "-f", "/dev/stdin")
	cmd.Stdin = strings.NewReader(refused + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := testutil.RunWithin(t, cmd, 30*time.Second)
	if code := testutil.ExitStatus(t, err, cmd.Args); code != command.ExitDown {
		t.Errorf("exit code %d, want %d (the target is down)\nstderr: %s", code, command.ExitDown, errOut.String())
	}
	var report struct {
		Replicas []struct {
			Target string `json:"target"`
			State  string `json:"state"`
		} `json:"replicas"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	if len(report.Replicas) != 1 || report.Replicas[0].Target != refused || report.Replicas[0].State != "down" {
		t.Errorf("replicas %+v, want the one target of the pipe, %s, down", report.Replicas, refused)
	}
}

// jsonlReport is what TestJSONLDuration reads of each line.
type jsonlReport struct {
	Time     time.Time `json:"time"`
	Replicas []struct {
		Target string `json:"target"`
		State  string `json:"state"`
	} `json:"replicas"`
}

// `vtop --jsonl --duration` runs the live pipeline without a terminal and
// stops by itself: exit 0, one valid JSON report per line, about one per
// interval, each newer than the last.
func TestJSONLDuration(t *testing.T) {
	url := serveScenario(t, sim.Healthy)
	const duration = 3 * time.Second
	args := []string{"--jsonl", "--duration", duration.String(), "--interval", "500ms", "--window", "1s", url}
	cmd := testutil.VtopCommand(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	code := testutil.ExitStatus(t, testutil.RunWithin(t, cmd, duration+30*time.Second), args)
	took := time.Since(start)
	if code != command.ExitHealthy || stderr.Len() > 0 {
		t.Fatalf("exit code %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
	if took < duration {
		t.Errorf("ended after %v, before --duration %v", took.Round(time.Millisecond), duration)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	// A report per 500ms interval over 3 s, less the first round and
	// whatever a loaded machine delays.
	if len(lines) < 3 {
		t.Fatalf("%d lines in %v, want about one per interval:\n%s", len(lines), duration, stdout.String())
	}
	var last time.Time
	for i, line := range lines {
		var r jsonlReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d is not one JSON report: %v\n%s", i+1, err, line)
		}
		if len(r.Replicas) != 1 || !strings.Contains(url, r.Replicas[0].Target) || r.Replicas[0].State == "down" {
			t.Errorf("line %d: replicas %+v, want the one replica, up", i+1, r.Replicas)
		}
		if !r.Time.After(last) {
			t.Errorf("line %d at %s, not after the line before (%s)", i+1, r.Time, last)
		}
		last = r.Time
	}
}

// A JSONL report that cannot be written stops the run at once with an
// error naming the problem: on a full disk (/dev/full) the command exits
// 70 with the cause; when the reader is gone (a closed pipe, as after
// `| head -1`) the write raises SIGPIPE, which ends the process as it
// ends every Unix filter.
func TestJSONLWriteFails(t *testing.T) {
	url := serveScenario(t, sim.Healthy)
	args := []string{"--jsonl", "--interval", "200ms", "--window", "1s", url}

	t.Run("full disk", func(t *testing.T) {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full on this system: %v", err)
		}
		defer full.Close()
		cmd := testutil.VtopCommand(t, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &stderr
		code := testutil.ExitStatus(t, testutil.RunWithin(t, cmd, 30*time.Second), args)
		if code != command.ExitFailure {
			t.Errorf("exit code %d, want %d; stderr: %s", code, command.ExitFailure, stderr.String())
		}
		if want := "vtop: --jsonl: writing a report: write /dev/stdout: no space left on device"; !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want %q", stderr.String(), want)
		}
	})

	t.Run("closed pipe", func(t *testing.T) {
		cmd := testutil.VtopCommand(t, args...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !json.Valid([]byte(first)) {
			t.Fatalf("first line %q, %v; want a JSON report", first, err)
		}
		out.Close() // the reader leaves, as head does
		err = testutil.WaitWithin(t, cmd, 30*time.Second)
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("vtop exited 0 after its reader left (%v), want an error", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
			t.Errorf("vtop ended with %v, want killed by SIGPIPE", exit)
		}
	})
}

// `vtop sim` prints one URL per line once every replica listens, and each
// URL serves a vLLM page, of as many engines as --data-parallel says, until the
// command is interrupted.
func TestSimCommandServesReplicas(t *testing.T) {
	cmd := testutil.VtopCommand(t, "sim", "--replicas", "3", "--scenario", "healthy", "--warm-up", "30s", "--data-parallel", "3")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("vtop sim after an interrupt: %v", err)
		}
	}()
	lines := bufio.NewScanner(stdout)
	for i := range 3 {
		if !lines.Scan() {
			t.Fatalf("vtop sim printed %d URLs, want 3", i)
		}
		url := lines.Text()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(page, []byte("vllm:num_requests_running{")) {
			t.Errorf("GET %s: %s, %d bytes without vllm:num_requests_running", url, resp.Status, len(page))
		}
		if !bytes.Contains(page, []byte(`engine="2"`)) || bytes.Contains(page, []byte(`engine="3"`)) {
			t.Errorf("GET %s: want the engines 0, 1 and 2 on the page", url)
		}
	}
}

// `vtop sim --fault KIND[@N]` puts replicas into the failures vtop must
// show (N counts from 1 in the order of the URLs; without it, every
// replica), so that anyone can try the failure screens by hand.
func TestSimFaults(t *testing.T) {
	type answer struct {
		status  int    // 0: no HTTP answer at all
		errPart string // in the client's error when there is no answer
		body    string // in the body when there is one
	}
	ok := answer{status: http.StatusOK, body: "vllm:num_requests_running{"}
	tests := []struct {
		name   string
		faults []string
		want   []answer // per replica
	}{
		{"500 on the second", []string{"500@2"}, []answer{ok, {status: http.StatusInternalServerError}}},
		{"down on the first", []string{"down@1"}, []answer{{errPart: "connection refused"}, ok}},
		{"garbage on all", []string{"garbage"}, []answer{{status: http.StatusOK, body: "<html>"}, {status: http.StatusOK, body: "<html>"}}},
		{"hang and truncated", []string{"hang@1", "truncated@2"}, []answer{{errPart: "Client.Timeout"}, {errPart: "unexpected EOF"}}},
		{"restart is an event: the replica serves", []string{"restart@1"}, []answer{ok, ok}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"sim", "--replicas", "2", "--scenario", "healthy", "--warm-up", "10s"}
			for _, f := range tt.faults {
				args = append(args, "--fault", f)
			}
			urls := testutil.StartVtop(t, args, 2)
			client := &http.Client{Timeout: 2 * time.Second}
			for i, want := range tt.want {
				status, body, err := get(client, urls[i])
				switch {
				case want.status == 0 && (err == nil || !strings.Contains(err.Error(), want.errPart)):
					t.Errorf("replica %d: status %d, error %v; want an error with %q", i+1, status, err, want.errPart)
				case want.status != 0 && (err != nil || status != want.status || !strings.Contains(body, want.body)):
					t.Errorf("replica %d: status %d, error %v, %d bytes; want %d with %q", i+1, status, err, len(body), want.status, want.body)
				}
			}
		})
	}
}

// get fetches a URL: the status, the body read to its end, and the error
// of the request or of the body's reading.
func get(client *http.Client, url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// `vtop --help` opens on the watch command's flags, which are what a person
// running vtop wants; the sub-commands keep their own help.
func TestHelp(t *testing.T) {
	tests := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"--help"}, []string{"Usage: vtop watch", "Exit codes of --once and analyze", "--jsonl", "--demo-scenario", "--max-body"}, []string{"--seconds="}},
		{[]string{"-h", "gpu-a:8000"}, []string{"Usage: vtop watch", "--interval"}, nil},
		{[]string{"analyze", "--help"}, []string{"Usage: vtop analyze", "<before> <after>", "--seconds=N", "--time=TIME"}, []string{"--jsonl", "FLOAT-64"}},
		{[]string{"sim", "--help"}, []string{"Usage: vtop sim", "--replicas", "--vllm-version"}, []string{"--jsonl"}},
		{[]string{"--version"}, []string{"vtop dev"}, nil},
	}
	for _, tt := range tests {
		stdout, stderr, code := testutil.RunVtop(t, tt.args...)
		if code != command.ExitHealthy || stderr != "" {
			t.Errorf("vtop %v: exit code %d, stderr %q; want 0 and nothing", tt.args, code, stderr)
		}
		for _, want := range tt.want {
			if !strings.Contains(stdout, want) {
				t.Errorf("vtop %v lacks %q:\n%s", tt.args, want, stdout)
			}
		}
		for _, not := range tt.notWant {
			if strings.Contains(stdout, not) {
				t.Errorf("vtop %v shows %q, another command's flag", tt.args, not)
			}
		}
	}
}

// The dashboard needs a terminal. Without one (`ssh host vtop` without
// -t, cron, a pipe) vtop must say so before it starts anything, suggest the
// modes that need none, and exit 64 (the command line asked for something
// this place cannot give), not exit 0 having shown nothing or 70 with the
// terminal library's error.
func TestDashboardWithoutTerminal(t *testing.T) {
	tests := []struct {
		name    string
		setsid  bool // a new session: no controlling terminal either
		outFile bool // stdout a file rather than a pipe
	}{
		{"stdin and stdout pipes, as ssh without -t", false, false},
		{"no controlling terminal, as cron", true, false},
		{"stdout to a file", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--demo", "--demo-fleet", "1"}
			cmd := testutil.VtopCommand(t, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: tt.setsid}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if tt.outFile {
				f, err := os.Create(filepath.Join(t.TempDir(), "out"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.Stdout = f
			}
			code := testutil.ExitStatus(t, testutil.RunWithin(t, cmd, 30*time.Second), args)
			msg := stderr.String()
			if code != command.ExitUsage {
				t.Errorf("exit code %d, want %d; stderr %q", code, command.ExitUsage, msg)
			}
			for _, want := range []string{"vtop: the dashboard needs a terminal", "--once", "--jsonl", "ssh -t"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q lacks %q", msg, want)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

// TestBinaryIsStatic holds the README to its word: built as it says, the
// binary needs no C library, so it can be copied onto any Linux host of
// its architecture. A dependency that needs cgo fails the build; one that
// links the C library anyway shows as an interpreter or a needed library.
func TestBinaryIsStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the check reads an ELF binary")
	}
	f, err := elf.Open(testutil.VtopBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary asks for a dynamic loader (PT_INTERP)")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries: %v", libs)
	}
}

// TestRelativeTimes: a relative time after a flag of the past is joined
// to it, so that the parser does not read -8h as short flags; nothing
// else is touched, and a flag left without its value still says so.
func TestRelativeTimes(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"--prometheus", "u", "--at", "-8h"}, []string{"--prometheus", "u", "--at=-8h"}},
		{[]string{"--from", "-90m", "--to", "-1h30m", "--jsonl"}, []string{"--from=-90m", "--to=-1h30m", "--jsonl"}},
		{[]string{"--from", "03:00", "--to", "now"}, []string{"--from", "03:00", "--to", "now"}},
		{[]string{"--at", "--once"}, []string{"--at", "--once"}},
		{[]string{"--at", "-f", "x"}, []string{"--at", "-f", "x"}},
		{[]string{"--window", "-8h"}, []string{"--window", "-8h"}},
		{[]string{"--at"}, []string{"--at"}},
	}
	for _, tt := range tests {
		if got := relativeTimes(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.in, got, tt.want)
		}
	}
}
