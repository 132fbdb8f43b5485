package ui

import (
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// pointRing is a bounded history of one replica's points: the oldest point
// is overwritten once the ring is full, so memory stays flat for a process
// that runs for days.
type pointRing struct {
	buf  []analysis.Point
	next int
	full bool
}

func newPointRing(capacity int) *pointRing {
	return &pointRing{buf: make([]analysis.Point, capacity)}
}

// push appends a point, dropping the oldest when full.
func (r *pointRing) push(p analysis.Point) {
	if len(r.buf) == 0 {
		return
	}
	r.buf[r.next] = p
	r.next++
	if r.next == len(r.buf) {
		r.next = 0
		r.full = true
	}
}

// len returns the number of points held.
func (r *pointRing) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// at returns the i-th point, oldest first.
func (r *pointRing) at(i int) analysis.Point {
	if r.full {
		return r.buf[(r.next+i)%len(r.buf)]
	}
	return r.buf[i]
}

// last returns up to n of the newest points taken at or before until, oldest
// first. Points after until exist while the display is paused: they are
// kept but not drawn.
func (r *pointRing) last(n int, until time.Time) []analysis.Point {
	end := r.len()
	for end > 0 && r.at(end-1).Time.After(until) {
		end--
	}
	start := max(0, end-n)
	out := make([]analysis.Point, 0, end-start)
	for i := start; i < end; i++ {
		out = append(out, r.at(i))
	}
	return out
}

// eventLog keeps the newest events, so that a transient spike stays visible
// after its condition has cleared.
type eventLog struct {
	events []analysis.Event
	limit  int
}

// add appends events, keeping the newest limit of them.
func (l *eventLog) add(evs []analysis.Event) {
	l.events = append(l.events, evs...)
	if over := len(l.events) - l.limit; over > 0 {
		kept := make([]analysis.Event, l.limit)
		copy(kept, l.events[over:])
		l.events = kept
	}
}

// newest returns up to n events, newest first, taken at or before until.
func (l *eventLog) newest(n int, until time.Time) []analysis.Event {
	var out []analysis.Event
	for i := len(l.events) - 1; i >= 0 && len(out) < n; i-- {
		if l.events[i].Time.After(until) {
			continue
		}
		out = append(out, l.events[i])
	}
	return out
}
