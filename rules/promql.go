package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// promql writes the expressions of the rules for one grouping.
type promql struct {
	by string // the grouping labels, comma-separated
}

// on is the matching clause of a binary operation between groups.
func (q promql) on() string { return "on (" + q.by + ")" }

// orEach joins the terms with `or on (group)`: the first term that has a
// group's series gives them, the next ones fill in only the groups it
// lacks. That is the alias table's rule (a legacy name is read only where
// the current one is absent) and one engine per replica.
func (q promql) orEach(terms []string) string {
	if len(terms) == 1 {
		return terms[0]
	}
	return "(\n  " + strings.Join(terms, "\n  or "+q.on()+"\n  ") + "\n)"
}

// sumScalar is a scalar figure summed over each group's series, whichever
// engine exports it under whichever name.
func (q promql) sumScalar(s catalogue.Scalar) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, catalogue.ScalarFigure(s), "") {
			terms = append(terms, fmt.Sprintf("sum by (%s) (%s)", q.by, sel))
		}
	}
	return q.orEach(terms)
}

// sumCounters is the sum of each group's work counters (tokens, finished
// requests): it stands still while nothing is done.
func (q promql) sumCounters() string {
	var terms []string
	for _, k := range engines() {
		if names := counterNames(k); len(names) > 0 {
			terms = append(terms, fmt.Sprintf("sum by (%s) (%s)", q.by, selector{names: names}))
		}
	}
	return q.orEach(terms)
}

// histogramRate is a histogram's buckets' rates over the window, summed by
// group and bound: what histogram_quantile reads.
func (q promql) histogramRate(h catalogue.Histogram, window time.Duration) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, catalogue.HistogramFigure(h), "_bucket") {
			terms = append(terms, fmt.Sprintf("sum by (%s, le) (rate(%s[%s]))", q.by, sel, dur(window)))
		}
	}
	// Matching on the group alone, one name's buckets are never mixed
	// with another's.
	return q.orEach(terms)
}

// increaseScalar is a counter's increase over the window, per group.
func (q promql) increaseScalar(s catalogue.Scalar, window time.Duration) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, catalogue.ScalarFigure(s), "") {
			terms = append(terms, fmt.Sprintf("sum by (%s) (increase(%s[%s]))", q.by, sel, dur(window)))
		}
	}
	return q.orEach(terms)
}

// histogramCount is the observations a histogram gained over the window,
// per group: the requests (TTFT) or tokens (ITL) a quantile is read from.
func (q promql) histogramCount(h catalogue.Histogram, window time.Duration) string {
	var terms []string
	for _, k := range engines() {
		for _, sel := range alternatives(k, catalogue.HistogramFigure(h), "_count") {
			terms = append(terms, fmt.Sprintf("sum by (%s) (increase(%s[%s]))", q.by, sel, dur(window)))
		}
	}
	return q.orEach(terms)
}

// dur writes a duration as PromQL does (5s, 1m30s, 12s500ms).
func dur(d time.Duration) string { return model.Duration(d).String() }

// num writes a threshold without trailing zeros.
func num(v float64) string { return fmt.Sprint(v) }
