package rules

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/bench/verdicts"
	"github.com/vtop-dev/vtop/testutil"
)

// The promtool suites replay scenarios of the judgement benchmark
// (bench/verdicts: a queueing model whose true state at every second is
// known) as promtool's input series, and assert at checkpoints the alerts
// that must fire and those that must not. A checkpoint is a time whose
// truth has held over the whole window and some evaluations more, and
// which vtop itself shows: there, vtop's judgement is settled, and the
// rules must say the same.

// suiteScenarios are the benchmark's scenarios replayed (the mixed fleet
// repeats the others).
var suiteScenarios = []string{"steady healthy", "steady full", "preempting", "KV limit", "slow", "idle", "restart", "spike", "stall"}

// suiteSeed is the seed the suites run with.
const suiteSeed = 1

// readFamilies are the vLLM families the suites feed the rules: the ones
// the rules read of the model's page.
var readFamilies = []string{
	"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:num_preemptions_total",
	"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
	"vllm:time_to_first_token_seconds_bucket", "vllm:time_to_first_token_seconds_count",
	"vllm:inter_token_latency_seconds_bucket", "vllm:inter_token_latency_seconds_count",
	"vllm:e2e_request_latency_seconds_count", "vllm:request_prompt_tokens_sum", "vllm:request_prompt_tokens_count",
	"vllm:request_generation_tokens_sum", "vllm:request_generation_tokens_count",
}

// alertOf is the alert a true state must raise; "" for none.
var alertOf = map[analysis.State]string{
	analysis.StateDown: analysis.AlertDown, analysis.StatePreempting: analysis.AlertPreempting, analysis.StateFull: analysis.AlertFull,
	analysis.StateSlow: analysis.AlertSlow, analysis.StateIdle: analysis.AlertIdle, analysis.StateStalled: analysis.AlertStalled, analysis.StateHealthy: "",
}

// replay is one scenario's replicas: their pages every evaluation, their
// truth and vtop's states every second.
type replay struct {
	name     string
	seconds  int
	series   map[string][]string // promtool series → one value per evaluation
	up       map[string][]string // instance → up per evaluation
	truth    [][]analysis.State  // replica → second−1
	shown    [][]analysis.State
	replicas []string
}

// replayScenario steps the scenario's model, reading its page every
// interval, and runs the benchmark for vtop's states on the same model.
func replayScenario(t *testing.T, sc verdicts.Scenario, interval time.Duration) replay {
	t.Helper()
	run, err := verdicts.RunScenario(sc, suiteSeed)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay{name: sc.Name, seconds: sc.Seconds, series: map[string][]string{}, up: map[string][]string{}}
	every := int(interval / time.Second)
	evaluations := sc.Seconds/every + 1
	steps := int(math.Round(1 / verdicts.StepSeconds))
	for i, c := range sc.Replicas {
		// The benchmark seeds replica i of a run with seed×1000+i: the
		// same model, step for step.
		r := verdicts.NewReplica(c, suiteSeed*1000+uint64(i))
		instance := run.Replicas[i].Target
		rp.replicas = append(rp.replicas, instance)
		rp.truth = append(rp.truth, run.Replicas[i].Truth)
		rp.shown = append(rp.shown, run.Replicas[i].Shown)
		for sec := 0; sec <= sc.Seconds; sec++ {
			if sec > 0 {
				for range steps {
					r.Advance(verdicts.StepSeconds)
				}
			}
			if sec%every != 0 {
				continue
			}
			at := sec / every
			if sec > 0 && !r.Steps[len(r.Steps)-1].Up {
				rp.up[instance] = setAt(rp.up[instance], at, evaluations, "0")
				continue
			}
			rp.up[instance] = setAt(rp.up[instance], at, evaluations, "1")
			body, err := r.Exporter.Page()
			if err != nil {
				t.Fatal(err)
			}
			for name, value := range pageSeries(body, instance) {
				rp.series[name] = setAt(rp.series[name], at, evaluations, value)
			}
		}
	}
	return rp
}

// setAt sets values[at] in a list of n values, the others missing ("_").
func setAt(values []string, at, n int, v string) []string {
	if values == nil {
		values = make([]string, n)
		for i := range values {
			values[i] = "_"
		}
	}
	values[at] = v
	return values
}

// pageSeries are the series of a page the rules read, named as promtool's
// input series are (with the replica's instance and job), and their
// values.
func pageSeries(body []byte, instance string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		series, value := line[:i], line[i+1:]
		name, labels, _ := strings.Cut(series, "{")
		if !slices.Contains(readFamilies, name) {
			continue
		}
		labels = strings.TrimSuffix(labels, "}")
		extra := fmt.Sprintf(`instance="%s",job="vllm"`, instance)
		if labels != "" {
			extra = labels + "," + extra
		}
		out[name+"{"+extra+"}"] = value
	}
	return out
}

// checkpoint is a time at which the alerts are asserted.
type checkpoint struct {
	second int
	firing map[string]string // instance → the alert that must fire ("" for none)
}

// checkpoints are the evaluations, after the first window, at which every
// replica's truth has held for the window and three evaluations more, and
// vtop shows it.
func (rp replay) checkpoints(o Options) []checkpoint {
	every := int(o.EvaluationInterval / time.Second)
	settle := int((o.Config.Window+3*o.EvaluationInterval)/time.Second) + 1
	var cps []checkpoint
	for sec := (settle + every - 1) / every * every; sec <= rp.seconds; sec += every {
		cp, ok := checkpoint{second: sec, firing: map[string]string{}}, true
		for i, instance := range rp.replicas {
			truth := rp.truth[i][sec-1]
			alert, known := alertOf[truth]
			ok = ok && known && rp.shown[i][sec-1] == truth
			for s := sec - settle + 1; s <= sec && ok; s++ {
				ok = rp.truth[i][s-1] == truth
			}
			cp.firing[instance] = alert
		}
		if ok {
			cps = append(cps, cp)
		}
	}
	return cps
}

// alertLabels are the labels of the alert a state raises.
func alertLabels(b builder, alert string) map[string]string {
	for _, r := range b.alerts() {
		if r.Alert == alert {
			m := map[string]string{"alertname": alert}
			for _, p := range r.Labels {
				m[p.Name] = p.Value
			}
			if alert == analysis.AlertSlow {
				m["latency"] = "ttft" // the benchmark's SLOW is TTFT's: ITL is within its SLO in every scenario
			}
			return m
		}
	}
	return nil
}

// writeSuite writes the promtool test file of a replay.
func writeSuite(rp replay, o Options, ruleFile string) []byte {
	b := builder{o: o}
	var w bytes.Buffer
	e := dur(o.EvaluationInterval)
	fmt.Fprintf(&w, "# The judgement benchmark's scenario %q (seed %d) replayed for `promtool test rules`:\n", rp.name, suiteSeed)
	w.WriteString("# written by the rules package's tests (go test ./rules -run TestPromtoolSuites -update).\n")
	fmt.Fprintf(&w, "rule_files:\n  - %s\nevaluation_interval: %s\ntests:\n  - interval: %s\n    input_series:\n", ruleFile, e, e)
	names := make([]string, 0, len(rp.series))
	for name := range rp.series {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, instance := range rp.replicas {
		fmt.Fprintf(&w, "      - series: %s\n        values: %s\n", quote(fmt.Sprintf(`up{instance="%s",job="vllm"}`, instance)),
			quote(strings.Join(rp.up[instance], " ")))
	}
	for _, name := range names {
		fmt.Fprintf(&w, "      - series: %s\n        values: %s\n", quote(name), quote(strings.Join(rp.series[name], " ")))
	}
	w.WriteString("    promql_exp_test:\n")
	var rules, exprs bytes.Buffer
	for _, cp := range rp.checkpoints(o) {
		at := dur(time.Duration(cp.second) * time.Second)
		fmt.Fprintf(&exprs, "      - expr: 'ALERTS{alertstate=\"firing\"}'\n        eval_time: %s\n        exp_samples:\n", at)
		for _, instance := range rp.replicas {
			if alert := cp.firing[instance]; alert != "" {
				labels := alertLabels(b, alert)
				labels["instance"], labels["alertstate"] = instance, "firing"
				fmt.Fprintf(&exprs, "          - labels: %s\n            value: 1\n", quote("ALERTS"+labelText(labels)))
			}
		}
		for _, alert := range []string{analysis.AlertDown, analysis.AlertPreempting, analysis.AlertFull, analysis.AlertSlow, analysis.AlertStale, analysis.AlertIdle} {
			var firing []string
			for _, instance := range rp.replicas {
				if cp.firing[instance] == alert {
					firing = append(firing, instance)
				}
			}
			if len(firing) == 0 {
				fmt.Fprintf(&rules, "      - eval_time: %s\n        alertname: %s\n        exp_alerts: []\n", at, alert)
			}
		}
	}
	out := strings.Replace(w.String(), "    promql_exp_test:\n", "", 1)
	out += "    promql_expr_test:\n" + exprs.String()
	if rules.Len() > 0 {
		out += "    alert_rule_test:\n" + rules.String()
	}
	return []byte(out)
}

// labelText is a label set as PromQL writes it, sorted.
func labelText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestPromtoolSuites writes the suites of the benchmark's scenarios under
// testdata/promtool (with -update), holds them to what the benchmark
// gives now, and runs promtool test rules on them against the default
// rule file.
func TestPromtoolSuites(t *testing.T) {
	promtool := testutil.PrometheusTool(t, "promtool")
	o := DefaultOptions()
	dir := filepath.Join("testdata", "promtool")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range verdicts.Scenarios() {
		if !slices.Contains(suiteScenarios, sc.Name) {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			rp := replayScenario(t, sc, o.EvaluationInterval)
			if len(rp.checkpoints(o)) == 0 {
				t.Fatal("no checkpoint: the suite would assert nothing")
			}
			got := writeSuite(rp, o, "../default.yml")
			path := filepath.Join(dir, strings.ReplaceAll(sc.Name, " ", "-")+".yml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the suite the benchmark gives now; -update rewrites it", path)
			}
			msg, err := exec.Command(promtool, "test", "rules", path).CombinedOutput()
			if err != nil {
				t.Fatalf("promtool test rules %s: %v\n%s", path, err, tail(string(msg), 60))
			}
		})
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
