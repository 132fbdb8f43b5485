package promql

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// Labels the history query adds to name the replica and the figure.
const (
	ReplicaLabel = "vtop_replica"
	FigureLabel  = "vtop_figure"
)

// History is the one range query of every replica's charted figures,
// whatever the fleet size: each catalogue.Charts figure over the families
// of the alias table that feed it, one alternative per family joined with
// "or" (current names first, so that a replica's figure comes from the
// first family it has), by replica (ReplicaLabel: the label by where a
// series has it, else instance) and tagged with its figure (FigureLabel).
// Rates and quantiles are over the window; matchers (without braces, ""
// for none) narrow every selector.
func History(by, matchers string, window time.Duration) string {
	parts := make([]string, len(catalogue.Charts))
	for fig, c := range catalogue.Charts {
		var alts []string
		for _, r := range c.Sources() {
			alts = append(alts, chartExpr(c, r, by, matchers, window))
		}
		parts[fig] = Tag("("+strings.Join(alts, " or ")+")", FigureLabel, strconv.Itoa(fig))
	}
	return strings.Join(parts, " or ")
}

// chartExpr is the PromQL of a chart over one family, by replica.
func chartExpr(c catalogue.Chart, r *catalogue.Read, by, matchers string, window time.Duration) string {
	// The replica's name, as the live readings name it.
	named := func(x string) string {
		return CopyLabel(CopyLabel(x, ReplicaLabel, model.InstanceLabel, "(.*)"), ReplicaLabel, by, "(.+)")
	}
	sel := func(suffix string) string {
		return Selector("", NameMatches(namesRegex([]sampleName{sampleNameOf(r.Name + suffix)})), matchers, chartMatcher(c, r))
	}
	switch c.Op {
	case catalogue.ChartGauge:
		agg := "sum"
		if c.Mean {
			agg = "avg"
		}
		return Aggregate(agg, ReplicaLabel, named(sel("")))
	case catalogue.ChartRate:
		return Aggregate("sum", ReplicaLabel, named("rate("+OverMs(sel(""), window)+")"))
	}
	return HistogramQuantile(c.Quantile, Aggregate("sum", ReplicaLabel+", le", named("rate("+OverMs(sel("_bucket"), window)+")")))
}

// chartMatcher picks the family's series that feed the chart: the series
// of a split family by their label's values, counts by finished reason
// of the reasons vtop knows; "" for all.
func chartMatcher(c catalogue.Chart, r *catalogue.Read) string {
	if m := splitMatcher(r, c.Figure()); m != "" {
		return m
	}
	if r.Kind == catalogue.ReadFinished {
		return MatchAny(catalogue.LabelFinishedReason, catalogue.FinishReasonNames[:]...)
	}
	return ""
}
