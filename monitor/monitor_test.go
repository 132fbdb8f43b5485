package monitor

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/testutil"
)

// countingPoller polls one server whose prompt-token counter grows by 100
// on every scrape; hits counts the scrapes.
func countingPoller(t *testing.T, hits *atomic.Int64, interval time.Duration) (*scrape.Poller, scrape.Target) {
	t.Helper()
	url := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} " +
			strconv.FormatInt(100*n, 10) + "\nvllm:num_requests_running{model_name=\"m\"} 3\n"))
	})
	tg, err := scrape.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	p, err := scrape.NewPoller([]scrape.Target{tg}, scrape.Options{Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	return p, tg
}

func TestMonitorDeliversReportsAndFollowsWindow(t *testing.T) {
	var hits atomic.Int64
	p, tg := countingPoller(t, &hits, 50*time.Millisecond)
	reports := make(chan analysis.Report, 100)
	cfg := analysis.DefaultConfig()
	cfg.Window = time.Second
	m := New(Of(p), cfg, func(r analysis.Report) error { reports <- r; return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	first := receive(t, reports)
	if len(first.Replicas) != 1 || first.Replicas[0].Target != tg.Name || first.WindowSeconds != 1 {
		t.Errorf("first report: replicas %v window %v", first.Replicas, first.WindowSeconds)
	}
	if hits.Load() < 1 {
		t.Error("first report before the first scrape")
	}

	m.SetWindow(5 * time.Second)
	deadline := time.After(5 * time.Second)
	for r := range reports {
		if r.WindowSeconds == 5 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("no report with the new window")
		default:
		}
	}
	before := hits.Load()
	m.Refresh()
	receive(t, reports)
	if hits.Load() <= before {
		t.Error("Refresh did not scrape")
	}
}

func receive(t *testing.T, reports <-chan analysis.Report) analysis.Report {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no report within 5s")
		return analysis.Report{}
	}
}

// An output that fails stops the monitor with its error: a JSONL line that
// cannot be written must not be lost silently while vtop goes on.
func TestMonitorStopsWhenAnOutputFails(t *testing.T) {
	var hits atomic.Int64
	p, _ := countingPoller(t, &hits, 20*time.Millisecond)
	broken := errors.New("write /dev/full: no space left on device")
	calls := 0
	m := New(Of(p), analysis.DefaultConfig(), func(analysis.Report) error {
		calls++
		if calls == 3 {
			return broken
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Run(ctx); !errors.Is(err, broken) {
		t.Fatalf("Run = %v, want the output's error", err)
	}
	if ctx.Err() != nil {
		t.Error("Run returned only when its context ended, not when the output failed")
	}
	if calls != 3 {
		t.Errorf("%d reports handed out, want the monitor to stop at the failing third", calls)
	}
}

// Once scrapes at the start, every interval while waiting, and at the end,
// and reports over all of it.
func TestOnce(t *testing.T) {
	var hits atomic.Int64
	p, tg := countingPoller(t, &hits, 50*time.Millisecond)
	cfg := analysis.DefaultConfig()
	cfg.Window = 100 * time.Millisecond
	start := time.Now()
	r, err := Once(context.Background(), Of(p), cfg, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond {
		t.Errorf("Once returned after %v, before the 300ms wait", elapsed)
	}
	if n := hits.Load(); n < 4 {
		t.Errorf("%d scrapes; want the first, the last and the ones every 50ms between", n)
	}
	if len(r.Replicas) != 1 || r.Replicas[0].Target != tg.Name {
		t.Errorf("replicas %+v", r.Replicas)
	}
	if r.WindowSeconds < 0.3 {
		t.Errorf("window %vs does not reach back to the first scrape", r.WindowSeconds)
	}
	if s := r.Replicas[0].Samples; s < 4 {
		t.Errorf("the report saw %d samples; the source did not keep the wait", s)
	}
}

// A one-off report over targets none of which answers ends a few
// intervals after the first round, not after the whole wait: every failed
// scrape says the same. One target answering keeps the wait.
func TestOnceWhenNoTargetAnswers(t *testing.T) {
	const interval = 50 * time.Millisecond
	tests := []struct {
		name      string
		answering bool
		wait      time.Duration
		wantDown  int
		wantWait  bool // whether Once waits the whole wait
	}{
		{"no target answers: DOWN, early", false, time.Hour, 1, false},
		{"one target answers: the whole wait", true, 400 * time.Millisecond, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refused, err := scrape.ParseTarget(testutil.ClosedPort(t))
			if err != nil {
				t.Fatal(err)
			}
			targets := []scrape.Target{refused}
			if tt.answering {
				var hits atomic.Int64
				_, live := countingPoller(t, &hits, interval)
				targets = append(targets, live)
			}
			p, err := scrape.NewPoller(targets, scrape.Options{Interval: interval})
			if err != nil {
				t.Fatal(err)
			}
			// A wait of an hour that is not cut short fails on this bound.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			r, err := Once(ctx, Of(p), analysis.DefaultConfig(), tt.wait)
			if err != nil {
				t.Fatalf("Once: %v", err)
			}
			if waited := time.Since(start) >= tt.wait; waited != tt.wantWait {
				t.Errorf("waited the whole %v: %v, want %v", tt.wait, waited, tt.wantWait)
			}
			down := 0
			for _, rep := range r.Replicas {
				if rep.State == analysis.StateDown {
					down++
					if rep.Error == "" {
						t.Errorf("%s is DOWN without its error", rep.Target)
					}
				}
			}
			if down != tt.wantDown || len(r.Replicas) != len(targets) {
				t.Errorf("%d of %d replicas DOWN, want %d of %d", down, len(r.Replicas), tt.wantDown, len(targets))
			}
		})
	}
}

func TestOnceCanceled(t *testing.T) {
	var hits atomic.Int64
	p, _ := countingPoller(t, &hits, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Once(ctx, Of(p), analysis.DefaultConfig(), time.Minute)
	if err != context.DeadlineExceeded {
		t.Errorf("error %v, want the context's", err)
	}
}

// keepingSource records what the monitor asks it to keep.
type keepingSource struct {
	mu   sync.Mutex
	kept []time.Duration
}

func (s *keepingSource) Run(ctx context.Context) error                          { <-ctx.Done(); return nil }
func (s *keepingSource) Readings(dst []catalogue.Readings) []catalogue.Readings { return dst[:0] }
func (s *keepingSource) Interval() time.Duration                                { return time.Second }
func (s *keepingSource) Now() time.Time                                         { return time.Unix(1e9, 0) }
func (s *keepingSource) Refresh() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
func (s *keepingSource) Keep(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept = append(s.kept, d)
}

// The monitor asks its source to keep the window, plus the reading before
// it and the one in flight, and more when the window widens.
func TestMonitorKeepsTheWindow(t *testing.T) {
	src := &keepingSource{}
	m := New(Of(src), analysis.Config{Window: 30 * time.Second}, nil)
	m.SetWindow(5 * time.Minute)
	m.SetWindow(0) // ignored
	want := []time.Duration{32 * time.Second, 5*time.Minute + 2*time.Second}
	if len(src.kept) != len(want) || src.kept[0] != want[0] || src.kept[1] != want[1] {
		t.Errorf("kept %v, want %v", src.kept, want)
	}
	if m.Window() != 5*time.Minute {
		t.Errorf("Window = %v", m.Window())
	}
}

// A replica that takes its time to answer is still read for the whole
// window: the report's window runs from the first reading to the last, not
// from the first request to the last answer, so the span a verdict of health
// needs is there.
func TestOnceSlowAnswersDoNotShortenTheEvidence(t *testing.T) {
	url := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // inside the 160 ms timeout of a 200 ms interval
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n" +
			"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 0\n"))
	})
	tg, err := scrape.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	p, err := scrape.NewPoller([]scrape.Target{tg}, scrape.Options{Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := analysis.DefaultConfig()
	cfg.Window = 600 * time.Millisecond
	r, err := Once(context.Background(), Of(p), cfg, cfg.Window)
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Replicas[0]
	if rep.State == analysis.StateWarming {
		t.Errorf("read for a %.3fs window, the replica is %s: %q", r.WindowSeconds, rep.State, rep.Reasons)
	}
}

func TestReadSpan(t *testing.T) {
	at := func(ms int) catalogue.Sample {
		return catalogue.Sample{Time: time.Unix(100, 0).Add(time.Duration(ms) * time.Millisecond)}
	}
	start, now := time.Unix(99, 0), time.Unix(103, 0)
	tests := []struct {
		name     string
		readings []catalogue.Readings
		wantNow  time.Time
		wantSpan time.Duration
	}{
		{"one target: its first reading to its last", []catalogue.Readings{{Target: "a", Samples: []catalogue.Sample{at(10), at(1010), at(2010)}}},
			at(2010).Time, 2 * time.Second},
		{"several: the oldest of all to the newest of all", []catalogue.Readings{
			{Target: "a", Samples: []catalogue.Sample{at(10), at(2010)}},
			{Target: "b", Samples: []catalogue.Sample{at(5), at(2003)}},
			{Target: "c"}},
			at(2010).Time, 2005 * time.Millisecond},
		{"no reading: the clock's", []catalogue.Readings{{Target: "a"}}, now, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotNow, gotSpan := readSpan(tt.readings, start, now)
			if !gotNow.Equal(tt.wantNow) || gotSpan != tt.wantSpan {
				t.Errorf("readSpan = %v, %v; want %v, %v", gotNow, gotSpan, tt.wantNow, tt.wantSpan)
			}
		})
	}
}

// wantingSource records the targets it is told are wanted.
type wantingSource struct {
	keepingSource
	wanted [][]string
}

func (s *wantingSource) SetWanted(targets []string) { s.wanted = append(s.wanted, targets) }

// The monitor passes the targets wanted to a source that reads some in
// more detail, and asks for a refresh when there are some (the detail
// view opened); a source that does not is left alone.
func TestMonitorSetWanted(t *testing.T) {
	tests := []struct {
		name       string
		calls      [][]string
		wantKicked bool
	}{
		{"a detail opened", [][]string{{"gpu-a"}}, true},
		{"a detail closed", [][]string{nil}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &wantingSource{}
			m := New(Source{Feed: src, SetWanted: src.SetWanted}, analysis.Config{Window: 30 * time.Second}, nil)
			for _, c := range tt.calls {
				m.SetWanted(c)
			}
			if len(src.wanted) != len(tt.calls) || !slices.Equal(src.wanted[0], tt.calls[0]) {
				t.Errorf("told %v, want %v", src.wanted, tt.calls)
			}
			kicked := len(m.kick) == 1
			if kicked != tt.wantKicked {
				t.Errorf("refresh asked %v, want %v", kicked, tt.wantKicked)
			}
		})
	}
	m := New(Of(&keepingSource{}), analysis.Config{Window: 30 * time.Second}, nil)
	m.SetWanted([]string{"gpu-a"})
	if len(m.kick) != 0 {
		t.Error("a source that reads no target in more detail was asked to refresh")
	}
}

// viewingSource records the targets it is told are on screen, and
// says a read is called for when readNow.
type viewingSource struct {
	keepingSource
	inView  [][]string
	readNow bool
}

func (s *viewingSource) SetInView(targets []string) bool {
	s.inView = append(s.inView, targets)
	return s.readNow
}

// The monitor passes the targets on screen to a source that reads them
// in more detail, and asks for a refresh only when the source says the
// set calls for one; a source that does not read them is left alone.
func TestMonitorSetInView(t *testing.T) {
	for _, readNow := range []bool{true, false} {
		src := &viewingSource{readNow: readNow}
		m := New(Source{Feed: src, SetInView: src.SetInView}, analysis.Config{Window: 30 * time.Second}, nil)
		m.SetInView([]string{"gpu-a", "gpu-b"})
		if len(src.inView) != 1 || !slices.Equal(src.inView[0], []string{"gpu-a", "gpu-b"}) {
			t.Errorf("told %v, want [[gpu-a gpu-b]]", src.inView)
		}
		if kicked := len(m.kick) == 1; kicked != readNow {
			t.Errorf("source asking for a read %v: refresh asked %v", readNow, kicked)
		}
	}
	m := New(Of(&keepingSource{}), analysis.Config{Window: 30 * time.Second}, nil)
	m.SetInView([]string{"gpu-a"})
	if len(m.kick) != 0 {
		t.Error("a source that reads no target in more detail was asked to refresh")
	}
}

// The monitor's first report carries the first changes of the stream
// every output reads (the event log, a hook, the bell, the alerts): a
// target down when vtop starts is a change from none at once; one that
// answers is warming up, which is no change yet.
func TestFirstReportTellsATargetDownAtStart(t *testing.T) {
	refused, err := scrape.ParseTarget(testutil.ClosedPort(t))
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int64
	_, live := countingPoller(t, &hits, 50*time.Millisecond)
	p, err := scrape.NewPoller([]scrape.Target{refused, live}, scrape.Options{Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan analysis.Report, 100)
	m := New(Of(p), analysis.DefaultConfig(), func(r analysis.Report) error { reports <- r; return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// A report may come before the refused target's first scrape has
	// ended (nothing known of it yet, no change): the first report that
	// knows it carries its change.
	first := receive(t, reports)
	for len(first.Changes) == 0 && !knowsDown(first, refused.Name) {
		first = receive(t, reports)
	}
	if len(first.Changes) != 1 {
		t.Fatalf("first report's changes %+v, want the target down alone", first.Changes)
	}
	c := first.Changes[0]
	if c.Target != refused.Name || !c.First || c.To != analysis.StateDown || c.FromName() != "none" {
		t.Errorf("change %+v, want %s none → down", c, refused.Name)
	}
	if len(first.Events) != 1 || first.Events[0].Text != c.Text {
		t.Errorf("events %+v, want the change's", first.Events)
	}
}

// knowsDown reports whether r has judged target DOWN.
func knowsDown(r analysis.Report, target string) bool {
	for i := range r.Replicas {
		if r.Replicas[i].Target == target && r.Replicas[i].State == analysis.StateDown {
			return true
		}
	}
	return false
}

// A source that sets the pace (Steps) gets one report per step and no
// other: no first refresh, no ticker. Each report takes the step's time,
// readings and window (unless SetWindow chose one), and a step that
// restarts is judged against the report it carries, not the last one.
func TestMonitorReportsAtTheSourcesSteps(t *testing.T) {
	feed := &keepingSource{} // its interval is a second: a ticker would report
	steps := make(chan Step)
	reports := make(chan analysis.Report, 10)
	m := New(Source{Feed: feed, Steps: steps}, analysis.Config{Window: 30 * time.Second}, func(r analysis.Report) error {
		reports <- r
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	at := time.Unix(1e9, 0)
	readings := []catalogue.Readings{{Target: "a", Samples: []catalogue.Sample{{Time: at, Err: "refused"}}}}
	steps <- Step{Now: at, Readings: readings, Window: time.Minute}
	first := receive(t, reports)
	if !first.Time.Equal(at) || first.WindowSeconds != 60 || len(first.Replicas) != 1 || len(first.Changes) != 1 {
		t.Errorf("first report at %v over %vs, %d replicas, changes %+v; want the step's, with a DOWN from none",
			first.Time, first.WindowSeconds, len(first.Replicas), first.Changes)
	}
	select {
	case r := <-reports:
		t.Fatalf("a report at %v without a step", r.Time)
	case <-time.After(1500 * time.Millisecond):
	}
	m.SetWindow(2 * time.Minute)
	steps <- Step{Now: at.Add(time.Second), Readings: readings, Window: time.Minute}
	if r := receive(t, reports); r.WindowSeconds != 120 || len(r.Changes) != 0 {
		t.Errorf("second report over %vs with changes %+v; want SetWindow's 120s and no news", r.WindowSeconds, r.Changes)
	}
	steps <- Step{Now: at.Add(2 * time.Second), Readings: readings, Restart: true}
	if r := receive(t, reports); len(r.Changes) != 1 {
		t.Errorf("a restart without a report before: changes %+v, want the DOWN from none again", r.Changes)
	}
}
