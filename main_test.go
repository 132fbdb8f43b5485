package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/command"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// vtopBinary builds the command once per test run.
func vtopBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vtop-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "vtop")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// runVtop runs the binary and returns stdout, stderr and the exit code.
func runVtop(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(vtopBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("vtop %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// reading is one saved page of the lesson's server.
type reading struct {
	running, finished, generationTokens, ttftSum float64
}

// writePage renders a reading with client_golang's real exposition, the way
// vLLM's prometheus_client would serve it, and saves it like
// `curl …/metrics > file`.
func writePage(t *testing.T, path string, r reading) {
	t.Helper()
	labels := prometheus.Labels{"model_name": "meta-llama/Llama-3.1-8B-Instruct", "engine": "0"}
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

	stdout, stderr, code := runVtop(t, "analyze", before, after, "--seconds", "60", "--json")
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

	text, _, _ := runVtop(t, "analyze", before, after, "--seconds", "60")
	for _, want := range []string{"HEALTHY", "6 req/s", "1,800 gen tok/s", "time running 8s", "mean TTFT 500ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// closedAddress returns a loopback address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestOnceExitCodeAndErrors(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	}))
	defer garbage.Close()
	down := closedAddress(t)

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // in stdout
		wantErr  []string // in stderr
	}{
		{"refused target is down", []string{"--once", "--window", "2s", down}, command.ExitDown,
			[]string{down, "DOWN", "connection refused"}, nil},
		{"html page is down with the reason", []string{"--once", "--json", "--window", "2s", garbage.URL}, command.ExitDown,
			[]string{`"state": "down"`, "HTML"}, nil},
		{"bad flag", []string{"--no-such-flag"}, command.ExitUsage, nil, []string{"unknown flag"}},
		{"credentials in URL refused", []string{"--once", "http://user:secret@127.0.0.1:1/metrics"}, command.ExitUsage,
			nil, []string{"credentials"}},
		{"json without once", []string{"--json", "127.0.0.1:1"}, command.ExitUsage, nil, []string{"--json goes with --once"}},
		{"window shorter than two scrapes", []string{"--once", "--window", "1s", "127.0.0.1:1"}, command.ExitUsage, nil, []string{"--window"}},
		{"missing targets file", []string{"-f", "no-such-file.txt"}, command.ExitUsage, nil, []string{"no-such-file.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runVtop(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stdout+stderr, "secret") {
				t.Errorf("a credential reached the output:\n%s%s", stdout, stderr)
			}
		})
	}
}

// `vtop sim` prints one URL per line once every replica listens, and each
// URL serves a vLLM page until the command is interrupted.
func TestSimCommandServesReplicas(t *testing.T) {
	cmd := exec.Command(vtopBinary(t), "sim", "--replicas", "3", "--scenario", "healthy", "--warm-up", "30s")
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
	}
}
