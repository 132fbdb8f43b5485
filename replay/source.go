package replay

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/record"
)

// Speeds are the replay speeds the screen offers.
var Speeds = []int{1, 10, 60}

// Source plays a recording to a monitor: a source that sets the pace
// (Paced), whose steps are the recorded evaluations, at the recorded pace
// times the speed. The controls are safe to call from any goroutine (the screen's).
type Source struct {
	rec   *record.Recording
	ticks []record.Tick
	ahead *ahead
	steps chan monitor.Step
	wake  chan struct{}

	mu      sync.Mutex // guards everything below
	pos     int        // the tick shown
	emitted int        // the tick last sent to the monitor; -1 none
	paused  bool
	speed   int
	rd      *reader // the reader of Run's goroutine
}

// New returns a source that plays rec from its start, with the analysis
// configuration cfg (Config(rec) for live mode's), playing at ×1.
func New(rec *record.Recording, cfg analysis.Config) (*Source, error) {
	ticks := rec.Ticks()
	if len(ticks) == 0 {
		return nil, ErrNoReports
	}
	return &Source{
		rec: rec, ticks: ticks, ahead: newAhead(rec, cfg),
		steps: make(chan monitor.Step), wake: make(chan struct{}, 1),
		emitted: -1, speed: 1,
	}, nil
}

// Run plays until ctx is done; at the end of the recording it pauses.
func (s *Source) Run(ctx context.Context) error {
	s.mu.Lock()
	s.rd = newReader(s.rec)
	s.mu.Unlock()
	stop := make(chan struct{})
	var pass sync.WaitGroup
	pass.Go(func() { s.ahead.run(stop) })
	defer s.ahead.close()
	defer pass.Wait()
	defer close(stop)
	defer s.rd.close()
	for {
		step, ok := s.nextStep()
		if ok {
			select {
			case s.steps <- step:
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-s.timer():
			s.advance()
		}
	}
}

// nextStep builds the step for the current position when it has not
// been sent yet; a jump carries the report before it.
func (s *Source) nextStep() (monitor.Step, bool) {
	s.mu.Lock()
	pos, emitted := s.pos, s.emitted
	s.emitted = pos
	s.mu.Unlock()
	if pos == emitted {
		return monitor.Step{}, false
	}
	t := s.ticks[pos]
	step := monitor.Step{Now: t.Time, Window: t.Window}
	if pos != emitted+1 {
		// The report before, with the reader the replay plays on: it then
		// holds most of what the position's report reads.
		step.Restart, step.Prev = true, s.ahead.report(pos-1, s.rd)
	}
	step.Readings = s.rd.readings(t)
	return step, true
}

// timer fires when the next tick is due, nil when paused or at the end.
func (s *Source) timer() <-chan time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused || s.pos >= len(s.ticks)-1 {
		return nil
	}
	gap := s.ticks[s.pos+1].Time.Sub(s.ticks[s.pos].Time) / time.Duration(s.speed)
	return time.After(max(gap, 0))
}

// advance moves one tick forward, pausing at the end.
func (s *Source) advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos < len(s.ticks)-1 {
		s.pos++
	}
	if s.pos == len(s.ticks)-1 {
		s.paused = true
	}
}

// Paced is the source as a monitor runs it: the recorded evaluations, one
// step per report to make, set the pace.
func (s *Source) Paced() monitor.Source { return monitor.Source{Feed: s, Steps: s.steps} }

// Readings returns the readings of the current position.
func (s *Source) Readings(dst []catalogue.Readings) []catalogue.Readings {
	s.mu.Lock()
	t := s.ticks[s.pos]
	s.mu.Unlock()
	rd := newReader(s.rec)
	defer rd.close()
	return append(dst[:0], rd.readings(t)...)
}

// Keep is a no-op: each recorded report says which readings it saw.
func (s *Source) Keep(time.Duration) {}

// Refresh is answered at once: a recording has nothing new to fetch.
func (s *Source) Refresh() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// Interval is the recorded scrape interval.
func (s *Source) Interval() time.Duration { return s.rec.Header.Interval }

// Now is the recorded time of the current position.
func (s *Source) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ticks[s.pos].Time
}

// move sets the position (clamped) under the lock and wakes Run.
func (s *Source) move(f func()) {
	s.mu.Lock()
	f()
	s.pos = min(max(s.pos, 0), len(s.ticks)-1)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// TogglePause pauses or resumes.
func (s *Source) TogglePause() { s.move(func() { s.paused = !s.paused }) }

// SetPaused pauses (true) or resumes.
func (s *Source) SetPaused(p bool) { s.move(func() { s.paused = p }) }

// StepBy moves n scrapes (reports) forward, or back when n < 0, and
// pauses: stepping is for looking closely.
func (s *Source) StepBy(n int) { s.move(func() { s.pos += n; s.paused = true }) }

// SetSpeed sets the speed factor (1, 10, 60, or any positive factor).
func (s *Source) SetSpeed(x int) { s.move(func() { s.speed = max(x, 1) }) }

// Home jumps to the start.
func (s *Source) Home() { s.move(func() { s.pos = 0 }) }

// End jumps to the end.
func (s *Source) End() { s.move(func() { s.pos = len(s.ticks) - 1 }) }

// OnReport makes f see every report of the recording once, in order, as
// the analysis ahead computes it (on its goroutine, from Run's start):
// the events of the whole replay, read once. f must return quickly and
// not call the source. Call it before Run.
func (s *Source) OnReport(f func(*analysis.Report)) { s.ahead.onReport = f }

// NextChange jumps to the next report where the fleet's picture changes
// (analysis.Picture: its worst state, or the count of replicas asking
// for action or DOWN crossing a step), or, for a target, that replica's state;
// it reports whether there was one. It runs the analysis ahead as far as
// needed.
func (s *Source) NextChange(target string) bool {
	j := s.ahead.nextChange(s.position(), target)
	if j >= 0 {
		s.move(func() { s.pos, s.paused = j, true })
	}
	return j >= 0
}

// PrevChange jumps to the previous change (NextChange).
func (s *Source) PrevChange(target string) bool {
	j := s.ahead.prevChange(s.position(), target)
	if j >= 0 {
		s.move(func() { s.pos, s.paused = j, true })
	}
	return j >= 0
}

func (s *Source) position() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pos
}

// Status is what the replay header shows.
type Status struct {
	// Time is the recorded time the replay stands at (after a jump, its
	// report may still be being computed).
	Time time.Time
	// Offset is how far into the recording it is, Length how long the
	// recording is (first to last report).
	Offset, Length time.Duration
	// Position and Reports count reports (Position from 0).
	Position, Reports int
	Speed             int
	Paused            bool
	// Damage says what of the file could not be read ("" when intact).
	Damage string
}

// Status returns the replay's position and controls.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusOf(s.pos)
}

// StatusAt is the status the replay had when it stood at the report at
// t (the first at or after it), with the controls as they are now: the
// line of a report that reaches the screen after the replay moved on.
func (s *Source) StatusAt(t time.Time) Status {
	i := sort.Search(len(s.ticks), func(k int) bool { return !s.ticks[k].Time.Before(t) })
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusOf(min(i, len(s.ticks)-1))
}

// statusOf is the status at report i; called with the lock held.
func (s *Source) statusOf(i int) Status {
	first, last := s.ticks[0].Time, s.ticks[len(s.ticks)-1].Time
	return Status{
		Time: s.ticks[i].Time, Offset: s.ticks[i].Time.Sub(first), Length: last.Sub(first),
		Position: i, Reports: len(s.ticks), Speed: s.speed, Paused: s.paused,
		Damage: s.rec.Damage.String(),
	}
}

// String is the header line: "REPLAY 12:03:41 (3m10s of 15m00s) ×10 paused".
func (st Status) String() string {
	line := fmt.Sprintf("REPLAY %s (%s of %s) ×%d", st.Time.Format(human.Clock), clock(st.Offset), clock(st.Length), st.Speed)
	if st.Paused {
		line += " paused"
	}
	if st.Damage != "" {
		line += " · " + st.Damage
	}
	return line
}

// clock writes a duration as 3m10s, or 1h02m03s.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, sec)
	}
	return fmt.Sprintf("%dm%02ds", m, sec)
}

// PointsBefore is the stretch of up to n reports before the first tick
// at or after at, as the points of each replica's sparklines and charts,
// oldest first: what the screen would hold had it played there rather
// than jumped. The analysis ahead keeps them; past its budget they are
// computed off the playing (a reader of their own).
func (s *Source) PointsBefore(at time.Time, n int) map[string][]analysis.Point {
	i := sort.Search(len(s.ticks), func(k int) bool { return !s.ticks[k].Time.Before(at) })
	if kept := s.ahead.pointsBefore(i, n); kept != nil {
		return kept
	}
	points := make(map[string][]analysis.Point)
	rd := newReader(s.rec)
	defer rd.close()
	s.ahead.each(i-n, i-1, rd, func(r *analysis.Report) {
		for k := range r.Replicas {
			points[r.Replicas[k].Target] = append(points[r.Replicas[k].Target], pointOf(r, &r.Replicas[k]))
		}
	})
	return points
}
