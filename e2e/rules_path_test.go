package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/rules"
	"github.com/vtop-dev/vtop/testutil"
)

// The fast path: a store that evaluates vtop's recording rules is read
// through what they recorded, one row per replica and figure, and the
// report is the raw path's at the rules' evaluation time. One fleet's
// history (the mixed scenario: healthy, full, slow, preempting) is
// back-filled into the store, which evaluates the rules at the present
// over it, every rulesStep (the history's scrape interval: one reading is
// one evaluation).
const (
	rulesReplicas = 4
	rulesStep     = time.Second
	// rulesEvaluations is how many evaluations are awaited before the
	// rules are read: enough for every steady state's for: and span
	// (PREEMPTING's 15 s is of the raw counters, back-filled).
	rulesEvaluations = 12
)

// rulesHistory writes the fleet's history and vtop's rules (with extra
// arguments) and returns their paths.
func rulesHistory(t *testing.T, ruleArgs ...string) (history, ruleFile string) {
	t.Helper()
	dir := t.TempDir()
	history, ruleFile = filepath.Join(dir, "history.om"), filepath.Join(dir, "vtop.yml")
	if out, errOut, code := testutil.RunVtop(t, "sim", "--replicas", strconv.Itoa(rulesReplicas), "--scenario", "mixed",
		"--history", "5m", "--step", rulesStep.String(), "--end", "now+3m", "-o", history); code != 0 {
		t.Fatalf("vtop sim --history: exit %d\n%s%s", code, out, errOut)
	}
	args := append([]string{"rules", "--evaluation-interval", rulesStep.String(), "-o", ruleFile}, ruleArgs...)
	if out, errOut, code := testutil.RunVtop(t, args...); code != 0 {
		t.Fatalf("vtop rules: exit %d\n%s%s", code, out, errOut)
	}
	return history, ruleFile
}

// rawLead is how many evaluations the raw path's chain of reports begins
// before the first it is compared at: enough for its hysteresis to hold
// what it holds live.
const rawLead = 4

// vmalertLag is how many evaluations vmalert's states may lag the raw
// path's: each step of the rules' chain (figures, conditions, the alerts
// a condition reads) reads the step before it back from the store, which
// holds it only after a flush.
const vmalertLag = 3

// waitEvaluations waits until the store holds n of the rules'
// evaluations; log is shown if it does not.
func waitEvaluations(t *testing.T, url string, n int, log func() string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		v := vectorAt(t, url, fmt.Sprintf("count_over_time(%s[1m])", promql.RecordedInfo), time.Now())
		if len(v) > 0 && int(v[0].Value) >= n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("fewer than %d of the rules' evaluations within 90 s; the evaluator's log: %s", n, log())
}

// readOnce runs a source until its first refresh is in and returns its
// readings, their time and its status; wanted are the replicas it is
// told are wanted in detail.
func readOnce(t *testing.T, cfg promsource.Config, wanted ...string) ([]catalogue.Readings, time.Time, catalogue.SourceStatus) {
	t.Helper()
	src, err := promsource.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.SetWanted(wanted)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = src.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-src.Refresh()
	readings, at := src.ReadingsAt(nil)
	return readings, at, src.Status()
}

// recordedFigure is one figure the fast path reads, of a report.
type recordedFigure struct {
	name  string
	of    func(*analysis.ReplicaReport) analysis.Num
	gauge bool // a reading at the evaluation time, not over the window
}

var recordedFigures = []recordedFigure{
	{"running", func(r *analysis.ReplicaReport) analysis.Num { return r.Running }, true},
	{"waiting", func(r *analysis.ReplicaReport) analysis.Num { return r.Waiting }, true},
	{"requests/s", func(r *analysis.ReplicaReport) analysis.Num { return r.RequestsPerSecond }, false},
	{"prompt tokens/s", func(r *analysis.ReplicaReport) analysis.Num { return r.PromptTokensPerSecond }, false},
	{"generation tokens/s", func(r *analysis.ReplicaReport) analysis.Num { return r.GenerationTokensPerSecond }, false},
	{"preemptions/s", func(r *analysis.ReplicaReport) analysis.Num { return r.PreemptionsPerSecond }, false},
	{"recomputed tokens/s", func(r *analysis.ReplicaReport) analysis.Num { return r.RecomputedTokensPerSecond }, false},
	{"TTFT p99", func(r *analysis.ReplicaReport) analysis.Num { return r.TTFT.P99 }, false},
	{"TTFT p50", func(r *analysis.ReplicaReport) analysis.Num { return r.TTFT.P50 }, false},
	{"TTFT observations", func(r *analysis.ReplicaReport) analysis.Num { return r.TTFT.Observations }, false},
	{"ITL p99", func(r *analysis.ReplicaReport) analysis.Num { return r.ITL.P99 }, false},
	{"ITL p50", func(r *analysis.ReplicaReport) analysis.Num { return r.ITL.P50 }, false},
	{"ITL observations", func(r *analysis.ReplicaReport) analysis.Num { return r.ITL.Observations }, false},
}

// relClose: both unknown, or equal to tol relative (absolute near 0).
func relClose(a, b analysis.Num, tol float64) bool {
	if !a.Known() || !b.Known() {
		return a.Known() == b.Known()
	}
	return math.Abs(float64(a-b)) <= tol*max(math.Abs(float64(a)), math.Abs(float64(b)), 1e-9)
}

// urgentThroughout reports whether s and every state of raw ask for
// action (analysis.NeedsAction).
func urgentThroughout(s analysis.State, raw []analysis.State) bool {
	if !analysis.NeedsAction(s) || len(raw) == 0 {
		return false
	}
	for _, w := range raw {
		if !analysis.NeedsAction(w) {
			return false
		}
	}
	return true
}

// rulesAgainstRaw reads the store through the fast path, then through the
// raw path as a live vtop would have read it up to the rules' evaluation
// time, and compares the reports: figures to 1e-6 relative, states equal
// (or equal to the raw path's at one of the lag evaluations before, for
// an evaluator that lags). With metricsQL the windowed figures are the
// store's MetricsQL, not the raw path's (see
// TestRulesPathVictoriaMetrics): the gauges are held to the raw path's,
// the rest to the store's own evaluation (rulesAgainstStore), and their
// differences from the raw path's are logged.
func rulesAgainstRaw(t *testing.T, url string, metricsQL bool, lag int) {
	t.Helper()
	cfg := analysis.DefaultConfig()
	base := promsource.Config{URL: url, Selector: `{job="vllm"}`, Interval: rulesStep, Window: cfg.Window}
	readings, at, st := readOnce(t, fastPath(base, cfg))
	if st.Path != promsource.PathRules || st.Problem != "" || len(readings) != rulesReplicas {
		t.Fatalf("the fast path: path %q, problem %q, warnings %q, %d replicas; want %q and %d", st.Path, st.Problem, st.Warnings, len(readings), promsource.PathRules, rulesReplicas)
	}
	// The raw path as a live vtop reads it, one report an evaluation,
	// each with the one before (its hysteresis), up to the rules'
	// evaluation time; the states of the last lag+1 are those a lagging
	// evaluator may show.
	rawOf := map[string]*analysis.ReplicaReport{}
	earlier := map[string][]analysis.State{}
	var prev *analysis.Report
	for k := lag + rawLead; k >= 0; k-- {
		when := at.Add(-time.Duration(k) * rulesStep)
		raw := base
		raw.Now = func() time.Time { return when.Add(time.Second) } // the source evaluates a second in the past
		rawReadings, rawAt, rawSt := readOnce(t, raw)
		if rawSt.Path != promsource.PathRaw || !rawAt.Equal(when) {
			t.Fatalf("the raw path: path %q at %s, want %q at %s", rawSt.Path, rawAt, promsource.PathRaw, when)
		}
		fromRaw := analysis.Analyze(when, rawReadings, cfg, prev)
		prev = &fromRaw
		for i := range fromRaw.Replicas {
			r := &fromRaw.Replicas[i]
			if k == 0 {
				rawOf[r.Target] = r
			}
			if k <= lag {
				earlier[r.Target] = append(earlier[r.Target], r.State)
			}
		}
	}
	if metricsQL {
		rulesAgainstStore(t, url, readings, at, lag)
	}
	fromRules := analysis.Analyze(at, readings, cfg, nil)
	states := map[string]int{}
	for i := range fromRules.Replicas {
		r := &fromRules.Replicas[i]
		w := rawOf[r.Target]
		if w == nil {
			t.Errorf("replica %s: through the rules, not through the raw series", r.Target)
			continue
		}
		states[r.State.String()]++
		switch {
		case r.Recorded && slices.Contains(earlier[r.Target], r.State):
		case r.Recorded && metricsQL && urgentThroughout(r.State, earlier[r.Target]):
			// Through vmalert a rule counting the group's own newest rows
			// sees only those flushed back: a move between urgent states
			// can come late (docs/prometheus.md). Urgent both ways is
			// required; which urgent state, through Prometheus alone.
			t.Logf("replica %s: %s through the rules, %v through the raw series: vmalert's flush lag between urgent states", r.Target, r.State, earlier[r.Target])
		default:
			t.Errorf("replica %s: %s through the rules (recorded %v), %v through the raw series at the evaluation and the %d before (%q)",
				r.Target, r.State, r.Recorded, earlier[r.Target], lag, w.Reasons)
		}
		for _, f := range recordedFigures {
			got, want := f.of(r), f.of(w)
			if metricsQL && !f.gauge {
				t.Logf("replica %s: %s %v through the rules, %v through the raw series (%+.1f%%)", r.Target, f.name, got, want, 100*(got-want)/want)
				continue
			}
			if !relClose(got, want, 1e-6) {
				t.Errorf("replica %s: %s %v through the rules, %v through the raw series", r.Target, f.name, got, want)
			}
		}
	}
	if len(states) < 3 {
		t.Errorf("states %v: the mixed fleet should show at least three", states)
	}
	t.Logf("at the rules' evaluation %s: states %v through the rules", at.Format(time.RFC3339Nano), states)
}

// storeFigure is a windowed figure of the fast path, as the store
// evaluates its rule. chained: the rule reads what an earlier rule of the
// group recorded, which vmalert reads back from the store a flush later.
type storeFigure struct {
	record  string
	of      func(*catalogue.Recorded) float64
	chained bool
}

var storeFigures = []storeFigure{
	{promql.RecordedRequests, func(r *catalogue.Recorded) float64 { return r.Requests }, false},
	{promql.RecordedPrompted, func(r *catalogue.Recorded) float64 { return r.PromptTokens }, false},
	{promql.RecordedGenerated, func(r *catalogue.Recorded) float64 { return r.GenerationTokens }, false},
	{promql.RecordedPreempted, func(r *catalogue.Recorded) float64 { return r.Preemptions }, false},
	{promql.RecordedObservations(promql.LatencyTTFT), func(r *catalogue.Recorded) float64 { return r.TTFT.Observations }, false},
	{promql.RecordedObservations(promql.LatencyITL), func(r *catalogue.Recorded) float64 { return r.ITL.Observations }, false},
	{promql.RecordedRecomputed, func(r *catalogue.Recorded) float64 { return r.RecomputedTokens }, false},
	{promql.RecordedQuantile(promql.LatencyTTFT, "p99"), func(r *catalogue.Recorded) float64 { return r.TTFT.P99 }, true},
	{promql.RecordedQuantile(promql.LatencyTTFT, "p50"), func(r *catalogue.Recorded) float64 { return r.TTFT.P50 }, true},
	{promql.RecordedQuantile(promql.LatencyITL, "p99"), func(r *catalogue.Recorded) float64 { return r.ITL.P99 }, true},
	{promql.RecordedQuantile(promql.LatencyITL, "p50"), func(r *catalogue.Recorded) float64 { return r.ITL.P50 }, true},
}

// rulesAgainstStore checks that each windowed figure the fast path read
// at the evaluation time at is the store's own evaluation of its rule's
// expression then, to 1e-6; for a chained rule, then or at one of the lag
// evaluations before it, as the rows it reads back may be.
func rulesAgainstStore(t *testing.T, url string, readings []catalogue.Readings, at time.Time, lag int) {
	t.Helper()
	o := rules.DefaultOptions()
	o.EvaluationInterval = rulesStep
	file, err := rules.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	exprOf := map[string]string{}
	for _, r := range file.Groups[0].Rules {
		exprOf[r.Record] = r.Expr
	}
	for _, f := range storeFigures {
		// The store's value of each replica at the evaluations allowed.
		byReplica := map[string][]float64{}
		for k := 0; k <= lag && (k == 0 || f.chained); k++ {
			for _, s := range vectorAt(t, url, exprOf[f.record], at.Add(-time.Duration(k)*rulesStep)) {
				name := string(s.Metric["instance"])
				byReplica[name] = append(byReplica[name], float64(s.Value))
			}
		}
		for _, r := range readings {
			got := analysis.Num(f.of(r.Recorded))
			if !slices.ContainsFunc(byReplica[r.Target], func(v float64) bool { return relClose(got, analysis.Num(v), 1e-6) }) {
				t.Errorf("replica %s: %s %v through the rules; the store's evaluation of its rule: %v", r.Target, f.record, got, byReplica[r.Target])
			}
		}
	}
}

// fastPath is cfg reading the store's rules of the settings of acfg.
func fastPath(cfg promsource.Config, acfg analysis.Config) promsource.Config {
	cfg.Rules = promql.RulesSettings{Window: acfg.Window, SLOTTFT: acfg.SLOTTFT, SLOITL: acfg.SLOITL, Hysteresis: acfg.Hysteresis}
	return cfg
}

// wantedRaw checks that the fast path reads the raw series of the replica
// wanted in detail, at the rules' evaluation time: its report is the raw
// path's, with what the rules do not record (the KV cache usage), while
// the others' are the rules'.
func wantedRaw(t *testing.T, url, wanted string) {
	t.Helper()
	cfg := analysis.DefaultConfig()
	base := promsource.Config{URL: url, Selector: `{job="vllm"}`, Interval: rulesStep, Window: cfg.Window}
	readings, at, st := readOnce(t, fastPath(base, cfg), wanted)
	raw := base
	raw.Now = func() time.Time { return at.Add(time.Second) }
	rawReadings, _, _ := readOnce(t, raw)
	fast, slow := analysis.Analyze(at, readings, cfg, nil), analysis.Analyze(at, rawReadings, cfg, nil)
	if st.Path != promsource.PathRules || len(fast.Replicas) != rulesReplicas {
		t.Fatalf("path %q, %d replicas", st.Path, len(fast.Replicas))
	}
	for i := range fast.Replicas {
		r := &fast.Replicas[i]
		if r.Recorded != (r.Target != wanted) {
			t.Errorf("replica %s: recorded %v; want the raw series read for %s alone", r.Target, r.Recorded, wanted)
		}
		if r.Target != wanted {
			continue
		}
		for j := range slow.Replicas {
			w := &slow.Replicas[j]
			if w.Target == wanted && (w.State != r.State || !r.KVCacheUsage.Known() || !relClose(r.KVCacheUsage, w.KVCacheUsage, 1e-9) || !relClose(r.TTFT.P90, w.TTFT.P90, 1e-9)) {
				t.Errorf("replica %s wanted: %s, KV %v, TTFT p90 %v; the raw path: %s, KV %v, TTFT p90 %v", wanted, r.State, r.KVCacheUsage, r.TTFT.P90, w.State, w.KVCacheUsage, w.TTFT.P90)
			}
		}
	}
}

// TestRulesPathPrometheus: a real Prometheus evaluating vtop's rules over
// a back-filled fleet; the fast path's report equals the raw path's at
// the rules' evaluation time, figures to 1e-6 and states alike.
func TestRulesPathPrometheus(t *testing.T) {
	t.Parallel()
	testutil.PrometheusTool(t, "promtool")
	history, ruleFile := rulesHistory(t)
	prom := testutil.EvaluateRules(t, testutil.ServeBlocks(t, testutil.Backfill(t, history)), rulesStep, ruleFile)
	waitEvaluations(t, prom.URL(), rulesEvaluations, prom.Log)
	rulesAgainstRaw(t, prom.URL(), false, 0)
	wantedRaw(t, prom.URL(), "vllm-2:8000")

	// Rules of other settings are not read, and the status says why.
	cfg := analysis.DefaultConfig()
	cfg.Window = time.Minute
	_, _, st := readOnce(t, fastPath(promsource.Config{URL: prom.URL(), Interval: rulesStep, Window: cfg.Window}, cfg))
	if st.Path != promsource.PathRaw || !slices.ContainsFunc(st.Warnings, func(w string) bool {
		return strings.Contains(w, "window 30s (this vtop: 1m)") && strings.Contains(w, "vtop rules")
	}) {
		t.Errorf("rules of a 30s window read with a 1m one: path %q, warnings %q; want the raw path and why", st.Path, st.Warnings)
	}
}

// TestRulesPathVictoriaMetrics: VictoriaMetrics, with its default
// settings, and Debian's vmalert evaluating vtop's rules in vmalert's
// format (asking with nocache=1; without keep_firing_for:, which this
// vmalert does not read) over the same back-filled fleet: the states are
// the raw path's (an urgent one may be another urgent one, vmalert's
// flush lag: urgentThroughout), the gauges too; the windowed figures are the store's
// own evaluation of their rules at the evaluation time (MetricsQL's
// increase() does not extrapolate, the raw path does: their differences
// are logged). VictoriaMetrics' default latency offset answers a query of
// its last 30 s as of 30 s before unless asked with nocache=1: rules that
// do not ask so record the figures of 30 s before, and the states that
// read them back later still.
func TestRulesPathVictoriaMetrics(t *testing.T) {
	t.Parallel()
	VictoriaMetricsBinary(t)
	history, ruleFile := rulesHistory(t, "--no-keep-firing-for", "--format", "vmalert")
	vm := StartVictoriaMetrics(t)
	vm.Import(history, func() bool { return targetsIn(t, vm.URL()) == rulesReplicas })
	alert := StartVMAlert(t, vm, rulesStep, ruleFile)
	// vmalert reads what the group's earlier rules wrote back from the
	// store, a flush later: each step of the rules' chain lags an
	// evaluation, and the states take more evaluations to settle.
	waitEvaluations(t, vm.URL(), 4*rulesEvaluations, alert.Log)
	rulesAgainstRaw(t, vm.URL(), true, vmalertLag)
}

// TestRulesPathVMAlertStamps: rows as vmalert writes them at a 5s
// interval, into a real VictoriaMetrics: the records (vtop:rules_info
// among them) at the evaluation's time aligned to the interval, the
// alerts at the second the evaluation began, 4 s later. The fast path
// reads the alerts of that evaluation (at a 1s interval, which
// TestRulesPathVictoriaMetrics runs, the two stamps are one second).
func TestRulesPathVMAlertStamps(t *testing.T) {
	t.Parallel()
	VictoriaMetricsBinary(t)
	const every = 5 * time.Second
	cfg := analysis.DefaultConfig()
	settings := promql.RulesSettings{Window: cfg.Window, SLOTTFT: cfg.SLOTTFT, SLOITL: cfg.SLOITL, Hysteresis: cfg.Hysteresis, GroupBy: []string{"instance"}}
	var info []string
	for _, l := range promql.InfoLabels(settings, every) {
		info = append(info, fmt.Sprintf("%s=%q", l[0], l[1]))
	}
	// Evaluations from 10 s ago to a minute ahead: whenever the source
	// reads, the newest is within the interval.
	var text strings.Builder
	first := time.Now().Add(-2 * every).Truncate(every)
	for at := first; at.Before(first.Add(time.Minute + 2*every)); at = at.Add(every) {
		fmt.Fprintf(&text, `up{job="vllm",instance="vllm-0:8000"} 1 %[1]d
up{job="vllm",instance="vllm-1:8000"} 1 %[1]d
vtop:waiting{instance="vllm-0:8000"} 40 %[1]d
vtop:waiting{instance="vllm-1:8000"} 0 %[1]d
vtop:rules_info{%[2]s} %[3]d %[1]d
ALERTS{alertname="VtopFull",alertstate="firing",alertgroup="vtop",severity="critical",vtop_state="FULL",instance="vllm-0:8000"} 1 %[4]d
`, at.UnixMilli(), strings.Join(info, ","), at.Unix(), at.UnixMilli()+4000)
	}
	path := filepath.Join(t.TempDir(), "vmalert.prom")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	vm := StartVictoriaMetrics(t)
	vm.Import(path, func() bool { return len(vectorAt(t, vm.URL(), "ALERTS", first.Add(every))) == 1 })
	readings, when, st := readOnce(t, fastPath(promsource.Config{URL: vm.URL(), Selector: `{job="vllm"}`, Interval: every, Window: cfg.Window}, cfg))
	if st.Path != promsource.PathRules || !when.Equal(when.Truncate(every)) || len(readings) != 2 {
		t.Fatalf("path %q at %s, %d replicas, warnings %q; want the rules of an evaluation every %s, 2 replicas", st.Path, when, len(readings), st.Warnings, every)
	}
	for _, r := range readings {
		want := []string(nil)
		if r.Target == "vllm-0:8000" {
			want = []string{"full"}
		}
		if !slices.Equal(r.Recorded.Firing, want) {
			t.Errorf("replica %s: firing %q, want %q", r.Target, r.Recorded.Firing, want)
		}
	}
}
