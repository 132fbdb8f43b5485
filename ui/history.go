package ui

import (
	"slices"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// pointsUntil returns up to n of the newest points of a history at or
// before until (later ones exist while paused), oldest first.
func pointsUntil(h *pointHistory, n int, until time.Time) []analysis.Point {
	if h == nil {
		return nil
	}
	end := h.Len()
	for end > 0 && h.timeAt(end-1).After(until) {
		end--
	}
	start := max(0, end-n)
	out := make([]analysis.Point, 0, end-start)
	// One block holds the prompt-length columns of all the points.
	column := make([]float32, 0, (end-start)*h.stride)
	for i := start; i < end; i++ {
		out = h.appendPoint(out, i, &column)
	}
	return out
}

// eventLog keeps the newest events: a transient spike stays visible.
type eventLog struct {
	events []loggedEvent
	limit  int
}

// loggedEvent is an event and the time of the report that brought it:
// while paused, events that came after the report shown wait.
type loggedEvent struct {
	analysis.Event
	came time.Time
}

// add appends the events of a report made at came, keeping limit.
func (l *eventLog) add(evs []analysis.Event, came time.Time) {
	for _, e := range evs {
		l.events = append(l.events, loggedEvent{e, came})
	}
	if over := len(l.events) - l.limit; over > 0 {
		l.events = slices.Clone(l.events[over:])
	}
}

// newest returns up to n events, newest first, of reports until until.
func (l *eventLog) newest(n int, until time.Time) []analysis.Event {
	var out []analysis.Event
	for i := len(l.events) - 1; i >= 0 && len(out) < n; i-- {
		if l.events[i].came.After(until) || l.events[i].Time.After(until) {
			continue
		}
		out = append(out, l.events[i].Event)
	}
	return out
}
