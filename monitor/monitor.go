// Package monitor joins a source of readings to the analysis: every
// interval, and as soon as a refresh is in, it evaluates the window and
// hands the Report to its outputs (the screen, the JSONL writer).
package monitor

import (
	"context"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// Output receives each Report, one at a time, on the monitor's goroutine.
// An error stops the monitor: a report that cannot be written must not be
// silently lost.
type Output func(analysis.Report) error

// Monitor runs a Source and the analysis loop beside it.
type Monitor struct {
	source Source
	output Output
	kick   chan struct{}

	tap func(Evaluation)

	mu        sync.Mutex // guards cfg and windowSet
	cfg       analysis.Config
	windowSet bool // SetWindow was called: it overrides a paced source's window

	history *historyRequest // set by SetHistory; nil loads none

	gpus GPUInput // set by SetGPUs; nil reads none
}

// New prepares a monitor of source; nothing runs until Run. The source is
// asked to keep the analysis window.
func New(source Source, cfg analysis.Config, output Output) *Monitor {
	source.Keep(keepFor(cfg.Window, source.Interval()))
	tellWindow(source, cfg.Window)
	return &Monitor{source: source, output: output, kick: make(chan struct{}, 1), cfg: cfg}
}

// keepFor is what a source keeps to cover a window: every reading in it
// plus one before it and one in flight.
func keepFor(window, interval time.Duration) time.Duration {
	return window + 2*interval
}

// Window returns the analysis window in use.
func (m *Monitor) Window() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg.Window
}

// SetWindow changes the analysis window from the next report on, asking
// the source to keep more when the new window needs it. Safe to call from
// any goroutine.
func (m *Monitor) SetWindow(d time.Duration) {
	if d <= 0 {
		return
	}
	m.source.Keep(keepFor(d, m.source.Interval()))
	tellWindow(m.source, d)
	m.mu.Lock()
	m.cfg.Window = d
	m.windowSet = true
	m.mu.Unlock()
}

// SetWanted tells a source that reads some targets in more detail
// (Source.SetWanted) which are wanted from its next refresh on (nil:
// none), and asks for that refresh at once so that a detail view opened
// gets them without waiting an interval. Other sources ignore it. Safe to
// call from any goroutine.
func (m *Monitor) SetWanted(targets []string) {
	if m.source.SetWanted == nil {
		return
	}
	m.source.SetWanted(targets)
	if len(targets) > 0 {
		m.Refresh()
	}
}

// SetInView tells a source that reads the targets on screen in more
// detail (Source.SetInView) which they are, and asks for a refresh at once
// when the source says the set calls for one (a scroll brought replicas it
// read in less detail), so that their rows fill without waiting an
// interval. Other sources ignore it. Safe to call from any goroutine.
func (m *Monitor) SetInView(targets []string) {
	if m.source.SetInView != nil && m.source.SetInView(targets) {
		m.Refresh()
	}
}

// Refresh asks the source for new readings at once; a report follows when
// they are in. Safe to call from any goroutine; never blocks.
func (m *Monitor) Refresh() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run collects and analyses until ctx is done or an output fails. The first
// report follows the first readings of every target; then one follows
// every interval and every refresh, or, for a source that sets the pace
// (Steps), every step.
func (m *Monitor) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait() // deferred first, so it runs after cancel
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { _ = m.source.Run(ctx) })
	wg.Go(func() { m.loadHistory(ctx) })

	// A source's steps are its only pace; otherwise the ticker and the
	// refreshes, the first one at once, are.
	interval := m.source.Interval()
	var ticker *time.Ticker
	var tick <-chan time.Time
	var kick chan struct{}
	var round <-chan struct{}
	if m.source.Steps == nil {
		ticker = time.NewTicker(interval)
		defer ticker.Stop()
		tick, kick, round = ticker.C, m.kick, m.source.Refresh()
	}
	var readings []catalogue.Readings
	var prev *analysis.Report
	for {
		var step Step
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
			round = m.source.Refresh()
			continue
		case step = <-m.source.Steps:
		case <-tick:
			step = m.source.step(readings)
		case <-round:
			round = nil
			step = m.source.step(readings)
			ticker.Reset(interval) // the round was a report; keep the rhythm from here
		}
		readings = step.Readings
		var err error
		if prev, err = m.report(step, prev); err != nil {
			return err
		}
	}
}

// report evaluates one step against the report before it (prev, or the
// step's own after a jump) and hands it to the outputs; it returns the
// report, the next one's prev.
func (m *Monitor) report(step Step, prev *analysis.Report) (*analysis.Report, error) {
	m.mu.Lock()
	cfg := m.cfg
	if step.Window > 0 && !m.windowSet {
		cfg.Window = step.Window
	}
	m.mu.Unlock()
	if step.Restart {
		prev = step.Prev
	}
	r := evaluate(m.source, step, cfg, prev)
	addGPUs(&r, prev, m.gpus)
	m.observe(step.Now, cfg, step.Readings, &r)
	return &r, m.output(r)
}

// evaluate is the report of step against prev, with the source's status.
func evaluate(source Source, step Step, cfg analysis.Config, prev *analysis.Report) analysis.Report {
	r := analysis.Analyze(step.Now, step.Readings, cfg, prev)
	r.SetSource(sourceStatus(source))
	return r
}

// Once reads every target, waits (wait, or cfg.Window when zero) while the
// source keeps reading, reads again and returns the report over everything
// in between: the --once mode. The wait ends early when no target has
// answered silentIntervals intervals in (waitWindow). The window is
// widened when needed so that the first reading is inside it. A source
// that already holds the window (SetWindow: a Prometheus server) is read
// once, without waiting. The error is ctx's.
func Once(ctx context.Context, source Source, cfg analysis.Config, wait time.Duration) (analysis.Report, error) {
	if source.HoldsWindow() {
		return onceFromStore(ctx, source, cfg)
	}
	if wait <= 0 {
		wait = cfg.Window
	}
	source.Keep(keepFor(max(wait, cfg.Window), source.Interval()) + source.Interval())
	defer runSource(ctx, source)()

	start := source.Now()
	if err := waitRound(ctx, source.Refresh()); err != nil {
		return analysis.Report{}, err
	}
	if err := waitWindow(ctx, source, wait); err != nil {
		return analysis.Report{}, err
	}
	if err := waitRound(ctx, source.Refresh()); err != nil {
		return analysis.Report{}, err
	}
	step := source.step(nil)
	var span time.Duration
	step.Now, span = readSpan(step.Readings, start, step.Now)
	cfg.Window = max(cfg.Window, span)
	return evaluate(source, step, cfg, nil), nil
}

// silentIntervals is how many intervals in which no target has answered
// end a one-off report's wait early: scrapes that all fail say nothing
// more over a window than over three intervals, and whoever checks a
// server that is down should not wait the window to read "connection
// refused".
const silentIntervals = 3

// waitWindow waits d after Once's first round, or only silentIntervals
// intervals when no target has answered by then.
func waitWindow(ctx context.Context, source Source, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(source.Interval())
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		case <-tick.C:
			if n >= silentIntervals && !anyAnswered(source.Readings(nil)) {
				return nil
			}
		}
	}
}

// anyAnswered reports whether some target has answered a scrape.
func anyAnswered(readings []catalogue.Readings) bool {
	for _, r := range readings {
		for i := range r.Samples {
			if r.Samples[i].Err == "" {
				return true
			}
		}
	}
	return false
}

// readSpan is the moment and the window of a one-off report: from the
// oldest reading to the newest, so that the window holds every reading and
// is no longer than the readings span. Measured from the clock instead, the
// window would also count the time the first and last scrapes took to
// answer, and a replica read for the whole window would fall short of the
// span a verdict of health needs (WARMING on a slow machine). Without a
// reading it is from start to now.
func readSpan(readings []catalogue.Readings, start, now time.Time) (time.Time, time.Duration) {
	var oldest, newest time.Time
	for _, r := range readings {
		if len(r.Samples) == 0 {
			continue
		}
		first, last := r.Samples[0].Time, r.Samples[len(r.Samples)-1].Time
		if oldest.IsZero() || first.Before(oldest) {
			oldest = first
		}
		if last.After(newest) {
			newest = last
		}
	}
	if newest.IsZero() {
		return now, now.Sub(start)
	}
	return newest, newest.Sub(oldest)
}

// onceFromStore is Once for a source that reads the whole window from a
// store at each refresh: one refresh is one full report.
func onceFromStore(ctx context.Context, source Source, cfg analysis.Config) (analysis.Report, error) {
	tellWindow(source, cfg.Window)
	defer runSource(ctx, source)()
	if err := waitRound(ctx, source.Refresh()); err != nil {
		return analysis.Report{}, err
	}
	return evaluate(source, source.step(nil), cfg, nil), nil
}

// runSource runs source until the returned stop is called, which waits
// for it to end.
func runSource(ctx context.Context, source Source) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = source.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// waitRound waits for a refresh or ctx.
func waitRound(ctx context.Context, round <-chan struct{}) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-round:
		return nil
	}
}
