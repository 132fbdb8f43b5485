package promsource

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/safetext"
)

// maxPoints is Prometheus's limit on the points of one range query's
// series ("exceeded maximum resolution of 11,000 points").
const maxPoints = 11000

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
	m, err := s.queryRange(ctx, "history", promql.History(cmp.Or(s.cfg.GroupBy, labelPod), s.q.matchers, s.rangeWidth()), r, s.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return historyOf(m), nil
}

// queryRange runs a range query within timeout; what names it in errors.
func (s *Source) queryRange(ctx context.Context, what, expr string, r v1.Range, timeout time.Duration) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, _, _, err := s.api.QueryRange(ctx, expr, r)
	if err != nil {
		return nil, s.fail(what + ": " + problem(err, timeout))
	}
	m, ok := v.(model.Matrix)
	if !ok {
		got := "nothing"
		if v != nil {
			got = v.Type().String()
		}
		return nil, s.fail(what + ": not a Prometheus query API: a range query answered " + got)
	}
	return m, nil
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

// historyOf turns the tagged range-query answer into each replica's
// points, oldest first; a figure missing at a time is NaN.
func historyOf(m model.Matrix) []catalogue.TargetHistory {
	byReplica := map[string]map[model.Time]*catalogue.HistoryPoint{}
	for _, ss := range m {
		fig, err := strconv.Atoi(string(ss.Metric[promql.FigureLabel]))
		if err != nil || fig < 0 || fig >= int(catalogue.NumChartFigures) {
			continue
		}
		name := safetext.Sanitize(string(ss.Metric[promql.ReplicaLabel]))
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
