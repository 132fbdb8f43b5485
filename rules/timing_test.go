package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
    promql_expr_test:
` + `STEPS`

// timingStep is one assertion of the suite: at a time, the alerts of
// an instance by state (pending, firing), and whether its evidence holds.
type timingStep struct {
	at, instance, alert, state string // state "" for no alert
	evidence                   bool
}

var timingSteps = []timingStep{
	{"20s", "full", AlertFull, "", false},
	{"25s", "full", AlertFull, "firing", true},
	{"35s", "full", AlertFull, "firing", true},
	{"40s", "full", AlertFull, "firing", false},
	{"45s", "full", AlertFull, "", false},
	{"60s", "slow", AlertSlow, "", false},
	{"65s", "slow", AlertSlow, "pending", true},
	{"70s", "slow", AlertSlow, "firing", true},
	{"145s", "slow", AlertSlow, "firing", true},
	{"150s", "slow", AlertSlow, "firing", false},
	{"155s", "slow", AlertSlow, "", false},
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
		if s.alert == AlertSlow {
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
