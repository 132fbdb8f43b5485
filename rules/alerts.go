package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// alerts are the alerting rules, highest rank first: each state fires only
// where no higher state's evidence holds, as vtop shows one state, the
// highest.
func (b builder) alerts() []Rule {
	higher := []string{condition("down")}
	var rules []Rule
	add := func(r Rule, conds ...string) {
		r.Expr = conds[0]
		if len(higher) > 0 && conds[0] != condition("down") {
			r.Expr += " unless " + b.q.On() + " (" + strings.Join(higher, " or ") + ")"
		}
		rules = append(rules, r)
	}
	add(b.alert(analysis.StateDown, 0, 0, ""), condition("down"))
	add(b.alert(analysis.StateStalled, 0, b.kept(), ""), condition("stalled"))
	higher = append(higher, condition("stalled"))
	add(b.alert(analysis.StatePreempting, 0, b.kept(), ""), condition("preempting"))
	higher = append(higher, condition("preempting"))
	add(b.alert(analysis.StateFull, 0, b.kept(), ""), condition("full"))
	higher = append(higher, condition("full"))
	for _, l := range latencies {
		r := b.alert(analysis.StateSlow, b.held(), b.kept(), l.name)
		add(r, l.condition())
	}
	for _, l := range latencies {
		higher = append(higher, l.condition())
	}
	add(b.alert(analysis.StateStale, b.held(), b.kept(), ""), condition("stale"))
	higher = append(higher, condition("stale"))
	add(b.alert(analysis.StateIdle, b.held(), b.kept(), ""), condition("idle"))
	return rules
}

// alert is the rule of one state, without its expression. which names the
// latency of a SLOW rule.
func (b builder) alert(s analysis.State, hold, keep time.Duration, which string) Rule {
	state := strings.ToUpper(s.String())
	alert, _ := analysis.AlertOf(s)
	labels := []Pair{{"severity", alert.Severity}, {"vtop_state", state}}
	if s == analysis.StateSlow {
		labels = append(labels, Pair{"latency", which})
	}
	summary, evidence := b.evidence(s, which)
	notes := []Pair{
		{"summary", b.replica() + " is " + state + ": " + summary},
		{"description", evidence},
	}
	if action := analysis.FirstAction(s, catalogue.EngineVLLM, b.o.Config); action != "" {
		if s == analysis.StateDown {
			action += " behind " + b.replica()
		}
		notes = append(notes, Pair{"first_action", action})
	}
	return Rule{Alert: alert.Name, For: hold, KeepFiringFor: keep, Labels: labels, Annotations: notes}
}

// replica is the template naming the group an alert is about.
func (b builder) replica() string {
	parts := make([]string, len(b.o.GroupBy))
	for i, l := range b.o.GroupBy {
		parts[i] = "{{ $labels." + l + " }}"
	}
	return strings.Join(parts, "/")
}

// evidence is a state's summary (with the templated value) and the rule it
// is judged by, in docs/verdicts.md's words with this file's numbers.
func (b builder) evidence(s analysis.State, which string) (summary, rule string) {
	c, t := b.o.Config, b.t
	switch s {
	case analysis.StateDown:
		return "its scrapes fail, or its page has no inference-engine metrics",
			fmt.Sprintf("up is 0, or the page answers without the engine metrics it served in the last %s: shown at once, left at once", dur(downMemory))
	case analysis.StatePreempting:
		return fmt.Sprintf("about {{ $value | humanize }} preemptions over the trailing %s, at a material cost", dur(max(t.PreemptingSpan, b.readings(2)))),
			fmt.Sprintf("the preemption counter rose in the trailing %s, and over the %s window the tokens preemption recomputes are %.0f%% or more of the tokens generated, or the preemptions %.0f%% or more of the requests finished (a rarer preemption is no state): shown at once, or after %d evaluations when FULL or SLOW fires; left %s without a preemption or when the cost is under both, then held %s",
				dur(t.PreemptingSpan), dur(c.Window), 100*t.MaterialRecomputed, 100*t.MaterialPreempted, c.Hysteresis, dur(t.PreemptingSpan), dur(b.kept()))
	case analysis.StateFull:
		return "{{ $value | humanize }} requests waiting",
			fmt.Sprintf("a queue in each of the newest %d readings over %s, or %s or more waiting in both of the two newest, or admissions refused while requests run: shown at once; left when the two newest readings hold no queue, then held %s",
				t.FullReadings, dur(b.fullSpan()), num(t.ObviousQueue), dur(b.kept()))
	case analysis.StateSlow:
		l := latencies[0]
		if which == latencies[1].name {
			l = latencies[1]
		}
		slo := b.slo(l)
		return fmt.Sprintf("p99 %s {{ $value | humanizeDuration }} over the %s SLO", l.title, dur(slo)),
			fmt.Sprintf("p99 %s over %s over the %s window, read from at least %d %s (or fewer whose p50 is over it too): shown after %s; left when the p99 is %.0f%% under the SLO, then held %s",
				l.title, dur(slo), dur(c.Window), c.MinObservations, l.unit, dur(b.held()), c.SLOExitMargin*100, dur(b.kept()))
	case analysis.StateStalled:
		return "{{ $value | humanize }} requests running (or waiting), no token generated",
			fmt.Sprintf("requests running or waiting while no token or request counter moved over %s (at least %d readings), and the page alive (the batch or the queue changed, or the API server's own counters rose): the engine stopped stepping; shown at once, left when a token moves, then held %s",
				dur(b.stalledSpan()), t.StaleReadings, dur(b.kept()))
	case analysis.StateStale:
		return "{{ $value | humanize }} requests running, nothing on the page moved",
			fmt.Sprintf("requests running in every reading of the %s window (at least %d readings) while nothing on the page moved, gauges and the API server's own counters included: shown after %s; check the exporter, or, if it is sound, restart the engine",
				dur(c.Window), t.StaleReadings, dur(b.held()))
	case analysis.StateIdle:
		return "nothing ran, waited or finished",
			fmt.Sprintf("no request ran, waited or finished over the %s window (at least %s of readings): shown after %s, left when a request arrives, then held %s",
				dur(c.Window), dur(min(t.LeastEvidence, c.Window)), dur(b.held()), dur(b.kept()))
	}
	return "", ""
}
