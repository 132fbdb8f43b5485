package replay

import (
	"sync"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
)

// checkpointEvery is how many reports go between two kept reports: a
// jump recomputes at most this many to get the report before it.
const checkpointEvery = 60

// ahead runs the analysis over the recording ahead of the screen, to
// find the state changes and the previous report of any position. It
// computes lazily, as far as it was asked, and keeps a state per report
// per replica and every checkpointEvery-th report whole. Safe for
// concurrent use.
type ahead struct {
	mu     sync.Mutex
	rec    *record.Recording
	cfg    analysis.Config
	rd     *reader
	states [][]analysis.State // per computed report
	checks []*analysis.Report // report i*checkpointEvery
	prev   *analysis.Report   // the last computed report
}

func newAhead(rec *record.Recording, cfg analysis.Config) *ahead {
	return &ahead{rec: rec, cfg: cfg, rd: newReader(rec)}
}

// extend computes reports up to and including index i.
func (a *ahead) extend(i int) {
	ticks := a.rec.Ticks()
	for n := len(a.states); n <= i && n < len(ticks); n++ {
		t := ticks[n]
		r := analysis.Analyze(t.Time, a.rd.readings(t), tickConfig(a.cfg, t), a.prev)
		a.prev = &r
		states := make([]analysis.State, len(r.Replicas))
		for k, rep := range r.Replicas {
			states[k] = rep.State
		}
		a.states = append(a.states, states)
		if n%checkpointEvery == 0 {
			a.checks = append(a.checks, &r)
		}
	}
}

// changed reports whether report i's state differs from report i-1's
// for some replica.
func (a *ahead) changed(i int) bool {
	if i <= 0 || i >= len(a.states) {
		return false
	}
	prev, cur := a.states[i-1], a.states[i]
	if len(prev) != len(cur) {
		return true
	}
	for k := range cur {
		if cur[k] != prev[k] {
			return true
		}
	}
	return false
}

// nextChange returns the first state change after i, or -1.
func (a *ahead) nextChange(i int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := len(a.rec.Ticks()) - 1
	for j := i + 1; j <= last; j++ {
		a.extend(j)
		if a.changed(j) {
			return j
		}
	}
	return -1
}

// prevChange returns the last state change before i, or -1.
func (a *ahead) prevChange(i int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.extend(i)
	for j := min(i, len(a.states)) - 1; j > 0; j-- {
		if a.changed(j) {
			return j
		}
	}
	return -1
}

// report returns report i (nil for i < 0), recomputed from the
// checkpoint before it with a reader of its own (each).
func (a *ahead) report(i int) *analysis.Report {
	var r *analysis.Report
	a.each(i, i, func(at *analysis.Report) { r = at })
	return r
}

func (a *ahead) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rd.close()
}

// each calls out with reports from through to (indices, clamped to the
// recording), in order, recomputed from the checkpoint at or before from
// with a reader of its own, so that the screen's playing goes on.
func (a *ahead) each(from, to int, out func(*analysis.Report)) {
	from = max(from, 0)
	if from > to {
		return
	}
	a.mu.Lock()
	a.extend(to)
	to = min(to, len(a.states)-1)
	c := min(from/checkpointEvery, len(a.checks)-1)
	r := a.checks[c]
	a.mu.Unlock()
	ticks := a.rec.Ticks()
	rd := newReader(a.rec)
	defer rd.close()
	for n := c * checkpointEvery; n <= to; n++ {
		if n > c*checkpointEvery {
			t := ticks[n]
			next := analysis.Analyze(t.Time, rd.readings(t), tickConfig(a.cfg, t), r)
			r = &next
		}
		if n >= from {
			out(r)
		}
	}
}
