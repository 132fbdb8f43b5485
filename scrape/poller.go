package scrape

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
)

// Defaults of Options.
const (
	DefaultInterval       = time.Second
	DefaultMaxConcurrency = 64
	// DefaultKeep is how much a poller keeps until asked for more with
	// Keep: the default analysis window.
	DefaultKeep = 30 * time.Second
	// maxDefaultTimeout caps the timeout derived from a long interval: a
	// /metrics page that takes longer than this is a problem to show, not
	// to wait for.
	maxDefaultTimeout = 10 * time.Second
)

// Options configure a Poller.
type Options struct {
	// Interval between two scrapes of one target (default 1s).
	Interval time.Duration
	// Timeout of one scrape (default 80% of Interval, at most 10s). It is
	// kept below Interval so a slow target never stacks scrapes.
	Timeout time.Duration
	// History is the capacity of each target's window, in samples (at
	// least two: a rate needs two readings). The default covers
	// DefaultKeep at the interval; Keep grows it to the window a monitor
	// asks for. Raw samples further back would be most of vtop's memory,
	// and the screen keeps its own history of derived points.
	History int
	// MaxConcurrency bounds the scrapes in flight (default 64).
	MaxConcurrency int
	// Client configures TLS, auth, headers and the body cap.
	Client ClientOptions
	// Now stamps the samples and is the source's clock, Poller.Now, at
	// which reports are evaluated (default time.Now). Tests inject a clock
	// here; scheduling still uses real timers.
	Now func() time.Time
	// OnPage, when set, sees every scrape the poller keeps, just before
	// its sample enters the target's window: a recorder keeps the evidence
	// this way. It runs on the target's goroutine (so calls for different
	// targets are concurrent) and delays that target's sample while it
	// runs. Page.Body is only valid during the call.
	OnPage func(Page)
}

// Page is one scrape as fetched, handed to Options.OnPage.
type Page struct {
	// Target is the target scraped.
	Target Target
	// Time stamps the scrape, as it stamps the sample.
	Time time.Time
	// Body and ContentType are the response; Body is nil when the fetch
	// failed.
	Body        []byte
	ContentType string
	// Err is the sample's error: why the fetch or the parse failed; empty
	// on success.
	Err string
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 || o.Timeout >= o.Interval {
		o.Timeout = min(o.Interval*8/10, maxDefaultTimeout)
	}
	if o.History <= 0 {
		// The window's samples, plus the one before it and the one in flight.
		o.History = int(DefaultKeep/o.Interval) + 2
	}
	o.History = max(o.History, 2)
	if o.MaxConcurrency <= 0 {
		o.MaxConcurrency = DefaultMaxConcurrency
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// targetState is everything the poller keeps for one target.
type targetState struct {
	target   Target
	ingester *page.Ingester       // the target's cache of its pages (as Prometheus's scrape cache); used by the target's goroutine only
	pageSize int                  // of the last page read, same owner
	engine   catalogue.EngineKind // of the last page read, same owner: whether to keep the connection (KeepsAlive)
	kick     chan struct{}

	mu      sync.Mutex // guards samples and waiters
	samples *sampleWindow
	waiters []func()
}

// Poller scrapes every target on its own schedule into its own window. A
// slow or dead target only ever costs its own goroutine (and one
// concurrency slot for at most Timeout).
type Poller struct {
	opts    Options
	client  *Client
	targets []*targetState
	sem     chan struct{}
	buffers pageBuffers
}

// NewPoller prepares a poller; nothing is scraped until Run. Duplicate
// targets are scraped once. The error is about the client options (CA
// file, token file, headers).
func NewPoller(targets []Target, opts Options) (*Poller, error) {
	opts = opts.withDefaults()
	client, err := NewClient(opts.Client)
	if err != nil {
		return nil, err
	}
	p := &Poller{opts: opts, client: client, sem: make(chan struct{}, opts.MaxConcurrency)}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.URL] {
			continue
		}
		seen[t.URL] = true
		p.targets = append(p.targets, &targetState{
			target:   t,
			ingester: page.NewIngester(),
			kick:     make(chan struct{}, 1),
			samples:  newSampleWindow(opts.History),
		})
	}
	return p, nil
}

// Interval returns the scrape interval in use.
func (p *Poller) Interval() time.Duration { return p.opts.Interval }

// Keep grows every window to hold at least d of samples at the interval.
func (p *Poller) Keep(d time.Duration) {
	p.ensureHistory(int((d + p.opts.Interval - 1) / p.opts.Interval))
}

// Now returns the time of the poller's clock, which stamps its samples.
func (p *Poller) Now() time.Time { return p.opts.Now() }

// ensureHistory grows every window to hold at least n samples.
func (p *Poller) ensureHistory(n int) {
	for _, ts := range p.targets {
		ts.mu.Lock()
		ts.samples.Grow(n)
		ts.mu.Unlock()
	}
}

// Run scrapes until ctx is done, then returns nil.
func (p *Poller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, ts := range p.targets {
		wg.Go(func() { p.loop(ctx, ts) })
	}
	wg.Wait()
	// Keep-alive connections would outlive the poller by the transport's
	// idle timeout, each holding two goroutines.
	p.client.closeIdle()
	for _, ts := range p.targets {
		ts.mu.Lock()
		waiters := ts.waiters
		ts.waiters = nil
		ts.mu.Unlock()
		for _, w := range waiters {
			w()
		}
	}
	return nil
}

// loop is one target's schedule: scrape, then wait for the interval or a
// Refresh kick.
func (p *Poller) loop(ctx context.Context, ts *targetState) {
	timer := time.NewTimer(0)
	<-timer.C
	for {
		start := time.Now()
		p.scrape(ctx, ts)
		timer.Reset(max(p.opts.Interval-time.Since(start), 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-ts.kick:
			timer.Stop()
		}
	}
}

// scrape takes one sample of ts and pushes it into its window.
func (p *Poller) scrape(ctx context.Context, ts *targetState) {
	ts.mu.Lock()
	waiters := ts.waiters
	ts.waiters = nil
	ts.mu.Unlock()
	select { // this scrape serves any pending Refresh
	case <-ts.kick:
	default:
	}
	defer func() {
		for _, w := range waiters {
			w()
		}
	}()
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	buf := p.buffers.get(ts.pageSize)
	defer p.buffers.put(buf) // after OnPage: the body is in buf
	hold := p.client.hold()
	if ts.pageSize >= maxPooledBuffer {
		hold.expect = int64(ts.pageSize)
	}
	defer hold.release() // the body's room in the pages' budget, too
	s, body, contentType := p.take(ctx, ts, buf, hold)
	<-p.sem
	if ctx.Err() != nil && !s.OK() {
		return // shutting down: the failure is ours, not the target's
	}
	if p.opts.OnPage != nil {
		p.opts.OnPage(Page{Target: ts.target, Time: s.Time, Body: body, ContentType: contentType, Err: s.Err})
	}
	ts.mu.Lock()
	ts.samples.Push(s)
	ts.mu.Unlock()
}

// take fetches and ingests one page, read into *buf (which it may grow).
// It also returns the page (nil when the fetch failed), valid while buf
// is not reused.
func (p *Poller) take(ctx context.Context, ts *targetState, buf *[]byte, hold *pageHold) (catalogue.Sample, []byte, string) {
	now := p.opts.Now()
	keepAlive := KeepsAlive(ts.engine, p.opts.Interval)
	body, contentType, err := p.client.fetch(ctx, ts.target, p.opts.Timeout, *buf, hold, keepAlive)
	*buf = body
	if err == nil {
		ts.pageSize = len(body)
	}
	var s catalogue.Sample
	if err == nil {
		s, err = ts.ingester.Ingest(body, contentType)
		if err == nil {
			ts.engine = s.EngineKind
		}
	} else {
		body = nil
	}
	if err != nil {
		var se *Error
		problem, late := safetext.Sanitize(err.Error()), false // a page that echoes a secret
		if errors.As(err, &se) {
			problem, late = se.Problem, se.TimedOut
		}
		s = catalogue.Sample{Err: problem, TimedOut: late}
	}
	s.Time = now
	if err == nil {
		s.Waited = p.opts.Now().Sub(now)
	}
	return s, body, contentType
}

// Refresh makes every target scrape at once. The returned channel is
// closed when each target has finished a scrape that started after the
// call (or Run has ended). Before Run starts, the scrapes wait for it.
func (p *Poller) Refresh() <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(len(p.targets))
	for _, ts := range p.targets {
		ts.mu.Lock()
		ts.waiters = append(ts.waiters, wg.Done)
		ts.mu.Unlock()
		select {
		case ts.kick <- struct{}{}:
		default:
		}
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// Readings appends each target's samples, oldest first, to dst[:0].
// The samples are the poller's own, not a copy (they would be a second
// copy of every window): they stay as they are while the poller scrapes
// on, until the next call of Readings, which may move them. So a caller
// must be done with the previous result before it calls again, and must
// not modify the samples. Safe for concurrent use with Run.
func (p *Poller) Readings(dst []catalogue.Readings) []catalogue.Readings {
	n := len(p.targets)
	dst = slices.Grow(dst[:0], n)[:n]
	for i, ts := range p.targets {
		ts.mu.Lock()
		dst[i].Target = ts.target.Name
		dst[i].Samples = ts.samples.View()
		ts.mu.Unlock()
	}
	return dst
}
