package replay

import (
	"sync"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
)

// Bounds of what the analysis ahead keeps.
const (
	// minCheckpointEvery is the fewest reports between two kept whole: a
	// jump recomputes at most that many to get the report before it.
	minCheckpointEvery = 6
	// checkpointBudget bounds the whole reports kept, in replica reports
	// (about 2.5 KB each): more reports or replicas space them further.
	checkpointBudget = 16_000
	// pointsBudget bounds the chart points kept, in replica reports
	// (about 250 B each); over it the charts before a jump are
	// recomputed.
	pointsBudget = 200_000
)

// ahead runs the analysis over the whole recording once, in order, ahead
// of the screen, on a goroutine of its own from the start of the replay
// (and in the caller's when a search outruns it). Of each report it keeps
// what moving through the past asks for: the fleet's picture and each
// replica's state (n and N), its events (the replay's event log, the
// stretch's once for all), each replica's chart point (the charts before
// a jump's position), and one report whole in every few, from which a
// jump recomputes the reports before its position. Safe for concurrent
// use.
type ahead struct {
	mu       sync.Mutex
	rec      *record.Recording
	ticks    []record.Tick
	cfg      analysis.Config
	rd       *reader
	every    int            // reports between two checkpoints
	column   map[string]int // a replica's column in states and points
	pictures []analysis.Picture
	states   [][]analysis.State // per computed report, by column (absent where missing)
	points   [][]analysis.Point // per computed report, by column; nil over pointsBudget
	checks   []*analysis.Report // report i*every
	prev     *analysis.Report   // the last computed report
	closed   bool               // the replay ended: compute nothing more
	// keepPoints: the chart points fit pointsBudget.
	keepPoints bool
	// onReport, when set, sees every report computed, in order, with the
	// lock held: it must not call back.
	onReport func(*analysis.Report)
}

// absent is the state of a replica a report does not hold.
const absent = ^analysis.State(0)

func newAhead(rec *record.Recording, cfg analysis.Config) *ahead {
	ticks := rec.Ticks()
	replicas := max(len(rec.Targets()), 1)
	every := max(minCheckpointEvery, (len(ticks)*replicas+checkpointBudget-1)/checkpointBudget)
	return &ahead{rec: rec, ticks: ticks, cfg: cfg, rd: newReader(rec), every: every, column: map[string]int{},
		keepPoints: len(ticks)*replicas <= pointsBudget}
}

// run computes every report, one at a time so that a search or a jump
// can take the lock between two, until all are or stop is closed.
func (a *ahead) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		a.mu.Lock()
		n := len(a.states)
		a.extend(n)
		done := len(a.states) == n
		if len(a.states) == len(a.ticks) && a.rd != nil {
			// All computed: the reader's window of samples is garbage.
			a.rd.close()
			a.rd = nil
		}
		a.mu.Unlock()
		if done {
			return
		}
	}
}

// extend computes reports up to and including index i. Called with the
// lock held.
func (a *ahead) extend(i int) {
	for n := len(a.states); n <= i && n < len(a.ticks) && !a.closed; n++ {
		r := a.rd.analyze(a.ticks[n], a.cfg, a.prev)
		a.prev = &r
		a.keep(n, &r)
		if a.onReport != nil {
			a.onReport(&r)
		}
	}
}

// keep notes what is kept of report n.
func (a *ahead) keep(n int, r *analysis.Report) {
	a.pictures = append(a.pictures, analysis.PictureOf(r))
	for k := range r.Replicas {
		if _, ok := a.column[r.Replicas[k].Target]; !ok {
			a.column[r.Replicas[k].Target] = len(a.column)
		}
	}
	states := make([]analysis.State, len(a.column))
	for k := range states {
		states[k] = absent
	}
	var points []analysis.Point
	if a.keepPoints {
		points = make([]analysis.Point, len(a.column))
	}
	for k := range r.Replicas {
		rep := &r.Replicas[k]
		c := a.column[rep.Target]
		states[c] = rep.State
		if a.keepPoints {
			points[c] = pointOf(r, rep)
		}
	}
	a.states = append(a.states, states)
	a.points = append(a.points, points)
	if n%a.every == 0 {
		a.checks = append(a.checks, r)
	}
}

// pointOf is a replica's chart point of report r.
func pointOf(r *analysis.Report, rep *analysis.ReplicaReport) analysis.Point {
	p := rep.Point
	if p.Time.IsZero() {
		p.Time = r.Time
	}
	return p
}

// changed reports whether report i differs from report i-1: the fleet's
// picture when target is "", else that replica's state.
func (a *ahead) changed(i int, target string) bool {
	if i <= 0 || i >= len(a.states) {
		return false
	}
	if target == "" {
		return a.pictures[i-1].Changed(a.pictures[i])
	}
	c, ok := a.column[target]
	if !ok {
		return false
	}
	return stateAt(a.states[i-1], c) != stateAt(a.states[i], c)
}

// stateAt is the state in column c of a report's states.
func stateAt(states []analysis.State, c int) analysis.State {
	if c < len(states) {
		return states[c]
	}
	return absent
}

// nextChange returns the first change (changed) after i, or -1.
func (a *ahead) nextChange(i int, target string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	for j := i + 1; j < len(a.ticks); j++ {
		a.extend(j)
		if a.changed(j, target) {
			return j
		}
	}
	return -1
}

// prevChange returns the last change (changed) before i, or -1.
func (a *ahead) prevChange(i int, target string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.extend(i)
	for j := min(i, len(a.states)) - 1; j > 0; j-- {
		if a.changed(j, target) {
			return j
		}
	}
	return -1
}

// report returns report i (nil for i < 0), recomputed with rd from the
// checkpoint before it (or the newest report computed, when it is i).
// rd, which the replay plays on with, is then reading near i: stepping
// on from i decodes only the new frames.
func (a *ahead) report(i int, rd *reader) *analysis.Report {
	if i < 0 {
		return nil
	}
	a.mu.Lock()
	a.extend(i)
	i = min(i, len(a.states)-1)
	if i == len(a.states)-1 {
		r := a.prev
		a.mu.Unlock()
		return r
	}
	a.mu.Unlock()
	var r *analysis.Report
	a.each(i, i, rd, func(at *analysis.Report) { r = at })
	return r
}

// pointsBefore is up to n chart points per replica before report i,
// oldest first, or nil when they were not kept (pointsBudget).
func (a *ahead) pointsBefore(i, n int) map[string][]analysis.Point {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.keepPoints {
		return nil
	}
	a.extend(i - 1)
	from := max(i-n, 0)
	out := make(map[string][]analysis.Point)
	for j := from; j < min(i, len(a.points)); j++ {
		if a.points[j] == nil {
			return nil
		}
		for target, c := range a.column {
			if stateAt(a.states[j], c) != absent {
				out[target] = append(out[target], a.points[j][c])
			}
		}
	}
	return out
}

func (a *ahead) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.rd != nil {
		a.rd.close()
		a.rd = nil
	}
}

// each calls out with reports from through to (indices, clamped to the
// recording), in order, recomputed with rd from the checkpoint at or
// before from.
func (a *ahead) each(from, to int, rd *reader, out func(*analysis.Report)) {
	from = max(from, 0)
	if from > to {
		return
	}
	a.mu.Lock()
	a.extend(to)
	to = min(to, len(a.states)-1)
	c := min(from/a.every, len(a.checks)-1)
	r := a.checks[c]
	a.mu.Unlock()
	for n := c * a.every; n <= to; n++ {
		if n > c*a.every {
			next := rd.analyze(a.ticks[n], a.cfg, r)
			r = &next
		}
		if n >= from {
			out(r)
		}
	}
}
