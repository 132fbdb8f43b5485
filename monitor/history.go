package monitor

import (
	"context"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// sourceStatus is the status a report carries: the source's Status, nil
// for a source whose targets speak for themselves.
func sourceStatus(src Source) *catalogue.SourceStatus {
	if src.Status == nil {
		return nil
	}
	st := src.Status()
	return &st
}

// HistoryOutput receives a source's history once, at start: each target's
// points, oldest first.
type HistoryOutput func(map[string][]analysis.Point)

// historyRequest is what SetHistory asked for.
type historyRequest struct {
	span   time.Duration
	points int
	out    HistoryOutput
}

// SetHistory asks Run to load span of history, at most points per target,
// from a source that holds it (History) and hand it to out once, beside
// the first report (in either order). Sources without history ignore it;
// so does a failure, which the source's Status tells. Call before Run.
func (m *Monitor) SetHistory(span time.Duration, points int, out HistoryOutput) {
	m.history = &historyRequest{span: span, points: points, out: out}
}

// loadHistory runs the history request, if any, against the source.
func (m *Monitor) loadHistory(ctx context.Context) {
	if m.history == nil || m.source.History == nil || m.history.span <= 0 {
		return
	}
	th, err := m.source.History(ctx, m.history.span, m.history.points)
	if err != nil || ctx.Err() != nil {
		return
	}
	m.history.out(Points(th))
}

// Points converts a source's history into the points the screen keeps,
// by target. Past points were never judged, so their state is WARMING (not
// judged), never a HEALTHY the data did not show: only their figures are
// drawn.
func Points(history []catalogue.TargetHistory) map[string][]analysis.Point {
	out := make(map[string][]analysis.Point, len(history))
	for _, th := range history {
		pts := make([]analysis.Point, len(th.Points))
		for i, hp := range th.Points {
			pts[i] = point(hp)
		}
		out[th.Target] = pts
	}
	return out
}

// point is one HistoryPoint as an analysis.Point.
func point(hp catalogue.HistoryPoint) analysis.Point {
	p := analysis.Point{Time: hp.Time, State: analysis.StateWarming}
	for c := range catalogue.NumChartFigures {
		*p.Chart(c) = float32(hp.Values[c])
	}
	return p
}

// tellWindow passes the window to a source that fetches it itself.
func tellWindow(source Source, d time.Duration) {
	if source.SetWindow == nil {
		return
	}
	if d <= 0 {
		d = analysis.DefaultConfig().Window
	}
	source.SetWindow(d)
}
