package rules

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
)

// Options are the settings of the rules: vtop's own thresholds, and how
// Prometheus evaluates them.
type Options struct {
	// Config holds the SLOs, the window, the hysteresis, the SLO exit
	// margin and the least observations of a p99, as vtop judges by them.
	Config analysis.Config
	// EvaluationInterval is the rule group's interval. A reading of vtop's
	// rules is one evaluation: the group's interval should be the scrape
	// interval of the replicas.
	EvaluationInterval time.Duration
	// GroupBy are the labels whose values are the replicas.
	GroupBy []string
	// KeepFiringFor writes keep_firing_for: (Prometheus 2.42 and later);
	// without it a state ends on the first evaluation its evidence is gone.
	KeepFiringFor bool
}

// DefaultEvaluationInterval is the evaluation interval of the rules by
// default: the refresh of vtop --prometheus, and short enough that the
// judgement's spans (FULL's three readings over 5 s, PREEMPTING's 15 s)
// mean what they mean on vtop's screen. At 15 s, FULL's three readings
// would take 30 s and a 30 s window would hold two readings.
const DefaultEvaluationInterval = 5 * time.Second

// DefaultOptions are vtop's default thresholds, evaluated every
// DefaultEvaluationInterval, grouped by instance, with keep_firing_for.
func DefaultOptions() Options {
	return Options{Config: analysis.DefaultConfig(), EvaluationInterval: DefaultEvaluationInterval,
		GroupBy: []string{"instance"}, KeepFiringFor: true}
}

// GroupName is the name of the rule group.
const GroupName = "vtop"

// downMemory is how long after its last engine reading a group whose
// scrapes fail is still known to be an inference server, and so DOWN
// rather than some other target that is down.
const downMemory = time.Hour

// recMaterial is PREEMPTING's evidence before the hold of a move from
// FULL or SLOW. The other recorded series are package promql's, which
// the Prometheus source reads back.
const recMaterial = "vtop:preemption_material"

// Rule is one recording or alerting rule.
type Rule struct {
	Record, Alert string
	Expr          string
	For           time.Duration
	KeepFiringFor time.Duration
	Labels        []Pair
	Annotations   []Pair
}

// Pair is one label or annotation, kept in the order written.
type Pair struct{ Name, Value string }

// Group is a rule group.
type Group struct {
	Name     string
	Interval time.Duration
	Rules    []Rule
}

// File is a rule file: a header comment and its groups.
type File struct {
	Header []string
	Groups []Group
}

// dur writes a duration as PromQL does (5s, 1m30s, 12s500ms).
var dur = promql.Duration

// num writes a threshold without trailing zeros.
func num(v float64) string { return fmt.Sprint(v) }

// labelName is what Prometheus accepts as a label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Validate rejects settings the rules cannot be written with.
func (o Options) Validate() error {
	c := o.Config
	switch {
	case o.EvaluationInterval < time.Second:
		return fmt.Errorf("evaluation interval %s: want 1s or more", o.EvaluationInterval)
	case c.Window/2 < o.EvaluationInterval:
		return fmt.Errorf("window %s must hold two evaluations (%s apart)", c.Window, o.EvaluationInterval)
	case c.SLOTTFT <= 0 || c.SLOITL <= 0:
		return fmt.Errorf("the SLOs must be positive (TTFT %s, ITL %s)", c.SLOTTFT, c.SLOITL)
	case c.Hysteresis < 1:
		return fmt.Errorf("hysteresis %d: want 1 or more evaluations", c.Hysteresis)
	case !spans(thresholdReadings(), o.EvaluationInterval):
		return fmt.Errorf("evaluation interval %s: %d evaluations of it pass the longest duration a rule can hold (%s)",
			o.EvaluationInterval, thresholdReadings(), dur(math.MaxInt64))
	case !spans(c.Hysteresis, o.EvaluationInterval):
		// (hysteresis − 1) × interval past time.Duration wrapped: for: -10s.
		return fmt.Errorf("hysteresis %d: for: would be %d evaluations of %s, past the longest duration a rule can hold (%s)",
			c.Hysteresis, c.Hysteresis-1, o.EvaluationInterval, dur(math.MaxInt64))
	case len(o.GroupBy) == 0:
		return fmt.Errorf("no label to group by")
	}
	for _, l := range o.GroupBy {
		switch lower := strings.ToLower(l); {
		case !labelName.MatchString(l) || strings.HasPrefix(l, "__"):
			return fmt.Errorf("group-by %q is not a label name", l)
		case lower == "inf" || lower == "nan":
			return fmt.Errorf("group-by %q is a PromQL number, which PromQL does not take for a label in by (…): relabel it", l)
		case slices.Contains(groupingKeywords, lower):
			return fmt.Errorf("group-by %q is a PromQL keyword, which PromQL does not take for a label in by (…) or on (…): relabel it", l)
		}
	}
	return nil
}

// groupingKeywords are the PromQL keywords of grouping and vector
// matching, which its lexer reads in any case: Prometheus 2.42 takes
// some of them for a label in by (…) and not without, and the rules
// write each label in by (…) and on (…), so none of them is taken.
// Aggregations and functions (sum, rate) are names there, and taken.
var groupingKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless", "atan2"}

// Build writes vtop's judgement as rules under o.
func Build(o Options) (File, error) {
	if err := o.Validate(); err != nil {
		return File{}, err
	}
	b := builder{o: o, q: promql.Group{By: strings.Join(o.GroupBy, ", ")}, t: analysis.JudgementThresholds()}
	rules := append(b.figures(), b.conditions()...)
	rules = append(rules, b.alerts()...)
	// Last: its row at an evaluation time says that the group's rows of
	// that time are all written (vmalert writes each rule's as it goes).
	rules = append(rules, b.info())
	return File{Header: b.header(), Groups: []Group{{Name: GroupName, Interval: o.EvaluationInterval, Rules: rules}}}, nil
}

// builder holds what every rule is written from.
type builder struct {
	o Options
	q promql.Group
	t analysis.Thresholds
}

// info is the rule that says which rules these are: one series whose
// labels are the version of the recorded series and the settings they
// are recorded with, so that a vtop reads them back only where they are
// what it would write.
func (b builder) info() Rule {
	c := b.o.Config
	var labels []Pair
	for _, l := range promql.InfoLabels(promql.RulesSettings{Window: c.Window, SLOTTFT: c.SLOTTFT, SLOITL: c.SLOITL,
		Hysteresis: c.Hysteresis, GroupBy: b.o.GroupBy}, b.o.EvaluationInterval) {
		labels = append(labels, Pair{l[0], l[1]})
	}
	return Rule{Record: promql.RecordedInfo, Expr: promql.RecordedInfoExpr, Labels: labels}
}

// spans reports whether the span of the newest n evaluations every e
// (builder.readings) is a duration, not past time.Duration's range.
func spans(n int, e time.Duration) bool {
	return n >= 1 && n-1 <= int((math.MaxInt64-e/2)/e)
}

// thresholdReadings is the most evaluations a rule reads besides the
// hysteresis: the readings of FULL and STALE, and the two of a change.
func thresholdReadings() int {
	t := analysis.JudgementThresholds()
	return max(t.FullReadings, t.StaleReadings, 2)
}

// readings is the span that holds the newest n evaluations: half an
// interval more than n−1 intervals, so that the oldest is in whether the
// range's start is closed (Prometheus 2) or open (Prometheus 3).
func (b builder) readings(n int) time.Duration {
	e := b.o.EvaluationInterval
	return time.Duration(n-1)*e + e/2
}

// held is how long a judged change must hold, as `for:`: vtop shows a new
// state on the hysteresis-th consecutive evaluation that finds it, which
// is hysteresis − 1 intervals after the first.
func (b builder) held() time.Duration {
	return time.Duration(b.o.Config.Hysteresis-1) * b.o.EvaluationInterval
}

// kept is keep_firing_for: a state left is still shown until the
// hysteresis-th evaluation without it.
func (b builder) kept() time.Duration {
	if !b.o.KeepFiringFor {
		return 0
	}
	return b.held()
}

// figures are the recording rules of the figures the states read, summed
// over each group's series, whichever engine and name they come under.
func (b builder) figures() []Rule {
	w := b.o.Config.Window
	rules := []Rule{
		{Record: promql.RecordedRunning, Expr: b.q.SumScalar(catalogue.Running)},
		{Record: promql.RecordedWaiting, Expr: b.q.SumScalar(catalogue.Waiting)},
		{Record: promql.RecordedPreemptions, Expr: b.q.SumScalar(catalogue.Preemptions)},
		{Record: promql.RecordedWork, Expr: b.q.SumCounters()},
		{Record: promql.RecordedPreempted, Expr: b.q.IncreaseScalar(catalogue.Preemptions, w)},
		{Record: promql.RecordedGenerated, Expr: b.q.IncreaseScalar(catalogue.GenerationTokens, w)},
		{Record: promql.RecordedFinished, Expr: b.q.HistogramCount(catalogue.E2E, w)},
		{Record: promql.RecordedRecomputed, Expr: b.recomputedExpr()},
		// Read by vtop alone, for the fleet's figures of its fast path.
		{Record: promql.RecordedPrompted, Expr: b.q.IncreaseScalar(catalogue.PromptTokens, w)},
		{Record: promql.RecordedRequests, Expr: b.q.FinishedIncrease(w)},
	}
	for _, h := range latencies {
		rules = append(rules,
			Rule{Record: h.bucketRate(), Expr: b.q.HistogramRate(h.histogram, w)},
			Rule{Record: h.quantile("p99"), Expr: promql.HistogramQuantile(0.99, h.bucketRate())},
			Rule{Record: h.quantile("p50"), Expr: promql.HistogramQuantile(0.5, h.bucketRate())},
			Rule{Record: h.observations(), Expr: b.q.HistogramCount(h.histogram, w)},
		)
	}
	return rules
}

// latency is a latency histogram an SLO holds.
type latency struct {
	name      string // ttft, itl
	histogram catalogue.Histogram
	unit      string // what it counts: requests, tokens
	title     string // TTFT, ITL
}

// latencies are the histograms SLOW reads.
var latencies = []latency{
	{promql.LatencyTTFT, catalogue.TTFT, "requests", "TTFT"},
	{promql.LatencyITL, catalogue.ITL, "tokens", "ITL"},
}

func (l latency) bucketRate() string       { return promql.RecordedBucketRate(l.name) }
func (l latency) quantile(q string) string { return promql.RecordedQuantile(l.name, q) }
func (l latency) observations() string     { return promql.RecordedObservations(l.name) }
func (l latency) condition() string        { return "vtop:state_slow_" + l.name }

// slo is the latency's SLO under o.
func (b builder) slo(l latency) time.Duration {
	if l.histogram == catalogue.TTFT {
		return b.o.Config.SLOTTFT
	}
	return b.o.Config.SLOITL
}

// condition names the recording of a state's evidence: a series per group
// while the state's evidence holds, its value the evidence.
func condition(state string) string { return "vtop:state_" + state }

// conditions are the recording rules of each state's evidence, as
// docs/verdicts.md writes it. They read the alerts of the previous
// evaluation where vtop reads the state it showed before (FULL held while
// a queue remains, SLOW left only under the exit margin).
func (b builder) conditions() []Rule {
	rules := []Rule{
		{Record: condition("down"), Expr: b.downExpr()},
		{Record: recMaterial, Expr: b.materialExpr()},
		{Record: condition("stalled"), Expr: b.stalledExpr()},
		{Record: condition("preempting"), Expr: b.preemptingExpr()},
		{Record: condition("full"), Expr: b.fullExpr()},
	}
	for _, l := range latencies {
		rules = append(rules, Rule{Record: l.condition(), Expr: b.slowExpr(l)})
	}
	return append(rules,
		Rule{Record: condition("stale"), Expr: b.staleExpr()},
		Rule{Record: condition("idle"), Expr: b.idleExpr()},
	)
}

// downExpr: the group's scrapes fail, or answer without engine metrics,
// while it served engine metrics in the last downMemory.
func (b builder) downExpr() string {
	on, by := b.q.On(), b.q.By
	known := fmt.Sprintf("group by (%s) (max_over_time(%s[%s]))", by, promql.RecordedRunning, dur(downMemory))
	return fmt.Sprintf("(\n  min by (%s) (up) == 0\n  or %s\n  (max by (%s) (up) == 1 unless %s %s)\n) and %s %s",
		by, on, by, on, promql.RecordedRunning, on, known)
}

// recomputedExpr: the prompt tokens recomputed over the window, where the
// engine counts them; else the preemptions times the mean prompt and half
// the mean output of the requests finished in it. The preemptions are
// read from the raw counters, not from promql.RecordedPreempted: vmalert reads the
// group's own rows back from the store a flush later, and the product
// would mix two evaluations.
func (b builder) recomputedExpr() string {
	w, on := b.o.Config.Window, b.q.On()
	mean := func(h catalogue.Histogram) string {
		return fmt.Sprintf("%s\n  / %s\n  %s", b.q.HistogramSum(h, w), on, b.q.HistogramCount(h, w))
	}
	return fmt.Sprintf("%s\nor %s\n%s * %s (\n  %s\n  + %s\n  %s / 2\n)",
		b.q.IncreaseScalar(catalogue.PromptTokensRecomputed, w), on,
		b.q.IncreaseScalar(catalogue.Preemptions, w), on, mean(catalogue.PromptLength), on, mean(catalogue.GenerationLength))
}

// materialExpr: the preemption counter rose over the trailing span, and
// preemption's cost over the window is material: the tokens recomputed
// against those generated, or the preemptions against the requests
// finished, at their thresholds; or neither can be priced. The value is
// the preemptions over the trailing span.
func (b builder) materialExpr() string {
	on := b.q.On()
	span := max(b.t.PreemptingSpan, b.readings(2))
	return fmt.Sprintf("increase(%[1]s[%[2]s]) > 0 and %[3]s (\n  %[4]s / %[3]s %[5]s >= %[6]s\n  or %[3]s %[7]s / %[3]s %[8]s >= %[9]s\n  or %[3]s (%[7]s unless %[3]s (%[5]s or %[3]s %[8]s))\n)",
		promql.RecordedPreemptions, dur(span), on, promql.RecordedRecomputed, promql.RecordedGenerated, num(b.t.MaterialRecomputed),
		promql.RecordedPreempted, promql.RecordedFinished, num(b.t.MaterialPreempted))
}

// preemptingExpr: the material preemption's evidence; while FULL or SLOW
// fires, only once it has held on as many consecutive evaluations as the
// hysteresis asks (a move between the urgent states is held).
func (b builder) preemptingExpr() string {
	on, n := b.q.On(), b.o.Config.Hysteresis
	return fmt.Sprintf("%[1]s unless %[2]s (\n  (%[3]s or %[2]s %[4]s)\n  unless %[2]s count_over_time(%[1]s[%[5]s]) >= %[6]d\n)",
		recMaterial, on, promql.FiringAlert(analysis.AlertFull), promql.FiringAlert(analysis.AlertSlow), dur(b.readings(n)), n)
}

// fullSpan is the span of FULL's readings: FullReadings of them, over at
// least the judgement's FullSpan.
func (b builder) fullSpan() time.Duration { return max(b.t.FullSpan, b.readings(b.t.FullReadings)) }

// fullExpr: a queue in each of the newest readings, or an obvious queue in
// the two newest, or a queue in either of the two newest while FULL fires,
// or admissions refused over the window; with requests running. The value
// is the queue now.
func (b builder) fullExpr() string {
	on, span, two := b.q.On(), dur(b.fullSpan()), dur(b.readings(2))
	queue := fmt.Sprintf("(min_over_time(%[1]s[%[2]s]) > 0 and %[3]s count_over_time(%[1]s[%[2]s]) >= %[4]d)",
		promql.RecordedWaiting, span, on, b.t.FullReadings)
	obvious := fmt.Sprintf("(min_over_time(%[1]s[%[2]s]) >= %[3]s and %[4]s count_over_time(%[1]s[%[2]s]) >= 2)",
		promql.RecordedWaiting, two, num(b.t.ObviousQueue), on)
	stays := fmt.Sprintf("(max_over_time(%s[%s]) > 0 and %s %s)", promql.RecordedWaiting, two, on, promql.FiringAlert(analysis.AlertFull))
	refused := fmt.Sprintf("(%s > 0 and %s avg_over_time(%s[%s]) > 0)",
		b.q.IncreaseScalar(catalogue.AdmissionRejections, b.o.Config.Window), on, promql.RecordedRunning, dur(b.o.Config.Window))
	return fmt.Sprintf("%s and %s (\n  (%s\n  or %s %s\n  or %s %s)\n  and %s max_over_time(%s[%s]) > 0\n  or %s %s\n)",
		promql.RecordedWaiting, on, queue, on, obvious, on, stays, on, promql.RecordedRunning, span, on, refused)
}

// slowExpr: the latency's p99 over its SLO, read from enough observations
// or with a median over it too; under the exit margin to leave. The value
// is the p99 in seconds.
func (b builder) slowExpr(l latency) string {
	on := b.q.On()
	over := func(limit float64) string {
		return fmt.Sprintf("%s > %s and %s (%s >= %d or %s %s > %s)", l.quantile("p99"), num(limit), on,
			l.observations(), b.o.Config.MinObservations, on, l.quantile("p50"), num(limit))
	}
	slo := b.slo(l).Seconds()
	exit := roundLimit(slo * (1 - b.o.Config.SLOExitMargin))
	return fmt.Sprintf("%s\nor %s\n(%s and %s %s)", over(slo), on, over(exit), on, promql.FiringAlert(analysis.AlertSlow))
}

// roundLimit drops the noise of binary floating point from a threshold
// (0.9 × 0.1 is 0.09, not 0.09000000000000001).
func roundLimit(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// staleExpr: requests running in every reading of the window, at least
// StaleReadings of them, no work counter moved, and nothing else on the
// page moved either (liveExpr): a page that moves while no token does is
// STALLED. The value is the fewest running.
func (b builder) staleExpr() string {
	w, on := dur(b.o.Config.Window), b.q.On()
	return fmt.Sprintf("min_over_time(%[1]s[%[2]s]) > 0 and %[3]s count_over_time(%[1]s[%[2]s]) >= %[4]d and %[3]s changes(%[5]s[%[2]s]) == 0\nunless %[3]s (%[6]s)",
		promql.RecordedRunning, w, on, b.t.StaleReadings, promql.RecordedWork, b.liveExpr(b.o.Config.Window))
}

// stalledSpan is the span of STALLED's readings: StaleReadings of them,
// over at least the judgement's StalledSpan.
func (b builder) stalledSpan() time.Duration {
	return max(b.t.StalledSpan, b.readings(b.t.StaleReadings))
}

// stalledExpr: requests running or waiting now, no work counter moved
// over the stalled span (at least StaleReadings readings) nor any token
// was timed (the inter-token latency's count, which moves as tokens come
// where the token counters move when a request ends), and the page alive
// over it (liveExpr): an engine that stopped stepping under an API server
// that still answers. The value is the running requests (the waiting
// ones where none runs).
func (b builder) stalledExpr() string {
	span, on := dur(b.stalledSpan()), b.q.On()
	return fmt.Sprintf("(%[1]s > 0 or %[2]s %[3]s > 0)\nand %[2]s count_over_time(%[4]s[%[5]s]) >= %[6]d and %[2]s changes(%[4]s[%[5]s]) == 0\nand %[2]s (%[7]s)\nunless %[2]s %[8]s > 0",
		promql.RecordedRunning, on, promql.RecordedWaiting, promql.RecordedWork, span, b.t.StaleReadings, b.liveExpr(b.stalledSpan()), b.q.HistogramCount(catalogue.ITL, b.stalledSpan()))
}

// liveExpr: something on the group's page moved over the span besides
// its work counters: the batch or the queue changed, or the API server's
// own counters (its HTTP requests, its process's garbage collections)
// rose.
func (b builder) liveExpr(span time.Duration) string {
	terms := []string{
		fmt.Sprintf("changes(%s[%s]) > 0", promql.RecordedRunning, dur(span)),
		fmt.Sprintf("changes(%s[%s]) > 0", promql.RecordedWaiting, dur(span)),
	}
	for _, name := range processCounters() {
		terms = append(terms, b.q.IncreaseOf(name, span)+" > 0")
	}
	return strings.Join(terms, " or "+b.q.On()+" ")
}

// processCounters are the names of the API server's own counters the
// page parser reads (catalogue.ReadHTTP, catalogue.ReadGC): they move
// while the server lives, whatever its engine does.
func processCounters() []string {
	var names []string
	for _, r := range catalogue.Reads {
		if r.Kind == catalogue.ReadHTTP || r.Kind == catalogue.ReadGC {
			names = append(names, r.Name)
		}
	}
	return names
}

// idleReadings is how many readings span the least evidence (the window,
// when it is shorter).
func (b builder) idleReadings() int {
	least := min(b.t.LeastEvidence, b.o.Config.Window)
	return int(math.Ceil(float64(least)/float64(b.o.EvaluationInterval))) + 1
}

// idleExpr: nothing ran, waited or was done over the window, which holds
// at least the least evidence.
func (b builder) idleExpr() string {
	w, on := dur(b.o.Config.Window), b.q.On()
	return fmt.Sprintf("max_over_time(%[1]s[%[2]s]) == 0 and %[3]s max_over_time(%[4]s[%[2]s]) == 0 and %[3]s changes(%[5]s[%[2]s]) == 0 and %[3]s count_over_time(%[1]s[%[2]s]) >= %[6]d",
		promql.RecordedRunning, w, on, promql.RecordedWaiting, promql.RecordedWork, b.idleReadings())
}
