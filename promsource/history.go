package promsource

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// maxPoints is Prometheus's limit on the points of one range query's
// series ("exceeded maximum resolution of 11,000 points").
const maxPoints = 11000

// Labels the history query adds to name the replica and the figure.
const (
	replicaLabel = "vtop_replica"
	figureLabel  = "vtop_figure"
)

// History returns the charted figures of every replica over the span that
// ends now, at most points per replica (fewer when the refresh interval is
// coarser). It is ONE range query whatever the fleet size: every figure
// is computed by PromQL, grouped by replica and tagged with its figure,
// and the figures are joined with "or". Rates and quantiles are over the
// analysis window, as the live figures are.
func (s *Source) History(ctx context.Context, span time.Duration, points int) ([]catalogue.TargetHistory, error) {
	end := s.evaluationTime()
	step := historyStep(span, points, s.cfg.Interval)
	r := v1.Range{Start: end.Add(-span + step), End: end, Step: step}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	v, _, _, err := s.api.QueryRange(ctx, s.historyQuery(s.rangeWidth()), r)
	if err != nil {
		return nil, s.fail("history: " + problem(err, s.cfg.Timeout))
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, s.fail("history: not a Prometheus query API: a range query answered " + typeOf(v))
	}
	return historyOf(m), nil
}

// historyStep spaces points evenly over the span: no finer than the
// refresh interval, no more than Prometheus allows.
func historyStep(span time.Duration, points int, interval time.Duration) time.Duration {
	points = min(max(points, 1), maxPoints)
	step := max((span / time.Duration(points)).Truncate(time.Millisecond), interval, time.Millisecond)
	if span/step > maxPoints {
		step = (span + maxPoints - 1) / maxPoints
	}
	return step
}

func typeOf(v model.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().String()
}

// historyFigure is one charted figure and its PromQL.
type historyFigure struct {
	fig  catalogue.ChartFigure
	expr string
}

// historyQuery is the one range query of the history.
func (s *Source) historyQuery(window time.Duration) string {
	figs := s.historyFigures(window)
	parts := make([]string, len(figs))
	for i, f := range figs {
		parts[i] = fmt.Sprintf(`label_replace(%s, %q, "%d", "", "")`, f.expr, figureLabel, f.fig)
	}
	return strings.Join(parts, " or ")
}

// historyFigures are the charted figures as PromQL, by replica: each
// catalogue.Charts figure over the families of the alias table that feed
// it, one alternative per family joined with "or" (current names first),
// so that a replica's figure comes from the first family it has.
func (s *Source) historyFigures(window time.Duration) []historyFigure {
	figs := make([]historyFigure, 0, catalogue.NumChartFigures)
	for fig, c := range catalogue.Charts {
		var alts []string
		for _, r := range c.Sources() {
			alts = append(alts, s.chartExpr(c, r, window))
		}
		figs = append(figs, historyFigure{catalogue.ChartFigure(fig), "(" + strings.Join(alts, " or ") + ")"})
	}
	return figs
}

// chartExpr is the PromQL of a chart over one family, by replica.
func (s *Source) chartExpr(c catalogue.Chart, r *catalogue.Read, window time.Duration) string {
	by := s.cfg.GroupBy
	if by == "" {
		by = labelPod
	}
	// The replica's name, as the live readings name it: the grouping
	// label where a series has it, else instance.
	named := func(x string) string {
		return fmt.Sprintf(`label_replace(label_replace(%s, %q, "$1", %q, "(.*)"), %q, "$1", %q, "(.+)")`,
			x, replicaLabel, labelInstance, replicaLabel, by)
	}
	sel := s.chartSelector(c, r)
	switch c.Op {
	case catalogue.ChartGauge:
		agg := "sum"
		if c.Mean {
			agg = "avg"
		}
		return fmt.Sprintf("%s by (%s) (%s)", agg, replicaLabel, named(sel("")))
	case catalogue.ChartRate:
		return fmt.Sprintf("sum by (%s) (%s)", replicaLabel, named("rate("+sel("")+rangeSel(window)+")"))
	}
	return fmt.Sprintf("histogram_quantile(%s, sum by (%s, le) (%s))", strconv.FormatFloat(c.Quantile, 'g', -1, 64),
		replicaLabel, named("rate("+sel("_bucket")+rangeSel(window)+")"))
}

// chartSelector returns the selector of the family's series that feed the
// chart, given a sample suffix: vLLM's names under every prefix, the
// series of a split family by their label's values, counts by finished
// reason of the reasons vtop knows.
func (s *Source) chartSelector(c catalogue.Chart, r *catalogue.Read) func(suffix string) string {
	var extra string
	var values []string
	for _, sp := range r.Split {
		if catalogue.ScalarFigure(sp.Scalar) == c.Figure() && r.Kind == catalogue.ReadSplitScalar ||
			catalogue.HistogramFigure(sp.Histogram) == c.Figure() && r.Kind == catalogue.ReadSplitHistogram {
			values = append(values, regexp.QuoteMeta(sp.Value))
		}
	}
	switch {
	case len(values) > 0:
		extra = fmt.Sprintf("%s=~%q", r.Label, strings.Join(values, "|"))
	case r.Kind == catalogue.ReadFinished:
		extra = fmt.Sprintf("%s=~%q", catalogue.LabelFinishedReason, strings.Join(catalogue.FinishReasonNames[:], "|"))
	}
	return func(suffix string) string {
		name := regexp.QuoteMeta(r.Name + suffix)
		if rest, ok := strings.CutPrefix(r.Name, vllmOwn); ok {
			name = prefixGroup() + regexp.QuoteMeta(rest+suffix)
		}
		return s.q.selectorWith(name, extra)
	}
}

// historyOf turns the tagged range-query answer into each replica's
// points, oldest first; a figure missing at a time is NaN.
func historyOf(m model.Matrix) []catalogue.TargetHistory {
	byReplica := map[string]map[model.Time]*catalogue.HistoryPoint{}
	for _, ss := range m {
		fig, err := strconv.Atoi(string(ss.Metric[figureLabel]))
		if err != nil || fig < 0 || fig >= int(catalogue.NumChartFigures) {
			continue
		}
		name := safetext.Sanitize(string(ss.Metric[replicaLabel]))
		pts := byReplica[name]
		if pts == nil {
			pts = map[model.Time]*catalogue.HistoryPoint{}
			byReplica[name] = pts
		}
		for _, p := range ss.Values {
			hp := pts[p.Timestamp]
			if hp == nil {
				hp = &catalogue.HistoryPoint{Time: p.Timestamp.Time()}
				for i := range hp.Values {
					hp.Values[i] = math.NaN()
				}
				pts[p.Timestamp] = hp
			}
			hp.Values[fig] = float64(p.Value)
		}
	}
	out := make([]catalogue.TargetHistory, 0, len(byReplica))
	for name, pts := range byReplica {
		th := catalogue.TargetHistory{Target: name, Points: make([]catalogue.HistoryPoint, 0, len(pts))}
		for _, hp := range pts {
			th.Points = append(th.Points, *hp)
		}
		slices.SortFunc(th.Points, func(a, b catalogue.HistoryPoint) int { return a.Time.Compare(b.Time) })
		out = append(out, th)
	}
	slices.SortFunc(out, func(a, b catalogue.TargetHistory) int { return strings.Compare(a.Target, b.Target) })
	return out
}
