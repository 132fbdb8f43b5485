package verdicts

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/testutil"
)

var (
	goals = flag.Bool("verdicts.goals", false, "fail TestJudgementBenchmark when vtop's verdicts miss the goals of the judgement")
	trace = flag.String("verdicts.trace", "", "log the seconds of this scenario at which vtop's state differs from the truth")
	out   = flag.String("verdicts.out", "", "also write the report's tables (Markdown) to this file")
)

// seeds are the seeds every scenario runs with.
var seeds = []uint64{1, 2, 3}

// scenarioTruth is the state each scenario exists to show: its truth
// must take it.
var scenarioTruth = map[string]analysis.State{
	"steady healthy":  analysis.StateHealthy,
	"steady full":     analysis.StateFull,
	"KV limit":        analysis.StateFull,
	"preempting":      analysis.StatePreempting,
	"slow":            analysis.StateSlow,
	"idle":            analysis.StateIdle,
	"restart":         analysis.StateDown,
	"stall":           analysis.StateStalled,
	"spike":           analysis.StateFull,
	"big spike":       analysis.StateFull,
	"aborts at full":  analysis.StateFull,
	"slow fill":       analysis.StateFull,
	"backlog drains":  analysis.StateRecovering,
	"timeout round":   analysis.StateHealthy,
	"never answering": analysis.StateFull,
	"just under SLO":  analysis.StateHealthy,
	"just over SLO":   analysis.StateSlow,
	"mixed fleet":     analysis.StatePreempting,
}

// TestJudgementBenchmark runs every scenario with every seed and logs
// the report (go test -v). It checks that the harness works; with
// -verdicts.goals it also fails when vtop's verdicts miss the goals.
// Under the race detector it runs the first seed only; under -short not
// at all (the benchmark is simulation and analysis alone, with no
// goroutines for the race detector to watch; .ci/run runs it in a stage
// of its own).
func TestJudgementBenchmark(t *testing.T) {
	testutil.SkipShort(t, "every scenario through minutes of simulated time")
	seeds := seeds
	if raceEnabled {
		seeds = seeds[:1] // the harness is checked as well on one seed
	}
	res, runs, err := Benchmark(Scenarios(), seeds)
	if err != nil {
		t.Fatal(err)
	}
	table := res.Table()
	t.Log("\n" + table)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range runs {
		if run.Scenario == *trace {
			t.Log("\n" + Trace(run))
		}
	}

	// The harness: every scenario scored, its truth taking the state it
	// is there for, the truth as a whole not one state, every column.
	if len(res.Scenarios) < 10 {
		t.Errorf("%d scenarios, want at least 10", len(res.Scenarios))
	}
	for _, name := range res.Scenarios {
		tally := res.By[name]
		if tally.Scored == 0 || tally.ReplicaSeconds == 0 {
			t.Errorf("%s: %d scored of %d replica-seconds", name, tally.Scored, tally.ReplicaSeconds)
		}
		want, ok := scenarioTruth[name]
		if !ok {
			t.Errorf("%s: no state the scenario is for", name)
			continue
		}
		if n := tally.TruthSeconds(want) + countTruth(runs, name, want); n == 0 {
			t.Errorf("%s: the truth is never %s", name, want)
		}
		if tally.AdviceScored == 0 {
			t.Errorf("%s: no fleet advice scored", name)
		}
	}
	states := 0
	for _, s := range JudgedStates {
		if res.All.TruthSeconds(s) > 0 {
			states++
		}
	}
	if states < len(JudgedStates) {
		t.Errorf("the scored truth takes %d of the %d states", states, len(JudgedStates))
	}
	for _, column := range []string{"replica-s", "scored", "right", "false-HEALTHY", "false-HEALTHY in grace", "HEALTHY over SLO or not healthy", "false-DOWN", "worst never up", "SLOW while FULL",
		"flaps / replica-h", "transitions", "advice ±10 %", "advice over +20 % after FULL", "advice changes / h", "precision", "recall", "median s", "truth \\ shown"} {
		if !strings.Contains(table, column) {
			t.Errorf("the report has no column %q", column)
		}
	}
	if !*goals {
		return
	}
	checkGoals(t, res)
}

// countTruth counts the seconds of a scenario's runs truly in state s,
// grace included (DOWN is shorter than a grace in some runs).
func countTruth(runs []Run, scenario string, s analysis.State) int {
	n := 0
	for _, run := range runs {
		if run.Scenario != scenario {
			continue
		}
		for _, tl := range run.Replicas {
			for _, truth := range tl.Truth {
				if truth == s {
					n++
				}
			}
		}
	}
	return n
}

// checkGoals fails on every goal of the judgement that vtop misses.
func checkGoals(t *testing.T, res *Result) {
	all := res.All
	if all.FalseHealthy > 0 {
		t.Errorf("goal: 0 false-HEALTHY seconds after the least evidence; %d", all.FalseHealthy)
	}
	if all.HealthyWrong > 0 {
		t.Errorf("goal: 0 seconds shown HEALTHY while a window figure of vtop's report is over its SLO or the truth is not healthy; %d", all.HealthyWrong)
	}
	if share := all.RightShare(); !(share >= 0.98) {
		t.Errorf("goal: ≥ 98 %% of seconds right; %s", pct(share))
	}
	for _, name := range res.Scenarios {
		if f := res.By[name].FlapsPerHour(); res.Steady[name] && !(f <= 1) {
			t.Errorf("goal: ≤ 1 flap per replica-hour in steady scenarios; %s: %s", name, num(f))
		}
	}
	if late, missed, worst := lateTransitions(all, analysis.StateStalled, StallNamedWithin); late+missed > 0 || len(all.Delays[analysis.StateStalled]) == 0 {
		t.Errorf("goal: a stall named within %d s; %d of %d later (up to %d s), %d never shown",
			StallNamedWithin, late, len(all.Delays[analysis.StateStalled]), worst, missed)
	}
	if late, missed, worst := lateTransitions(all, analysis.StateFull, Grace); late+missed > 0 {
		t.Errorf("goal: FULL within %d s of a queue persisting at the cap; %d later (up to %d s), %d never shown", Grace, late, worst, missed)
	}
	if all.FalseDown > 0 {
		t.Errorf("goal: 0 seconds DOWN while the process is up (a single round of timeouts is late, not DOWN); %d", all.FalseDown)
	}
	if d := all.Delays[analysis.StateDown]; len(d) == 0 || slices.Max(d) > 0 || all.Missed[analysis.StateDown] > 0 {
		t.Errorf("goal: DOWN at once when the process dies (a refused connection); delays %v, %d never shown", d, all.Missed[analysis.StateDown])
	}
	if all.WorstNeverUp > 0 {
		t.Errorf("goal: a target that never answered is never the worst while a live replica is in trouble; %d seconds", all.WorstNeverUp)
	}
	if all.SlowPromptWhileFull > 0 {
		t.Errorf("goal: never SLOW with the prompt advice while truly FULL; %d seconds", all.SlowPromptWhileFull)
	}
	if late, missed, worst := lateTransitions(all, analysis.StateHealthy, Grace); late+missed > 0 {
		t.Errorf("goal: HEALTHY within %d s of the queue draining; %d later (up to %d s), %d never shown", Grace, late, worst, missed)
	}
	if share := all.AdviceShare(); !(share >= 0.98) {
		t.Errorf("goal: the advice within ±10 %% of the right count in ≥ 98 %% of reports; %s", pct(share))
	}
	for _, name := range res.Scenarios {
		if tally := res.By[name]; tally.Overshoot > 0 {
			t.Errorf("goal: the advice never above the right count by more than %.0f %% after the first FULL; %s: %d of %d reports",
				100*AdviceOvershoot, name, tally.Overshoot, tally.AfterFull)
		}
	}
}

// lateTransitions counts the transitions into s shown later than within
// seconds, the longest delay, and those never shown.
func lateTransitions(t *Tally, s analysis.State, within int) (late, missed, worst int) {
	for _, d := range t.Delays[s] {
		if d > within {
			late++
			worst = max(worst, d)
		}
	}
	return late, t.Missed[s], worst
}
