package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// stallAt is a server that serves chat for stall seconds, then stops
// stepping: no token, no finished request, running frozen at 12, and the
// arrivals of every second (pile, possibly 0) join the queue.
func stallAt(stall int, pile float64) step {
	return func(s *server, i int) {
		if i <= stall {
			s.finish(1, chat)
			return
		}
		s.waiting += pile
	}
}

// withGC gives every sample a GC counter that rises by one a scrape: the
// API server's own process is alive and its exporter answers with fresh
// values.
func withGC(samples []catalogue.Sample) []catalogue.Sample {
	for i := range samples {
		samples[i].GCCollections = float64(i)
	}
	return samples
}

// notStalled in a test's want is any state but STALLED.
const notStalled = State(255)

// TestStalledEngine: work present while no token moves, with the page
// still alive (a gauge moves, the HTTP counter rises, or the process's own
// counters do), is an engine that stopped stepping: STALLED, with how long
// since the last token. A page on which nothing moves at all, gauges
// included, is frozen telemetry: STALE as before.
func TestStalledEngine(t *testing.T) {
	tests := []struct {
		name       string
		samples    func() ([]catalogue.Sample, time.Time)
		want       State
		wantReason string
	}{
		{"queue growing while no token moves", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 12
			return run(s, 30, time.Second, stallAt(20, 4))
		}, StateStalled, "no token generated for 10s (since 14:00:20) while running 12, waiting 40; the API server still answers"},
		{"a stall of 4s is not yet one", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 12
			return run(s, 30, time.Second, stallAt(26, 1))
		}, notStalled, ""},
		{"a stall of exactly the span is one", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 12
			return run(s, 30, time.Second, stallAt(25, 1))
		}, StateStalled, "no token generated for 5s (since 14:00:25)"},
		{"gauges frozen, the process's own counters alive", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 12
			samples, now := run(s, 30, time.Second, stallAt(20, 0))
			return withGC(samples), now
		}, StateStalled, "no token generated for 10s (since 14:00:20) while running 12, waiting 0"},
		{"gauges frozen, requests still answered by the API server", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 12
			return run(s, 30, time.Second, stallAt(20, 0), func(s *server, i int) {
				if i > 20 {
					s.httpRequests += 3 // refused or timed out at the API server
				}
			})
		}, StateStalled, "http_requests_total rose by 30"},
		{"nothing moves at all over the window: frozen telemetry", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.finish(100, chat)
			s.running = 12
			return run(s, 30, time.Second)
		}, StateStale, "running 12 but nothing on the page moved over 30s (31 scrapes), gauges included"},
		{"an idle engine whose API server answers other calls is not stalled", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.finish(100, chat)
			return run(s, 30, time.Second, func(s *server, _ int) { s.httpRequests += 2 })
		}, StateIdle, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			r := analyzeOne(samples, now, DefaultConfig())
			if tt.want == notStalled && r.State != StateStalled {
				return
			}
			if r.State != tt.want {
				t.Fatalf("state = %v, want %v; reasons %q", r.State, tt.want, r.Reasons)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
			if tt.want == StateStalled && !strings.Contains(r.Action, "restart it") {
				t.Errorf("action %q does not say to restart the engine", r.Action)
			}
			if tt.want == StateStalled && strings.Contains(r.Action, "PROMETHEUS_MULTIPROC_DIR") {
				t.Errorf("a stalled engine is sent to its exporter: %q", r.Action)
			}
		})
	}
}

// TestStalledSinceCarried: when no reading in hand shows the last token,
// the time of the last token is the previous report's, as DOWN carries
// the start of its outage; with no previous report, the oldest reading in
// hand bounds it.
func TestStalledSinceCarried(t *testing.T) {
	s := newServer()
	s.running = 12
	samples, now := run(s, 90, time.Second, stallAt(20, 2))
	cfg := DefaultConfig()
	var prev *Report
	for i := 25; i <= 90; i++ {
		// The samples in hand are the newest 30: a ring, as the monitor's.
		hand := samples[max(0, i-29) : i+1]
		r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "gpu-a:8000", Samples: hand}}, cfg, prev)
		prev = &r
	}
	r := prev.Replicas[0]
	if r.State != StateStalled || !r.LastToken.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("state %v, last token %v; want STALLED since 14:00:20; reasons %q", r.State, r.LastToken, r.Reasons)
	}
	if want := "no token generated for 1m10s (since 14:00:20)"; !strings.Contains(r.Reasons[0], want) {
		t.Errorf("reason %q lacks %q", r.Reasons[0], want)
	}
	alone := analyzeOne(samples[61:], now, cfg)
	if want := "no token generated for at least 29s (none in any reading since 14:01:01)"; alone.State != StateStalled || !strings.Contains(alone.Reasons[0], want) {
		t.Errorf("without a previous report: %v %q, want STALLED saying %q", alone.State, alone.Reasons, want)
	}
	// Watched from within the stall, the first reading bounds the last
	// token, and the bound is carried as the readings in hand move on.
	prev = nil
	for i := 60; i <= 90; i++ {
		r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples[max(31, i-29) : i+1]}}, cfg, prev)
		prev = &r
	}
	if want := "no token generated for at least 59s (none in any reading since 14:00:31)"; !strings.Contains(prev.Replicas[0].Reasons[0], want) {
		t.Errorf("watched from within the stall: %q, want %q", prev.Replicas[0].Reasons, want)
	}
}

// TestStalledWhenCountsAtEnd: an engine that counts only when requests end
// shows no token while long requests run; its stall needs most of the
// window, as STALE does.
func TestStalledWhenCountsAtEnd(t *testing.T) {
	for _, tt := range []struct {
		engine catalogue.EngineKind
		quiet  int
		want   bool
	}{
		{catalogue.EngineTGI, 10, false}, {catalogue.EngineTGI, 29, true},
		{catalogue.EngineLlamaCpp, 10, false}, {catalogue.EngineLlamaCpp, 29, true},
	} {
		s := newServer()
		s.running = 12
		samples, now := run(s, 60, time.Second, stallAt(60-tt.quiet, 2))
		samples = asEngine(samples, tt.engine)
		for i := range samples {
			if i > 60-tt.quiet {
				// asEngine counts on; a stalled engine's counters stand still.
				samples[i].Total.Scalars[catalogue.FinishedRequests] = samples[60-tt.quiet].Total.Scalars[catalogue.FinishedRequests]
			}
		}
		r := analyzeOne(samples, now, DefaultConfig())
		if got := r.State == StateStalled; got != tt.want {
			t.Errorf("%v with no token for %ds: %v, want stalled %v; reasons %q", tt.engine, tt.quiet, r.State, tt.want, r.Reasons)
		}
	}
}

// TestAdviceBesideAStall: a stalled replica's queue waits for its engine,
// not for capacity, so more replicas would not serve it: the advice does
// not add replicas for it, counts it among the replicas to keep, and says
// to restart it.
func TestAdviceBesideAStall(t *testing.T) {
	s := newServer()
	s.running = 12
	stalled, now := run(s, 30, time.Second, stallAt(15, 5))
	h := newServer()
	h.running = 30
	healthy, _ := run(h, 30, time.Second, finishing(5, chat))
	rep := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: stalled}, {Target: "gpu-b:8000", Samples: healthy}}, DefaultConfig(), nil)
	if rep.Replicas[0].State != StateStalled {
		t.Fatalf("gpu-a: %v, want STALLED; reasons %q", rep.Replicas[0].State, rep.Replicas[0].Reasons)
	}
	a := rep.Fleet.Advice
	if a.Action == "add" || a.RecommendedReplicas != 2 {
		t.Errorf("advice %q (%s, %v replicas), want to keep the 2", a.Recommendation, a.Action, a.RecommendedReplicas)
	}
	if want := "restart 1 replica STALLED"; !strings.Contains(a.Recommendation, want) {
		t.Errorf("advice %q lacks %q", a.Recommendation, want)
	}
	two := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: stalled}, {Target: "gpu-c:8000", Samples: stalled}, {Target: "gpu-b:8000", Samples: healthy}}, DefaultConfig(), nil).Fleet.Advice
	if want := "restart 2 replicas STALLED: their queues wait for their engines"; !strings.Contains(two.Recommendation, want) {
		t.Errorf("advice %q lacks %q", two.Recommendation, want)
	}
	alone := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: stalled}}, DefaultConfig(), nil).Fleet.Advice
	if alone.Action != "keep" || alone.RecommendedReplicas != 1 || !strings.Contains(alone.Recommendation, "restart") {
		t.Errorf("a fleet of one stalled replica: %q (%s, %v replicas), want to keep it and restart it", alone.Recommendation, alone.Action, alone.RecommendedReplicas)
	}
}

// TestTokensCountedAtTheEnd: an engine whose token counters move only
// when requests finish (SGLang) still observes each token's inter-token
// latency as it comes: while its histogram's count moves, the engine
// steps, however long nothing finishes.
func TestTokensCountedAtTheEnd(t *testing.T) {
	s := newServer()
	s.running = 12
	samples, now := run(s, 30, time.Second, stallAt(20, 1))
	for i := 21; i < len(samples); i++ {
		samples[i].Total.Histograms[catalogue.ITL].Count += float64(100 * (i - 20))
	}
	if r := analyzeOne(samples, now, DefaultConfig()); r.State == StateStalled {
		t.Errorf("tokens still timed as they come: %v, want not STALLED; reasons %q", r.State, r.Reasons)
	}
}
