package verdicts

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vtop-dev/vtop/analysis"
)

// The scoring's parameters.
const (
	// LeastEvidence is how many seconds from a replica's start are not
	// scored: the least evidence vtop's written judgement asks before a
	// verdict of health (docs/verdicts.md).
	LeastEvidence = 10
	// Grace is how many seconds after each truth transition are not
	// scored as right or wrong; they give the time to the right verdict
	// instead.
	Grace = 10
	// AdviceTolerance is how far the advice may be from the right count.
	AdviceTolerance = 0.10
	// StallNamedWithin is the goal's longest time from the truth's
	// STALLED to the first second vtop shows it (seconds).
	StallNamedWithin = 15
	// AdviceOvershoot is how far above the right count the advice may
	// be at any second after the first FULL, the seconds just after the
	// right count rose included: a count three times too high at a
	// spike's start is the advice misleading when it matters most. A
	// count is whole replicas: one more than the right count is never an
	// overshoot (5 for 4 is the edge of a ceil, not 25 % too many).
	AdviceOvershoot = 0.20
)

// JudgedStates are the states the truth takes, in the report's order.
var JudgedStates = []analysis.State{
	analysis.StateHealthy, analysis.StateFull, analysis.StateSlow,
	analysis.StatePreempting, analysis.StateRecovering, analysis.StateIdle, analysis.StateDown, analysis.StateStalled,
}

// Tally is the score of one or more runs.
type Tally struct {
	// ReplicaSeconds are the seconds after the least evidence; Scored
	// those outside every grace, Right the scored ones vtop got right.
	ReplicaSeconds, Scored, Right int
	// Grace counts the seconds in a grace period.
	Grace int
	// FalseHealthy are scored seconds shown HEALTHY while truly FULL,
	// SLOW or PREEMPTING; FalseHealthyGrace the same within a grace.
	FalseHealthy, FalseHealthyGrace int
	// HealthyWrong are seconds after the least evidence shown HEALTHY
	// while a window figure of vtop's own report is over its SLO (grace
	// included: the figure is beside the state), or, in a scored second,
	// the truth is not HEALTHY.
	HealthyWrong int
	// SlowWhileFull are seconds after the least evidence (grace
	// included) shown SLOW while truly FULL; SlowPromptWhileFull those
	// of them whose action blames the prompts or the prefill.
	SlowWhileFull, SlowPromptWhileFull int
	// FalseDown are seconds after the least evidence (grace included)
	// shown DOWN while the process is up: a late scrape taken for an
	// outage.
	FalseDown int
	// WorstNeverUp are seconds after the least evidence at which the
	// fleet's worst replica (the header's, the first pane's) is one whose
	// process has never been up while another is truly in trouble (FULL,
	// SLOW, PREEMPTING, or DOWN after it was up).
	WorstNeverUp int
	// SlowFullBlame counts the SlowWhileFull seconds by Blame.
	SlowFullBlame map[string]int
	// Flaps are shown changes the truth did not make: to a state the
	// truth was not in at any second of the last Grace seconds.
	Flaps int
	// Confusion counts scored seconds by truth and shown state.
	Confusion map[[2]analysis.State]int
	// Delays are the seconds to the right verdict after each truth
	// transition, by the state entered, when vtop showed it while the
	// truth held; Missed counts the transitions to a state that held at
	// least Grace seconds (or to the end) and was never shown; Brief
	// those to a state that held less and was never shown.
	Delays map[analysis.State][]int
	Missed map[analysis.State]int
	Brief  int
	// AdviceScored are the reports with a replica up, after the least
	// evidence and at least Grace seconds after the right count changed;
	// AdviceWithin those within AdviceTolerance of it; AdviceNA those
	// with no recommended count.
	AdviceScored, AdviceWithin, AdviceNA int
	// AfterFull are the reports with a replica up and a count to compare,
	// from the first second a replica is truly FULL (or PREEMPTING with a
	// standing queue) on, the Grace after the right count rose included
	// and the Grace after it fell left out (the queue that made it right
	// takes that long to go); Overshoot those whose recommended count is
	// above the right one by more than AdviceOvershoot, and by more than
	// one replica.
	AfterFull, Overshoot int
	// AdviceChanges are the seconds at which the advice's action or
	// count differs from the second before's, AdviceSeconds the seconds
	// after the least evidence they are counted over: an advice that
	// changes every second while the load does not is noise to act on.
	AdviceChanges, AdviceSeconds int
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{Confusion: map[[2]analysis.State]int{}, SlowFullBlame: map[string]int{}, Delays: map[analysis.State][]int{}, Missed: map[analysis.State]int{}}
}

// Add scores a run into the tally.
func (t *Tally) Add(run Run) {
	for _, tl := range run.Replicas {
		t.addTimeline(tl)
	}
	t.addAdvice(run)
	t.addWorst(run)
}

// addWorst counts the seconds the worst replica named is one that was
// never up while another is in trouble.
func (t *Tally) addWorst(run Run) {
	neverUp := make([]bool, len(run.Replicas))
	for i := range neverUp {
		neverUp[i] = true
	}
	for sec, worst := range run.Worst {
		trouble := false
		for i, tl := range run.Replicas {
			neverUp[i] = neverUp[i] && tl.Truth[sec] == analysis.StateDown
			trouble = trouble || wrongHealthy(tl.Truth[sec]) || tl.Truth[sec] == analysis.StateDown && !neverUp[i]
		}
		if sec+1 > LeastEvidence && trouble && worst >= 0 && neverUp[worst] {
			t.WorstNeverUp++
		}
	}
}

// wrongHealthy are the states whose seconds shown HEALTHY are false-HEALTHY.
func wrongHealthy(s analysis.State) bool {
	return s == analysis.StateFull || s == analysis.StateSlow || s == analysis.StatePreempting || s == analysis.StateRecovering
}

// The causes a SLOW replica's action may name, as Blame sorts them.
const (
	BlamePrompts = "prompts or prefill (shorten prompts, prefix caching, chunked prefill)"
	BlameOutside = "outside queue and prefill (API server, network)"
	BlameQueue   = "waiting for a batch slot (add replicas)"
	BlameOther   = "other"
)

// Blame sorts the first action of a SLOW replica by the cause it names.
func Blame(action string) string {
	switch {
	case strings.Contains(action, "long prompts") || strings.Contains(action, "prefill is slow"):
		return BlamePrompts
	case strings.Contains(action, "outside queue and prefill"):
		return BlameOutside
	case strings.Contains(action, "batch slot"):
		return BlameQueue
	}
	return BlameOther
}

// PromptAdvice reports whether an action blames the prompts or their
// prefill: the advice of a SLOW replica whose TTFT is prefill.
func PromptAdvice(action string) bool { return Blame(action) == BlamePrompts }

func (t *Tally) addTimeline(tl Timeline) {
	lastChange := -Grace - 1 // index of the newest truth transition
	for i := range len(tl.Truth) {
		if i > 0 && tl.Truth[i] != tl.Truth[i-1] {
			lastChange = i
			t.transition(tl, i)
		}
		if i+1 > LeastEvidence {
			t.addSecond(tl, i, i-lastChange < Grace)
		}
	}
}

// addSecond scores the second at index i of a timeline; inGrace is set
// within Grace of the newest truth transition.
func (t *Tally) addSecond(tl Timeline, i int, inGrace bool) {
	truth, shown := tl.Truth[i], tl.Shown[i]
	t.ReplicaSeconds++
	t.addMisreads(truth, shown, tl.Action[i])
	if shown == analysis.StateHealthy && (tl.OverSLO[i] || !inGrace && truth != analysis.StateHealthy) {
		t.HealthyWrong++
	}
	t.addScore(truth, shown, inGrace)
	if i+1 > LeastEvidence+1 && shown != tl.Shown[i-1] && !slices.Contains(tl.Truth[max(0, i-Grace):i+1], shown) {
		t.Flaps++
	}
}

// addMisreads counts the misreads that matter whatever the grace: SLOW
// shown while FULL (by the cause its action blames), DOWN shown while up.
func (t *Tally) addMisreads(truth, shown analysis.State, action string) {
	if truth == analysis.StateFull && shown == analysis.StateSlow {
		t.SlowWhileFull++
		t.SlowFullBlame[Blame(action)]++
		if PromptAdvice(action) {
			t.SlowPromptWhileFull++
		}
	}
	if shown == analysis.StateDown && truth != analysis.StateDown {
		t.FalseDown++
	}
}

// addScore counts a second in grace, or scores it: right, or where it
// falls in the confusion matrix, and whether HEALTHY was shown wrongly.
func (t *Tally) addScore(truth, shown analysis.State, inGrace bool) {
	falseHealthy := shown == analysis.StateHealthy && wrongHealthy(truth)
	if inGrace {
		t.Grace++
		if falseHealthy {
			t.FalseHealthyGrace++
		}
		return
	}
	t.Scored++
	t.Confusion[[2]analysis.State{truth, shown}]++
	if truth == shown {
		t.Right++
	}
	if falseHealthy {
		t.FalseHealthy++
	}
}

// transition scores the truth transition at index i: the delay until
// vtop showed the new state, while it held.
func (t *Tally) transition(tl Timeline, i int) {
	to := tl.Truth[i]
	end := i
	for end < len(tl.Truth) && tl.Truth[end] == to {
		end++
	}
	if i+1 <= LeastEvidence {
		return
	}
	for j := i; j < end; j++ {
		if tl.Shown[j] == to {
			t.Delays[to] = append(t.Delays[to], j-i)
			return
		}
	}
	if end-i < Grace && end < len(tl.Truth) {
		t.Brief++
		return
	}
	t.Missed[to]++
}

func (t *Tally) addAdvice(run Run) {
	lastChange, lastFall := -Grace-1, -Grace-1
	for i := range run.Right {
		if i > 0 && !sameCount(run.Right[i], run.Right[i-1]) {
			lastChange = i
			if run.Right[i] < run.Right[i-1] {
				lastFall = i
			}
		}
		if i+1 <= LeastEvidence {
			continue
		}
		t.addAdviceSecond(run, i)
		if i-lastFall >= Grace {
			t.addOvershoot(run, i)
		}
		if i-lastChange >= Grace {
			t.addAdviceScore(run.Advice[i], run.Right[i])
		}
	}
}

// addAdviceSecond counts a second of advice, and whether its count or
// its action changed from the second before.
func (t *Tally) addAdviceSecond(run Run, i int) {
	t.AdviceSeconds++
	if !sameCount(run.Advice[i], run.Advice[i-1]) || i < len(run.AdviceAction) && run.AdviceAction[i] != run.AdviceAction[i-1] {
		t.AdviceChanges++
	}
}

// addOvershoot counts a second after the first FULL, away from a fall of
// the right count, whose advice is known, and whether it overshoots.
func (t *Tally) addOvershoot(run Run, i int) {
	right := run.Right[i]
	if i >= len(run.Queued) || !run.Queued[i] || math.IsNaN(right) || math.IsNaN(run.Advice[i]) {
		return
	}
	t.AfterFull++
	if run.Advice[i] > right+math.Max(AdviceOvershoot*right, 1) {
		t.Overshoot++
	}
}

// addAdviceScore scores an advice against the right count, when that is
// known: n/a, or within AdviceTolerance of it.
func (t *Tally) addAdviceScore(advice, right float64) {
	if math.IsNaN(right) {
		return
	}
	t.AdviceScored++
	switch {
	case math.IsNaN(advice):
		t.AdviceNA++
	case math.Abs(advice-right) <= AdviceTolerance*right:
		t.AdviceWithin++
	}
}

// sameCount compares two counts, NaN equal to NaN.
func sameCount(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// AdviceChangesPerHour are the changes of the advice per hour of a run.
func (t *Tally) AdviceChangesPerHour() float64 { return ratio(t.AdviceChanges*3600, t.AdviceSeconds) }

// RightShare is the share of scored seconds vtop got right.
func (t *Tally) RightShare() float64 { return ratio(t.Right, t.Scored) }

// FlapsPerHour are the flaps per replica-hour.
func (t *Tally) FlapsPerHour() float64 { return ratio(t.Flaps*3600, t.ReplicaSeconds) }

// AdviceShare is the share of scored reports whose advice is within the
// tolerance.
func (t *Tally) AdviceShare() float64 { return ratio(t.AdviceWithin, t.AdviceScored) }

// Precision of a state over the scored seconds.
func (t *Tally) Precision(s analysis.State) float64 {
	return ratio(t.Confusion[[2]analysis.State{s, s}], t.ShownSeconds(s))
}

// Recall of a state over the scored seconds.
func (t *Tally) Recall(s analysis.State) float64 {
	return ratio(t.Confusion[[2]analysis.State{s, s}], t.TruthSeconds(s))
}

// TruthSeconds are the scored seconds truly in state s.
func (t *Tally) TruthSeconds(s analysis.State) int { return t.confusionSum(0, s) }

// ShownSeconds are the scored seconds shown as s.
func (t *Tally) ShownSeconds(s analysis.State) int { return t.confusionSum(1, s) }

// confusionSum adds the confusion matrix's seconds whose side (0 the
// truth, 1 the state shown) is s.
func (t *Tally) confusionSum(side int, s analysis.State) int {
	n := 0
	for k, c := range t.Confusion {
		if k[side] == s {
			n += c
		}
	}
	return n
}

// Transitions is the number of timed transitions (delays and misses).
func (t *Tally) Transitions() int {
	n := 0
	for _, d := range t.Delays {
		n += len(d)
	}
	for _, m := range t.Missed {
		n += m
	}
	return n
}

// MaxDelay is the longest delay into any state (-1 with none).
func (t *Tally) MaxDelay() int {
	m := -1
	for _, d := range t.Delays {
		for _, x := range d {
			m = max(m, x)
		}
	}
	return m
}

// ratio is a ÷ b, NaN when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// median of xs (NaN when empty).
func median(xs []int) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

// Result is the benchmark: a tally per scenario and over all.
type Result struct {
	// Scenarios are the scenarios' names, in the order they ran.
	Scenarios []string
	// Steady marks the steady scenarios, by name.
	Steady map[string]bool
	// By is the tally of each scenario's runs, by name; All of every run.
	By  map[string]*Tally
	All *Tally
}

// Benchmark runs every scenario with every seed and scores them.
func Benchmark(scenarios []Scenario, seeds []uint64) (*Result, []Run, error) {
	res := &Result{Steady: map[string]bool{}, By: map[string]*Tally{}, All: NewTally()}
	var runs []Run
	for _, sc := range scenarios {
		res.Scenarios = append(res.Scenarios, sc.Name)
		res.Steady[sc.Name] = sc.Steady
		res.By[sc.Name] = NewTally()
		for _, seed := range seeds {
			run, err := RunScenario(sc, seed)
			if err != nil {
				return nil, nil, err
			}
			res.By[sc.Name].Add(run)
			res.All.Add(run)
			runs = append(runs, run)
		}
	}
	return res, runs, nil
}

// pct writes a share as a percentage, "n/a" when unknown.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// num writes a figure with one decimal, "n/a" when unknown.
func num(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", x)
}

// Table writes the report as Markdown tables: per scenario, per state,
// the time to the right verdict per kind of transition, and the
// confusion of the scored seconds.
func (r *Result) Table() string {
	var b strings.Builder
	r.scenarioTable(&b)
	r.stateTable(&b)
	r.transitionTable(&b)
	b.WriteString("\n| shown SLOW while truly FULL, the action blames | seconds |\n| --- | --: |\n")
	for _, blame := range []string{BlamePrompts, BlameOutside, BlameQueue, BlameOther} {
		fmt.Fprintf(&b, "| %s | %d |\n", blame, r.All.SlowFullBlame[blame])
	}
	r.confusionTable(&b)
	return b.String()
}

// scenarioTable writes a row per scenario, then one of them all.
func (r *Result) scenarioTable(b *strings.Builder) {
	b.WriteString("| scenario | replica-s | scored | right | false-HEALTHY | false-HEALTHY in grace | HEALTHY over SLO or not healthy | false-DOWN | worst never up | SLOW while FULL (prompt advice) | flaps / replica-h | transitions: median / max s to right, missed | advice ±10 % (n/a) | advice over +20 % after FULL | advice changes / h |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
	for _, name := range r.Scenarios {
		scenarioRow(b, name, r.By[name])
	}
	scenarioRow(b, "**all**", r.All)
}

// scenarioRow writes the row of one tally.
func scenarioRow(b *strings.Builder, name string, t *Tally) {
	var all []int
	missed := 0
	for _, d := range t.Delays {
		all = append(all, d...)
	}
	for _, m := range t.Missed {
		missed += m
	}
	maxDelay := "n/a"
	if m := t.MaxDelay(); m >= 0 {
		maxDelay = fmt.Sprint(m)
	}
	fmt.Fprintf(b, "| %s | %d | %d | %s | %d | %d | %d | %d | %d | %d (%d) | %s | %d: %s / %s, %d missed | %s (%d) | %d of %d | %s |\n",
		name, t.ReplicaSeconds, t.Scored, pct(t.RightShare()), t.FalseHealthy, t.FalseHealthyGrace, t.HealthyWrong, t.FalseDown, t.WorstNeverUp,
		t.SlowWhileFull, t.SlowPromptWhileFull, num(t.FlapsPerHour()),
		t.Transitions(), num(median(all)), maxDelay, missed, pct(t.AdviceShare()), t.AdviceNA, t.Overshoot, t.AfterFull, num(t.AdviceChangesPerHour()))
}

// stateTable writes, per judged state, its seconds true and shown, and
// vtop's precision and recall.
func (r *Result) stateTable(b *strings.Builder) {
	b.WriteString("\n| state | truth s | shown s | precision | recall |\n| --- | --: | --: | --: | --: |\n")
	for _, s := range JudgedStates {
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s |\n", s, r.All.TruthSeconds(s), r.All.ShownSeconds(s),
			pct(r.All.Precision(s)), pct(r.All.Recall(s)))
	}
}

// transitionTable writes, per state transitioned into, the time to the
// right verdict and the transitions missed, then the brief ones.
func (r *Result) transitionTable(b *strings.Builder) {
	b.WriteString("\n| into | transitions | median s | max s | missed | brief (< grace, not timed) |\n| --- | --: | --: | --: | --: | --: |\n")
	for _, s := range JudgedStates {
		d := r.All.Delays[s]
		if len(d) == 0 && r.All.Missed[s] == 0 {
			continue
		}
		maxDelay := "n/a"
		if len(d) > 0 {
			maxDelay = fmt.Sprint(slices.Max(d))
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %d | |\n", s, len(d)+r.All.Missed[s], num(median(d)), maxDelay, r.All.Missed[s])
	}
	fmt.Fprintf(b, "| (brief) | | | | | %d |\n", r.All.Brief)
}

// confusionTable writes the scored seconds by true state and state shown.
func (r *Result) confusionTable(b *strings.Builder) {
	shownStates := []analysis.State{}
	for k := range r.All.Confusion {
		if !slices.Contains(shownStates, k[1]) {
			shownStates = append(shownStates, k[1])
		}
	}
	slices.Sort(shownStates)
	b.WriteString("\n| truth \\ shown |")
	for _, s := range shownStates {
		fmt.Fprintf(b, " %s |", s)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --: |", len(shownStates)) + "\n")
	for _, ts := range JudgedStates {
		fmt.Fprintf(b, "| %s |", ts)
		for _, s := range shownStates {
			fmt.Fprintf(b, " %d |", r.All.Confusion[[2]analysis.State{ts, s}])
		}
		b.WriteString("\n")
	}
}
