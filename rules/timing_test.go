package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/testutil"
)

// timingSuite holds for: and keep_firing_for: to vtop's hysteresis of 2
// every 5 s (the defaults). Replica "full" holds a queue at the readings of
// 15–30 s: FULL is proven by the third, at 25 s, and shown at once; the
// two newest readings hold no queue from 40 s, where it is kept one
// evaluation, and gone at 45 s. Replica "slow" serves 10 requests/s, all
// under 0.5 s until 60 s, then taking 2 s until 120 s: its p99 TTFT over
// 30 s is over the SLO from the reading of 65 s, which makes SLOW pending;
// it fires at 70 s, the second evaluation, as vtop shows it. The window
// forgets the slow requests at 150 s: kept there, gone at 155 s.
// Replica "down" answers until 60 s and fails every scrape from 65 s:
// DOWN fires on the first failed scrape. Replica "stale" runs 10
// requests whose tokens stop at 30 s while nothing else on its page
// moves: from 60 s the window holds no change of its work, so STALE is
// pending and fires at 65 s. Replica "stalled" is the same engine with
// its arrivals piling up from 30 s: a live page with no token moving
// over three readings (12.5 s), STALLED at 40 s, at once, and never
// STALE. Replica "itl"
// generates 100 tokens/s, all under 50 ms until 60 s, all between 100
// and 150 ms until 120 s (SLOW by ITL, pending at 65 s and firing at
// 70 s), then all between 50 and 100 ms: a p99 of 99.5 ms, under the
// 100 ms SLO but not 10 % under it, so SLOW is held, as vtop holds it.
// Replicas "kvfull" and "kvrare" hold a queue from 15 s (FULL from 25 s).
// "kvfull" preempts 20 times every 5 s from 60 s, while 10 requests
// finish: material at once, but a move from FULL, so PREEMPTING is held
// one evaluation and shown at 65 s, as vtop shows it. "kvrare" preempts
// once, at 60 s, while 2,000 tokens/s are generated: recomputing a
// prompt of 1,000 and half an output of 200 is 2 % of them, no state.
const timingSuite = `rule_files:
  - rules.yml
evaluation_interval: 5s
tests:
  - interval: 5s
    input_series:
      - {series: 'up{instance="full",job="vllm"}', values: '1x37'}
      - {series: 'up{instance="slow",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="full"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="full"}', values: '0x2 5x3 0x30'}
      - {series: 'vllm:generation_tokens_total{instance="full"}', values: '0+100x37'}
      - {series: 'vllm:num_requests_running{instance="slow"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="slow"}', values: '0x37'}
      - {series: 'vllm:generation_tokens_total{instance="slow"}', values: '0+100x37'}
      - {series: 'vllm:time_to_first_token_seconds_bucket{instance="slow",le="0.5"}', values: '0+50x12 600+0x11 650+50x12'}
      - {series: 'vllm:time_to_first_token_seconds_bucket{instance="slow",le="1"}', values: '0+50x12 600+0x11 650+50x12'}
      - {series: 'vllm:time_to_first_token_seconds_bucket{instance="slow",le="2.5"}', values: '0+50x37'}
      - {series: 'vllm:time_to_first_token_seconds_bucket{instance="slow",le="+Inf"}', values: '0+50x37'}
      - {series: 'vllm:time_to_first_token_seconds_count{instance="slow"}', values: '0+50x37'}
      - {series: 'up{instance="down",job="vllm"}', values: '1x12 0x24'}
      - {series: 'vllm:num_requests_running{instance="down"}', values: '10x12'}
      - {series: 'vllm:num_requests_waiting{instance="down"}', values: '0x12'}
      - {series: 'vllm:generation_tokens_total{instance="down"}', values: '0+100x12'}
      - {series: 'up{instance="stale",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="stale"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="stale"}', values: '0x37'}
      - {series: 'vllm:generation_tokens_total{instance="stale"}', values: '0+100x6 600x30'}
      - {series: 'up{instance="stalled",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="stalled"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="stalled"}', values: '0x5 2+2x31'}
      - {series: 'vllm:generation_tokens_total{instance="stalled"}', values: '0+100x6 600x30'}
      - {series: 'up{instance="itl",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="itl"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="itl"}', values: '0x37'}
      - {series: 'vllm:generation_tokens_total{instance="itl"}', values: '0+500x37'}
      - {series: 'vllm:inter_token_latency_seconds_bucket{instance="itl",le="0.05"}', values: '0+500x12 6000x24'}
      - {series: 'vllm:inter_token_latency_seconds_bucket{instance="itl",le="0.1"}', values: '0+500x12 6000x11 6500+500x12'}
      - {series: 'vllm:inter_token_latency_seconds_bucket{instance="itl",le="0.15"}', values: '0+500x37'}
      - {series: 'vllm:inter_token_latency_seconds_bucket{instance="itl",le="+Inf"}', values: '0+500x37'}
      - {series: 'vllm:inter_token_latency_seconds_count{instance="itl"}', values: '0+500x37'}
      - {series: 'up{instance="kvfull",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="kvfull"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="kvfull"}', values: '0x2 5x35'}
      - {series: 'vllm:generation_tokens_total{instance="kvfull"}', values: '0+100x37'}
      - {series: 'vllm:e2e_request_latency_seconds_count{instance="kvfull"}', values: '0+10x37'}
      - {series: 'vllm:num_preemptions_total{instance="kvfull"}', values: '0x11 20+20x25'}
      - {series: 'up{instance="kvrare",job="vllm"}', values: '1x37'}
      - {series: 'vllm:num_requests_running{instance="kvrare"}', values: '10x37'}
      - {series: 'vllm:num_requests_waiting{instance="kvrare"}', values: '0x2 5x35'}
      - {series: 'vllm:generation_tokens_total{instance="kvrare"}', values: '0+10000x37'}
      - {series: 'vllm:e2e_request_latency_seconds_count{instance="kvrare"}', values: '0+50x37'}
      - {series: 'vllm:request_prompt_tokens_sum{instance="kvrare"}', values: '0+50000x37'}
      - {series: 'vllm:request_prompt_tokens_count{instance="kvrare"}', values: '0+50x37'}
      - {series: 'vllm:request_generation_tokens_sum{instance="kvrare"}', values: '0+10000x37'}
      - {series: 'vllm:request_generation_tokens_count{instance="kvrare"}', values: '0+50x37'}
      - {series: 'vllm:num_preemptions_total{instance="kvrare"}', values: '0x11 1x25'}
    promql_expr_test:
` + `STEPS`

// timingStep is one assertion of the suite: at a time, the alerts of
// an instance by state (pending, firing), and whether its evidence holds.
type timingStep struct {
	at, instance, alert, state string // state "" for no alert
	evidence                   bool
	// condition is the recorded condition the evidence is read from; ""
	// for the alert's own (TTFT's for SLOW).
	condition string
}

var timingSteps = []timingStep{
	{"20s", "full", analysis.AlertFull, "", false, ""},
	{"25s", "full", analysis.AlertFull, "firing", true, ""},
	{"35s", "full", analysis.AlertFull, "firing", true, ""},
	{"40s", "full", analysis.AlertFull, "firing", false, ""},
	{"45s", "full", analysis.AlertFull, "", false, ""},
	{"60s", "slow", analysis.AlertSlow, "", false, ""},
	{"65s", "slow", analysis.AlertSlow, "pending", true, ""},
	{"70s", "slow", analysis.AlertSlow, "firing", true, ""},
	{"145s", "slow", analysis.AlertSlow, "firing", true, ""},
	{"150s", "slow", analysis.AlertSlow, "firing", false, ""},
	{"155s", "slow", analysis.AlertSlow, "", false, ""},
	{"60s", "down", analysis.AlertDown, "", false, ""},
	{"65s", "down", analysis.AlertDown, "firing", true, ""},
	{"185s", "down", analysis.AlertDown, "firing", true, ""},
	{"185s", "down", analysis.AlertStale, "", true, ""},
	{"55s", "stale", analysis.AlertStale, "", false, ""},
	{"60s", "stale", analysis.AlertStale, "pending", true, ""},
	{"65s", "stale", analysis.AlertStale, "firing", true, ""},
	{"185s", "stale", analysis.AlertStale, "firing", true, ""},
	{"185s", "stale", analysis.AlertStalled, "", false, ""},
	{"35s", "stalled", analysis.AlertStalled, "", false, ""},
	{"40s", "stalled", analysis.AlertStalled, "firing", true, ""},
	{"185s", "stalled", analysis.AlertStalled, "firing", true, ""},
	{"185s", "stalled", analysis.AlertStale, "", false, ""},
	{"60s", "itl", analysis.AlertSlow, "", false, "vtop:state_slow_itl"},
	{"65s", "itl", analysis.AlertSlow, "pending", true, "vtop:state_slow_itl"},
	{"70s", "itl", analysis.AlertSlow, "firing", true, "vtop:state_slow_itl"},
	{"185s", "itl", analysis.AlertSlow, "firing", true, "vtop:state_slow_itl"},
	{"55s", "kvfull", analysis.AlertPreempting, "", false, ""},
	{"60s", "kvfull", analysis.AlertPreempting, "", true, recMaterial},
	{"60s", "kvfull", analysis.AlertPreempting, "", false, ""},
	{"60s", "kvfull", analysis.AlertFull, "firing", true, ""},
	{"65s", "kvfull", analysis.AlertPreempting, "firing", true, ""},
	{"60s", "kvrare", analysis.AlertPreempting, "", false, recMaterial},
	{"65s", "kvrare", analysis.AlertPreempting, "", false, ""},
	{"65s", "kvrare", analysis.AlertFull, "firing", true, ""},
}

// TestPromtoolTiming runs the timing suite against the default rules.
func TestPromtoolTiming(t *testing.T) {
	promtool := testutil.PrometheusTool(t, "promtool")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), render(t, FormatPrometheus, func(*Options) {}), 0o644); err != nil {
		t.Fatal(err)
	}
	var steps strings.Builder
	for _, s := range timingSteps {
		cond := condition(strings.ToLower(strings.TrimPrefix(s.alert, "Vtop")))
		switch {
		case s.condition != "":
			cond = s.condition
		case s.alert == analysis.AlertSlow:
			cond = latencies[0].condition()
		}
		steps.WriteString("      - {expr: 'count by (alertstate) (ALERTS{alertname=\"" + s.alert + "\", instance=\"" + s.instance + "\"})', eval_time: " + s.at)
		if s.state == "" {
			steps.WriteString(", exp_samples: []}\n")
		} else {
			steps.WriteString(", exp_samples: [{labels: '{alertstate=\"" + s.state + "\"}', value: 1}]}\n")
		}
		steps.WriteString("      - {expr: 'count(" + cond + "{instance=\"" + s.instance + "\"})', eval_time: " + s.at)
		if s.evidence {
			steps.WriteString(", exp_samples: [{labels: '{}', value: 1}]}\n")
		} else {
			steps.WriteString(", exp_samples: []}\n")
		}
	}
	suite := filepath.Join(dir, "timing.yml")
	if err := os.WriteFile(suite, []byte(strings.Replace(timingSuite, "STEPS", steps.String(), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := exec.Command(promtool, "test", "rules", suite).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, tail(string(msg), 40))
	}
}
