package scrape

import (
	"context"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// Monitor runs a Poller and the analysis loop beside it: every interval,
// and right after each ScrapeNow round, it snapshots the rings, calls
// analysis.Analyze on its own goroutine and hands the Report to deliver.
type Monitor struct {
	poller  *Poller
	deliver func(analysis.Report)
	kick    chan struct{}

	mu  sync.Mutex // guards cfg
	cfg analysis.Config
}

// NewMonitor prepares a monitor of targets. The rings hold the analysis
// window (or opts.History samples, if more), and SetWindow grows them.
// deliver is called from the monitor's goroutine, one Report at a time (the
// UI forwards it with Program.Send; --jsonl prints it).
func NewMonitor(targets []Target, opts Options, cfg analysis.Config, deliver func(analysis.Report)) (*Monitor, error) {
	p, err := NewPoller(targets, opts)
	if err != nil {
		return nil, err
	}
	m := &Monitor{poller: p, deliver: deliver, kick: make(chan struct{}, 1), cfg: cfg}
	p.EnsureHistory(historyFor(cfg.Window, p.Interval()))
	return m, nil
}

// historyFor is the ring capacity that covers a window: every sample in it
// plus one before it and one in flight.
func historyFor(window, interval time.Duration) int {
	return int(window/interval) + 2
}

// Poller returns the monitor's poller.
func (m *Monitor) Poller() *Poller { return m.poller }

// Window returns the analysis window in use.
func (m *Monitor) Window() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg.Window
}

// SetWindow changes the analysis window from the next report on, growing
// the rings when the new window needs more samples. Safe to call from any
// goroutine.
func (m *Monitor) SetWindow(d time.Duration) {
	if d <= 0 {
		return
	}
	m.poller.EnsureHistory(historyFor(d, m.poller.Interval()))
	m.mu.Lock()
	m.cfg.Window = d
	m.mu.Unlock()
}

// ScrapeNow scrapes every target at once; a report follows when all have
// answered (or timed out). Safe to call from any goroutine; never blocks.
func (m *Monitor) ScrapeNow() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Run scrapes and analyses until ctx is done. The first report follows the
// first scrape of every target.
func (m *Monitor) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { _ = m.poller.Run(ctx) })
	defer wg.Wait()

	interval := m.poller.Interval()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	round := m.poller.ScrapeNow()
	var inputs []analysis.TargetInput
	var prev *analysis.Report
	analyze := func() {
		m.mu.Lock()
		cfg := m.cfg
		m.mu.Unlock()
		inputs = m.poller.Snapshot(inputs)
		r := analysis.Analyze(m.poller.opts.Now(), inputs, cfg, prev)
		prev = &r
		m.deliver(r)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			analyze()
		case <-round:
			round = nil
			analyze()
			ticker.Reset(interval) // the round was a report; keep the rhythm from here
		case <-m.kick:
			round = m.poller.ScrapeNow()
		}
	}
}

// Once scrapes every target, waits (wait, or cfg.Window when zero) while
// scraping every interval, scrapes again and returns the report over
// everything in between: the --once mode. The window is widened when needed
// so that the first reading is inside it. The error is about the options
// or ctx.
func Once(ctx context.Context, targets []Target, opts Options, cfg analysis.Config, wait time.Duration) (analysis.Report, error) {
	if wait <= 0 {
		wait = cfg.Window
	}
	opts = opts.withDefaults()
	opts.History = max(opts.History, historyFor(wait, opts.Interval)+1)
	p, err := NewPoller(targets, opts)
	if err != nil {
		return analysis.Report{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Run(runCtx) })
	defer wg.Wait()
	defer cancel()

	start := opts.Now()
	if err := waitRound(ctx, p.ScrapeNow()); err != nil {
		return analysis.Report{}, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return analysis.Report{}, ctx.Err()
	case <-timer.C:
	}
	if err := waitRound(ctx, p.ScrapeNow()); err != nil {
		return analysis.Report{}, err
	}
	now := opts.Now()
	cfg.Window = max(cfg.Window, now.Sub(start))
	return analysis.Analyze(now, p.Snapshot(nil), cfg, nil), nil
}

// waitRound waits for a ScrapeNow round or ctx.
func waitRound(ctx context.Context, round <-chan struct{}) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-round:
		return nil
	}
}
