package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vtop-dev/vtop/testutil"
)

// hostileReplica is what one replica of a --once --json report says.
type hostileReplica struct {
	State       string              `json:"state"`
	Error       string              `json:"error"`
	Reasons     []string            `json:"reasons"`
	Warnings    []string            `json:"warnings"`
	Running     *float64            `json:"running"`
	Waiting     *float64            `json:"waiting"`
	KV          *float64            `json:"kv_cache_usage"`
	PreemptRate *float64            `json:"preemptions_per_second"`
	TTFT        map[string]*float64 `json:"ttft_seconds"`
}

// hostileReport is the part of a report these cases judge.
type hostileReport struct {
	Replicas []hostileReplica `json:"replicas"`
	Fleet    struct {
		Running *float64 `json:"running"`
	} `json:"fleet"`
}

// valuePage serves a vLLM page built by client_golang whose values are
// the functions' answers on each scrape (the first scrape is 0): a value
// may be anything a float holds, and a counter may fall.
func valuePage(t *testing.T, gauges, counters map[string]func(scrape int64) float64) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	var scrapes atomic.Int64
	labels := prometheus.Labels{"model_name": "m"}
	for name, f := range gauges {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: name, ConstLabels: labels},
			func() float64 { return f(scrapes.Load()) }))
	}
	for name, f := range counters {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: name, ConstLabels: labels},
			func() float64 { return f(scrapes.Load()) }))
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		scrapes.Add(1)
	})
}

// is returns a function that always answers v.
func is(v float64) func(int64) float64 { return func(int64) float64 { return v } }

// steadyPage serves a replica's page with every value in its domain but
// those the case sets.
func steadyPage(t *testing.T, gauges, counters map[string]func(int64) float64) string {
	g := map[string]func(int64) float64{
		"vllm:num_requests_running": is(3), "vllm:num_requests_waiting": is(0), "vllm:kv_cache_usage_perc": is(0.2),
	}
	c := map[string]func(int64) float64{
		"vllm:num_preemptions_total": is(5), "vllm:prompt_tokens_total": func(n int64) float64 { return float64(100 * n) },
	}
	for k, v := range gauges {
		g[k] = v
	}
	for k, v := range counters {
		c[k] = v
	}
	return valuePage(t, g, c)
}

// textPage serves a fixed page in the text format: what client_golang
// refuses to write (a series twice, buckets that fall).
func textPage(t *testing.T, page string) string {
	return testutil.StartServer(t, testutil.ServePage(page, "text/plain; version=0.0.4"))
}

const ttftType = "# TYPE vllm:time_to_first_token_seconds histogram\n"

// longNumber is a number written out in more digits than any figure has.
var longNumber = regexp.MustCompile(`[0-9][0-9,]{24,}`)

// TestHostileInput: pages that no sound server writes are refused, or the
// figure they spoil is n/a with a warning naming it; no state rests on
// such a figure and no total adds it.
func TestHostileInput(t *testing.T) {
	dupFamilies := bytes.Repeat(testutil.VLLMPage(t, 1), 3)
	tests := []struct {
		name    string
		serve   func(t *testing.T) string
		code    int
		state   string   // "" any
		notIn   []string // states it must not be
		error   string   // in the replica's error
		warning string   // in one of its warnings
		check   func(r hostileReport) string
	}{
		{
			name: "a series three times is refused, naming it and its line",
			serve: func(t *testing.T) string {
				return textPage(t, "vllm:num_requests_running{model_name=\"m\"} 4\nvllm:num_requests_running{model_name=\"m\"} 9\nvllm:num_requests_running{model_name=\"m\"} 7\n")
			},
			code: 2, state: "down",
			error: `duplicate series at line 2: vllm:num_requests_running{model_name="m"} (first at line 1)`,
		},
		{
			name:  "a page repeating its families is refused",
			serve: func(t *testing.T) string { return textPage(t, string(dupFamilies)) },
			code:  2, state: "down", error: "duplicate series at line",
		},
		{
			name: "KV cache +Inf is n/a, never FULL on it",
			serve: func(t *testing.T) string {
				return steadyPage(t, map[string]func(int64) float64{"vllm:kv_cache_usage_perc": is(math.Inf(1))}, nil)
			},
			notIn: []string{"full"}, warning: "vllm:kv_cache_usage_perc",
			check: func(r hostileReport) string { return nonNil("kv_cache_usage", r.Replicas[0].KV) },
		},
		{
			name: "KV cache 1.5 (a fraction outside 0–1) is n/a",
			serve: func(t *testing.T) string {
				return steadyPage(t, map[string]func(int64) float64{"vllm:kv_cache_usage_perc": is(1.5)}, nil)
			},
			notIn: []string{"full"}, warning: "vllm:kv_cache_usage_perc",
			check: func(r hostileReport) string { return nonNil("kv_cache_usage", r.Replicas[0].KV) },
		},
		{
			name: "running 1e308 is n/a and out of the fleet's total",
			serve: func(t *testing.T) string {
				return steadyPage(t, map[string]func(int64) float64{"vllm:num_requests_running": is(1e308)}, nil)
			},
			warning: "vllm:num_requests_running",
			check: func(r hostileReport) string {
				return nonNil("running", r.Replicas[0].Running) + nonNil("fleet running", r.Fleet.Running)
			},
		},
		{
			name: "running NaN is n/a",
			serve: func(t *testing.T) string {
				return steadyPage(t, map[string]func(int64) float64{"vllm:num_requests_running": is(math.NaN())}, nil)
			},
			warning: "vllm:num_requests_running",
			check:   func(r hostileReport) string { return nonNil("running", r.Replicas[0].Running) },
		},
		{
			name: "preemptions NaN never make PREEMPTING",
			serve: func(t *testing.T) string {
				return steadyPage(t, nil, map[string]func(int64) float64{"vllm:num_preemptions_total": is(math.NaN())})
			},
			notIn: []string{"preempting"}, warning: "vllm:num_preemptions_total",
			check: func(r hostileReport) string { return nonNil("preemptions_per_second", r.Replicas[0].PreemptRate) },
		},
		{
			name: "a falling counter is a reset, never a negative rate",
			serve: func(t *testing.T) string {
				return steadyPage(t, nil, map[string]func(int64) float64{"vllm:num_preemptions_total": func(n int64) float64 {
					return max(30000-1000*float64(n), 0)
				}})
			},
			check: func(r hostileReport) string {
				if p := r.Replicas[0].PreemptRate; p != nil && *p < 0 {
					return fmt.Sprintf("preemptions_per_second %v", *p)
				}
				return ""
			},
		},
		{
			name: "a bucket count of +Inf makes the histogram n/a, said",
			serve: func(t *testing.T) string {
				return textPage(t, ttftType+"vllm:time_to_first_token_seconds_bucket{le=\"1\",model_name=\"m\"} 2\n"+
					"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} +Inf\n"+
					"vllm:num_requests_running{model_name=\"m\"} 1\n")
			},
			warning: "vllm:time_to_first_token_seconds: count +Inf of le=+Inf is out of its domain",
			check: func(r hostileReport) string {
				return nonNil("ttft p99", r.Replicas[0].TTFT["p99"]) + nonNil("ttft mean", r.Replicas[0].TTFT["mean"])
			},
		},
		{
			name: "buckets that fall are said, naming the histogram",
			serve: func(t *testing.T) string {
				return textPage(t, ttftType+"vllm:time_to_first_token_seconds_bucket{le=\"1\",model_name=\"m\"} 9\n"+
					"vllm:time_to_first_token_seconds_bucket{le=\"2\",model_name=\"m\"} 3\n"+
					"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 9\n"+
					"vllm:num_requests_running{model_name=\"m\"} 1\n")
			},
			warning: "vllm:time_to_first_token_seconds: bucket counts fall",
		},
		{
			name: "buckets without +Inf are said, naming the histogram",
			serve: func(t *testing.T) string {
				return textPage(t, ttftType+"vllm:time_to_first_token_seconds_bucket{le=\"1\",model_name=\"m\"} 2\n"+
					"vllm:num_requests_running{model_name=\"m\"} 1\n")
			},
			warning: `vllm:time_to_first_token_seconds: no le="+Inf" bucket`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := tt.serve(t)
			stdout, stderr, code := testutil.RunVtop(t, "--once", "--json", "--window", "2s", url)
			var rep hostileReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Replicas) != 1 {
				t.Fatalf("report: %v\nstdout %s\nstderr %s", err, stdout, stderr)
			}
			judgeHostile(t, rep, code, tt.code, tt.state, tt.notIn, tt.error, tt.warning)
			if tt.check != nil {
				if problem := tt.check(rep); problem != "" {
					t.Error(problem)
				}
			}
		})
	}
}

// judgeHostile checks what every case states of the replica.
func judgeHostile(t *testing.T, rep hostileReport, code, wantCode int, state string, notIn []string, errText, warning string) {
	t.Helper()
	r := rep.Replicas[0]
	if wantCode != 0 && code != wantCode {
		t.Errorf("exit code %d, want %d", code, wantCode)
	}
	if state != "" && r.State != state {
		t.Errorf("state %q, want %q (reasons %q)", r.State, state, r.Reasons)
	}
	for _, s := range notIn {
		if r.State == s {
			t.Errorf("state %q on a figure that is n/a (reasons %q)", r.State, r.Reasons)
		}
	}
	if !strings.Contains(r.Error, errText) {
		t.Errorf("error %q, want it to hold %q", r.Error, errText)
	}
	if warning != "" && !containsAny(r.Warnings, warning) {
		t.Errorf("warnings %q, want one holding %q", r.Warnings, warning)
	}
	for _, reason := range r.Reasons {
		if longNumber.MatchString(reason) || strings.Contains(reason, "Inf") || strings.Contains(reason, "−") {
			t.Errorf("reason judges an absurd figure: %.120s", reason)
		}
	}
}

// nonNil says a figure that should be n/a is not.
func nonNil(what string, v *float64) string {
	if v != nil {
		return fmt.Sprintf("%s = %v, want n/a; ", what, *v)
	}
	return ""
}

// containsAny reports whether one of texts holds s.
func containsAny(texts []string, s string) bool {
	for _, x := range texts {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
