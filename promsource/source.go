package promsource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/safetext"
)

// Defaults used when Config leaves a field at zero.
const (
	DefaultInterval  = 5 * time.Second
	DefaultWindow    = 30 * time.Second
	DefaultTimeout   = 10 * time.Second
	DefaultMaxSeries = 250_000
	DefaultMaxBody   = 512 << 20
	DefaultForget    = 5 * time.Minute
	DefaultMaxMemory = 256 << 20
)

// answerShare is the share of MaxMemory the decoded answers of one
// refresh may take, all its queries together, and the most one answer's
// body may be: the samples a refresh reads are held again in the window
// and the readings built from them, and the runtime's garbage doubles
// what is live between collections.
const answerShare = 4

// wholeAnswerShare is the share of MaxMemory one answer read whole by the
// query client may be: it holds some six times its size while decoding.
const wholeAnswerShare = 16

// answerBudget is the bytes one refresh's decoded answers may take.
func (c Config) answerBudget() int64 { return c.MaxMemory / answerShare }

// maxFailures caps the failed readings kept per replica in one run of
// failures (the first is always kept: it says since when).
const maxFailures = 64

// Config configures a Source.
type Config struct {
	// URL is the server's base URL, path prefix included
	// (http://prometheus:9090, https://mimir/prometheus).
	URL string
	// Selector narrows the series read: label matchers in braces such as
	// {namespace="prod",job="vllm"}. Empty reads every vLLM series.
	Selector string
	// GroupBy is the label whose values are the replicas. Empty means pod
	// where a series has it, else instance.
	GroupBy string
	// Interval is the time between refreshes (DefaultInterval).
	Interval time.Duration
	// Window is the analysis window at start (DefaultWindow); the monitor
	// changes it through SetWindow.
	Window time.Duration
	// Timeout bounds each query (DefaultTimeout).
	Timeout time.Duration
	// MaxSeries caps the series one refresh reads (DefaultMaxSeries): an
	// answer with more is refused with a message as soon as its first
	// series over the cap arrives.
	MaxSeries int
	// MaxBody caps one answer's size in bytes (DefaultMaxBody, and never
	// more than the answers' share of MaxMemory).
	MaxBody int64
	// Forget is how long a replica whose series stopped stays on screen
	// as DOWN before it is dropped (DefaultForget), counted from when
	// Prometheus last listed its target (its newest up).
	Forget time.Duration
	// Access is how the server is reached.
	Access Access
	// Now is the clock evaluations are taken at (time.Now).
	Now func() time.Time
	// GPUs adds one query per refresh for the DCGM series of the same
	// server, read with GPUs.
	GPUs bool
	// MaxMemory is vtop's memory bound (DefaultMaxMemory): the source's
	// answers may take a share of it (see answerShare).
	MaxMemory int64
	// IdentifyStore asks the server which program it is (Prometheus,
	// VictoriaMetrics, Grafana Mimir) before the first refresh, with one
	// request to its build information, for the status (store.go).
	IdentifyStore bool
	// BucketsAbove is the number of scrape targets above which the
	// server evaluates each replica's histogram buckets over the window
	// and the raw read leaves them out (DefaultBucketsAbove; negative:
	// never). See summary.go.
	BucketsAbove int
	// Histograms are the histograms whose buckets the server evaluates
	// then, for every replica (analysis.JudgedHistograms: those the states
	// read); the others' quantiles are read only for the replicas wanted
	// (SetWanted), from their raw buckets. Nil: every histogram vtop reads
	// quantiles of; a histogram it reads no quantiles of is passed over.
	Histograms []catalogue.Histogram
	// Rules are the settings this vtop's recording rules would be written
	// with (`vtop rules`; the window is the analysis window): where the
	// store evaluates vtop's rules of these settings, a refresh reads
	// what they recorded (recorded.go). Zero SLOs: the raw series always.
	Rules promql.RulesSettings
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	orDefault(&c.Interval, DefaultInterval)
	orDefault(&c.Window, DefaultWindow)
	orDefault(&c.Timeout, DefaultTimeout)
	orDefault(&c.Forget, DefaultForget)
	orDefault(&c.MaxSeries, DefaultMaxSeries)
	orDefault(&c.MaxMemory, DefaultMaxMemory)
	orDefault(&c.MaxBody, DefaultMaxBody)
	if c.BucketsAbove == 0 {
		c.BucketsAbove = DefaultBucketsAbove
	}
	if c.Histograms == nil {
		c.Histograms = summarised
	}
	// Only the histograms vtop reads quantiles of have buckets to ask for.
	c.Histograms = slices.DeleteFunc(slices.Clone(c.Histograms), func(h catalogue.Histogram) bool { return !slices.Contains(summarised, h) })
	c.MaxBody = min(c.MaxBody, c.answerBudget())
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// orDefault sets v to d where it is zero or less.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Source reads a fleet from a Prometheus server. It is a monitor.Feed that
// can do everything a monitor.Source names beyond it but set the pace:
// ReadingsAt, Status, History, SetWindow, SetWanted and SetInView.
type Source struct {
	cfg      Config
	api      v1.API
	client   api.Client   // for the URLs of the queries vtop streams itself
	httpc    *http.Client // through the same transport
	name     string       // the server as shown: URL without credentials
	q        queries
	group    grouper
	requests atomic.Int64

	kick chan struct{}

	mu       sync.Mutex // guards what follows
	window   time.Duration
	wanted   []string             // replicas whose raw buckets are read when the others' are not
	inView   []string             // replicas on screen, read raw beside the rules' rows (SetInView)
	leftView map[string]time.Time // replicas that left the screen, by when (rawNames)
	keep     time.Duration
	waiters  []chan struct{}
	ended    bool
	now      time.Time
	asked    time.Time // evaluation time of the first refresh, while it has not answered
	readings []catalogue.Readings
	status   catalogue.SourceStatus
	stats    Stats
	// storeNote is the warning the store's semantics call for (store.go);
	// rulesNote says why vtop's recording rules in the store are not read
	// (recorded.go), "" when none are loaded or they are read.
	storeNote, rulesNote string

	// Owned by the refresh loop:
	// noRulesAt is when the store last showed no vtop rules at all (or did
	// not answer in time): they are asked again only rulesRecheck later,
	// so that a store without them pays no extra round trip a refresh.
	noRulesAt time.Time
	beside    *rawBeside // the raw read of the replicas on screen and wanted (recorded.go)
	// identified is closed once the store's identification is over (nil
	// after): the first refresh waits for it, so that its report names
	// the store.
	identified chan struct{}
	replicas   map[string]*replica // by instance (grouper.key)
	// appliedAt and appliedWidth are the window of the newest good
	// refresh, which groups of instances are combined over.
	appliedAt    time.Time
	appliedWidth time.Duration
	dcgm         dcgmState // the GPUs under the fleet (gpus.go)
	raw          rawWindow
	whole        bool    // this refresh reads the whole window
	answers      *budget // what the decoded answers of the refresh in progress may still take
	// targets is how many scrape targets answered up at the newest good
	// refresh (-1 before the first): whether the buckets are left to the
	// server follows it.
	targets int
	// buckets are the store-evaluated buckets of the newest good refresh,
	// by scrape target (grouper.key); nil when the raw read had them.
	buckets map[string]*catalogue.WindowBuckets
}

// Stats are the costs of the source, for benchmarks and debugging.
type Stats struct {
	Refreshes int
	// Requests is the number of HTTP requests sent, history included.
	Requests    int64
	LastRefresh time.Duration // the wall time of the newest refresh
	// Series and Samples are what the newest refresh read: the whole
	// window, or what was new since the refresh before and the recheck's
	// part (a series in both is counted twice).
	Series, Samples int
	FullReads       int // refreshes that read the whole window
	// LastRequests is the number of HTTP requests sent while the newest
	// refresh ran (the store's identification, beside the first, included).
	LastRequests int
	// Bucketless is set when the newest refresh left the buckets to the
	// server, and BucketRows is how many rows (target × histogram ×
	// bound) its answers held.
	Bucketless bool
	BucketRows int
	Path       string // the path the newest refresh read: PathRules or PathRaw
}

// New checks the configuration and prepares a source; nothing is asked of
// the server until Run. Errors name the option at fault.
func New(cfg Config) (*Source, error) {
	cfg = cfg.withDefaults()
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q: want http(s)://host[:port][/prefix]", displayURL(cfg.URL))
	}
	matchers, err := parseSelector(cfg.Selector)
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: cfg, name: displayURL(cfg.URL), q: newQueries(matchers, cfg.Interval, grouper{by: cfg.GroupBy}, false),
		group: grouper{by: cfg.GroupBy}, kick: make(chan struct{}, 1), targets: -1,
		window: cfg.Window, replicas: map[string]*replica{}}
	rt, err := newTransport(u, cfg.Access, cfg.MaxBody, &s.requests)
	if err != nil {
		return nil, err
	}
	// The query client holds a whole answer and decodes it several times
	// over: its answers (counts, the GPUs, the history) get a smaller cap.
	whole, err := newTransport(u, cfg.Access, min(cfg.MaxBody, cfg.MaxMemory/wholeAnswerShare), &s.requests)
	if err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: whole})
	if err != nil {
		return nil, fmt.Errorf("URL: %w", err)
	}
	s.api, s.client, s.httpc = v1.NewAPI(client), client, &http.Client{Transport: rt}
	s.status.Name = "Prometheus " + s.name
	return s, nil
}

// Name is the server as shown: its URL without credentials.
func (s *Source) Name() string { return s.name }

// Interval is the time between two refreshes.
func (s *Source) Interval() time.Duration { return s.cfg.Interval }

// Now is the evaluation time of the newest readings: a report evaluated
// then reproduces PromQL at that instant.
func (s *Source) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

// nowLocked is Now with s.mu held. Before the first answer it is the
// first refresh's evaluation time once that is asked, which its answer
// will bear: were it the present, a slow answer would take the reports'
// time back.
func (s *Source) nowLocked() time.Time {
	switch {
	case !s.now.IsZero():
		return s.now
	case !s.asked.IsZero():
		return s.asked
	}
	return s.evaluationTime()
}

// Keep asks for at least d of readings; the source reads the window it is
// told (SetWindow) and widens it only when asked for more than the
// window plus the two intervals the monitor adds.
func (s *Source) Keep(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = max(s.keep, d)
}

// SetWindow sets the analysis window the raw samples are read over.
func (s *Source) SetWindow(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = d
}

// analysisWindow is the analysis window as the monitor set it: the
// window the store evaluates the buckets over.
func (s *Source) analysisWindow() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window
}

// SetWanted names the replicas whose raw buckets are read even when the
// server works out the fleet's (a detail view draws them: the
// prompt-length heatmap, each engine's quantiles), from the next refresh
// on; nil for none (monitor.Source.SetWanted).
func (s *Source) SetWanted(replicas []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wanted = slices.Clone(replicas)
}

// rangeWidth is the range of the raw query: the window, or what Keep asked
// beyond it (the --once mode widens its window).
func (s *Source) rangeWidth() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.window, s.keep-2*s.cfg.Interval)
}

// Readings appends every replica's samples, by name, to dst[:0]. The
// samples are shared, never modified: callers must not modify them.
func (s *Source) Readings(dst []catalogue.Readings) []catalogue.Readings {
	readings, _ := s.ReadingsAt(dst)
	return readings
}

// ReadingsAt is Readings with the evaluation time they belong to, under
// one lock (monitor.Source.ReadingsAt).
func (s *Source) ReadingsAt(dst []catalogue.Readings) ([]catalogue.Readings, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(dst[:0], s.readings...), s.nowLocked()
}

// Status is the server's own health: the header's source line.
func (s *Source) Status() catalogue.SourceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Warnings = slices.Clone(st.Warnings)
	for _, note := range []string{s.storeNote, s.rulesNote, overrunNote(st, s.cfg.Interval)} {
		if note != "" {
			st.Warnings = append(st.Warnings, note)
		}
	}
	if st.Checked.IsZero() && !s.asked.IsZero() {
		st.Problem = fmt.Sprintf("no answer yet: the first refresh was asked %s ago",
			s.cfg.Now().Sub(s.asked).Round(time.Second))
		st.Since = s.asked
	}
	return st
}

// Stats returns the costs so far.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = s.requests.Load()
	return st
}

// Refresh asks for a refresh at once; the channel is closed when it is in
// (or Run has ended).
func (s *Source) Refresh() <-chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.ended {
		close(ch)
	} else {
		s.waiters = append(s.waiters, ch)
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return ch
}

// Run refreshes at once and then every interval (or on Refresh) until ctx
// is done. Failures of the server are readings, not errors: Run returns
// nil.
func (s *Source) Run(ctx context.Context) error {
	defer s.end()
	if s.cfg.IdentifyStore {
		// Asked beside the first refresh, not before it: which program
		// answers is for the source line, and must not hold the first
		// screen back by a round trip to a slow server.
		var wg sync.WaitGroup
		defer wg.Wait()
		identified := make(chan struct{})
		s.identified = identified
		wg.Go(func() { defer close(identified); s.learnStore(ctx) })
	}
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	for first := true; ; first = false {
		s.mu.Lock()
		waiters := s.waiters
		s.waiters = nil
		s.mu.Unlock()
		s.refresh(ctx)
		if first {
			// Asked while the first refresh ran: nothing was read before
			// it, so it is the news they wait for. Read again, a server
			// that does not answer made --once wait twice what its
			// problem says.
			// Their kick is taken first: one that comes after it comes
			// with a waiter left for the next refresh.
			select {
			case <-s.kick:
			default:
			}
			s.mu.Lock()
			waiters = append(waiters, s.waiters...)
			s.waiters = nil
			s.mu.Unlock()
		}
		for _, ch := range waiters {
			close(ch)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-s.kick:
		}
	}
}

// end releases every waiter: Run is over.
func (s *Source) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for _, ch := range s.waiters {
		close(ch)
	}
	s.waiters = nil
}

// refresh reads the window at one evaluation time and publishes the
// replicas' readings.
func (s *Source) refresh(ctx context.Context) {
	start := time.Now()
	sent := s.requests.Load()
	width := s.rangeWidth()
	at := s.raw.avoidEdge(s.evaluationTime(), width)
	s.mu.Lock()
	if s.status.Checked.IsZero() && s.asked.IsZero() {
		s.asked = at
	}
	s.mu.Unlock()
	if s.refreshRecorded(ctx, start, sent) {
		return
	}
	pre := s.countTargets(ctx, at, width)
	s.setBucketless()
	rawRange, full := s.raw.rangeFor(at, width)
	s.whole = full
	recheck := ""
	if !full {
		recheck = s.q.raw(s.q.parts[s.raw.nextRecheck(len(s.q.parts))], width)
	}
	var f fetched
	var err error
	if pre != nil && pre.err != nil && httperr.IsNoAnswer(problemOf(pre.err)) {
		// A server that did not answer the read ahead fails the refresh
		// with it: the raw read and the GPUs' would only wait as long
		// again (--once waited 60 s saying "no answer within 30s").
		err = pre.err
	} else {
		gpusIn := s.startGPUs(ctx, at)
		f, err = s.fetch(ctx, at, width, rawRange, full, recheck, pre)
		gpusIn()
	}
	if s.identified != nil {
		select {
		case <-s.identified:
		case <-ctx.Done():
		}
		s.identified = nil
	}
	if ctx.Err() != nil || err != nil {
		s.raw.reset()         // an increment may have been cut short: read whole next time
		if ctx.Err() == nil { // stopping, a canceled query is no news
			s.publish(start, sent, at, err, nil, nil, Stats{})
		}
		return
	}
	s.targets = len(f.up)
	s.raw.merge(f.raw, at, width, full)
	f.raw, f.added = s.raw.matrix()
	f.raw, f.added = withWanted(f.raw, f.added, f.wanted)
	s.apply(at, width, f)
	st := Stats{Series: f.series, Samples: f.samples, Bucketless: s.q.bucketless, BucketRows: len(f.buckets), Path: PathRaw}
	if full {
		st.FullReads = 1
	}
	s.publish(start, sent, at, nil, s.snapshot(), f.warnings, st)
}

// publish ends a refresh that began at start, when sent requests had
// been sent, evaluated at at: it failed with err, or read readings and
// warnings by st.Path, at the cost st says (its Series, Samples,
// Bucketless, BucketRows, and FullReads to add). A failure is the
// server's, not the replicas': they keep their last readings at the time
// they were read, so that their last verdicts stand (marked stale by the
// monitor from the status) instead of turning DOWN with its problem.
func (s *Source) publish(start time.Time, sent int64, at time.Time, err error, readings []catalogue.Readings, warnings []string, st Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Refreshes++
	s.stats.LastRefresh = time.Since(start)
	s.stats.LastRequests = int(s.requests.Load() - sent)
	s.status.RefreshSeconds, s.status.Queries = s.stats.LastRefresh.Seconds(), s.stats.LastRequests
	if err != nil {
		if s.status.Problem == "" {
			s.status.Since = at
		}
		s.status.Problem, s.status.Checked = problemOf(err), at
		return
	}
	s.now, s.readings = at, readings
	s.status.Problem, s.status.Since, s.status.LastGood, s.status.Checked = "", time.Time{}, at, at
	s.status.Warnings, s.status.Path, s.stats.Path = warnings, st.Path, st.Path
	s.stats.Series, s.stats.Samples, s.stats.Bucketless, s.stats.BucketRows = st.Series, st.Samples, st.Bucketless, st.BucketRows
	s.stats.FullReads += st.FullReads
}

// settle is how far in the past the source evaluates. Prometheus stamps
// a sample with the start of its scrape but answers it only once the
// scrape is in: a query at the very present can miss a scrape in flight
// that the same query a moment later would see. Evaluating a little in
// the past lets scrapes shorter than this land first, so that the
// figures are what PromQL gives at that instant whenever it is asked.
const settle = time.Second

// evaluationTime is the time of a refresh or of the history's newest
// point: settle ago, to Prometheus's resolution of a millisecond.
func (s *Source) evaluationTime() time.Time {
	return s.cfg.Now().Add(-settle).Truncate(time.Millisecond)
}

// sourceError is a failure of the server as a whole.
type sourceError struct {
	source, problem string
}

func (e *sourceError) Error() string { return "Prometheus " + e.source + ": " + e.problem }

// fail wraps a problem of the server.
func (s *Source) fail(problem string) error {
	return &sourceError{source: s.name, problem: problem}
}

// IsServerError reports whether err is the server's problem, as the
// source words one (a query it failed, no answer, an answer past a
// bound), rather than vtop's own failure or the caller's.
func IsServerError(err error) bool {
	var se *sourceError
	return errors.As(err, &se)
}

// problemOf is the problem of a failed refresh without the server's name,
// which the status names apart: said together, the header read
// "Prometheus http://…: Prometheus http://…: connection refused".
func problemOf(err error) string {
	var se *sourceError
	if errors.As(err, &se) {
		return safetext.Sanitize(se.problem)
	}
	return safetext.Sanitize(err.Error())
}
