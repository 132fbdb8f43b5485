package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// healthFigures are the figures a verdict of health rests on: running and
// waiting, which FULL, STALE and IDLE read, and the work counters, by
// which IDLE knows that no request finished.
var healthFigures = []catalogue.Scalar{catalogue.Running, catalogue.Waiting,
	catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.FinishedRequests}

// refusedUnknown is the set of health figures whose values the window's
// pages sent were refused, and that no reading in the window knows.
func (w *window) refusedUnknown() catalogue.FigureSet {
	var refused catalogue.FigureSet
	for _, s := range w.samples {
		refused |= s.Refused
	}
	var unknown catalogue.FigureSet
	for _, k := range healthFigures {
		if f := catalogue.ScalarFigure(k); refused.Has(f) && !w.knows(k) {
			unknown.Add(f)
		}
	}
	return unknown
}

// knows reports whether a reading in the window has a value of scalar k
// (of finished requests: of any finish reason too).
func (w *window) knows(k catalogue.Scalar) bool {
	for _, s := range w.samples {
		if !math.IsNaN(s.Total.Scalars[k]) || k == catalogue.FinishedRequests && countsFinished(&s.Total) {
			return true
		}
	}
	return false
}

// refusedVerdict: the figures health rests on were refused over the
// window, so neither health nor idleness can be proven.
func refusedVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	if ev.Refused == 0 {
		return verdict{}, false
	}
	var names []string
	for _, k := range healthFigures {
		if ev.Refused.Has(catalogue.ScalarFigure(k)) {
			names = append(names, strings.ReplaceAll(k.String(), "_", " "))
		}
	}
	reasons := []string{fmt.Sprintf(refusedText, strings.Join(names, ", "))}
	for _, h := range []struct {
		name string
		q    Quantiles
	}{{"TTFT", f.TTFT}, {"e2e", f.E2E}} {
		if h.q.Observations > 0 {
			reasons = append(reasons, fmt.Sprintf("the %s histogram counted %s req/s meanwhile", h.name, amount(h.q.Observations.Float()/cfg.Window.Seconds())))
			break
		}
	}
	return verdict{State: StateUnjudged, Reasons: append(reasons, healthySummary(f))}, true
}

// refusedText is refusedVerdict's first reason.
const refusedText = "%s refused over the window (every value the page sent: see the warnings): a refused value is no zero, so neither health nor idleness can be proven"
