package promql

import (
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// Group writes per-group expressions: each answers one row per value of
// the grouping labels (a replica), whichever engine exports the figure
// under whichever name.
type Group struct {
	By string // the grouping labels, comma-separated
	// Matchers narrow every selector: label matchers without braces
	// ({namespace="prod"} as namespace="prod"); "" for none.
	Matchers string
}

// sel writes a selector with the group's matchers.
func (q Group) sel(s selector) string {
	s.extra = q.Matchers
	return s.String()
}

// On is the matching clause of a binary operation between groups.
func (q Group) On() string { return "on (" + q.By + ")" }

// OrEach joins the terms with `or on (group)`: the first term that has a
// group's series gives them, the next ones fill in only the groups it
// lacks. That is the alias table's rule (a legacy name is read only where
// the current one is absent) and one engine per replica.
func (q Group) OrEach(terms []string) string {
	if len(terms) == 1 {
		return terms[0]
	}
	return "(\n  " + strings.Join(terms, "\n  or "+q.On()+"\n  ") + "\n)"
}

// SumScalar is a scalar figure summed over each group's series, whichever
// engine exports it under whichever name.
func (q Group) SumScalar(s catalogue.Scalar) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, catalogue.ScalarFigure(s), "") {
			terms = append(terms, Aggregate("sum", q.By, q.sel(sel)))
		}
	}
	return q.OrEach(terms)
}

// SumCounters is the sum of each group's work counters (tokens, finished
// requests): it stands still while nothing is done.
func (q Group) SumCounters() string {
	var terms []string
	for _, k := range engines() {
		if names := counterNames(k); len(names) > 0 {
			terms = append(terms, Aggregate("sum", q.By, q.sel(selector{names: names})))
		}
	}
	return q.OrEach(terms)
}

// HistogramRate is a histogram's buckets' rates over the window, summed by
// group and bound: what histogram_quantile reads. Matching on the group
// alone, one name's buckets are never mixed with another's.
func (q Group) HistogramRate(h catalogue.Histogram, window time.Duration) string {
	return q.windowed("rate", catalogue.HistogramFigure(h), "_bucket", q.By+", le", window)
}

// IncreaseScalar is a counter's increase over the window, per group.
func (q Group) IncreaseScalar(s catalogue.Scalar, window time.Duration) string {
	return q.windowed("increase", catalogue.ScalarFigure(s), "", q.By, window)
}

// HistogramCount is the observations a histogram gained over the window,
// per group: the requests (TTFT) or tokens (ITL) a quantile is read from.
func (q Group) HistogramCount(h catalogue.Histogram, window time.Duration) string {
	return q.windowed("increase", catalogue.HistogramFigure(h), "_count", q.By, window)
}

// HistogramSum is what a histogram's observations added up to over the
// window, per group: with HistogramCount, their mean (the mean prompt of
// the requests finished, say).
func (q Group) HistogramSum(h catalogue.Histogram, window time.Duration) string {
	return q.windowed("increase", catalogue.HistogramFigure(h), "_sum", q.By, window)
}

// HistogramIncrease is a histogram's buckets' increase over the window,
// summed by group and bound: the counts a quantile is read from, one row
// per group and bound. increase() is rate() times the window, so the
// quantiles of these are those of HistogramRate, and they are the very
// numbers the analysis computes from raw samples (see analysis.Bucket).
func (q Group) HistogramIncrease(h catalogue.Histogram, window time.Duration) string {
	return q.windowed("increase", catalogue.HistogramFigure(h), "_bucket", q.By+", le", window)
}

// windowed is fn (rate, increase) over the window of each engine's series
// of fig (with suffix), summed by the labels by: one term per name the
// figure goes by, joined by OrEach.
func (q Group) windowed(fn string, fig catalogue.Figure, suffix, by string, window time.Duration) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, fig, suffix) {
			terms = append(terms, q.sumOver(fn, q.sel(sel), by, window))
		}
	}
	return q.OrEach(terms)
}

// sumOver is fn (rate, increase) of the selector's series over the
// window, summed by the labels by.
func (q Group) sumOver(fn, sel, by string, window time.Duration) string {
	return Aggregate("sum", by, fn+"("+Over(sel, window)+")")
}

// IncreaseOf is the increase over the window of the named counter (an
// API server's own, which every engine's page has alike), per group.
func (q Group) IncreaseOf(name string, window time.Duration) string {
	return q.sumOver("increase", Selector(name, q.Matchers), q.By, window)
}

// FailedTargets lists the scrape targets whose newest scrape failed (up
// is 0), one row per value of the labels by, with the matchers (label
// matchers without braces; "" for none): Prometheus's own record of a
// target it could not scrape, the only one a dead server leaves.
func FailedTargets(by []string, matchers string) string {
	return Aggregate("group", strings.Join(by, ", "), Selector("up", matchers)+" == 0")
}
