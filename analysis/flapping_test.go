package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestSLOThresholdHysteresis: a replica enters SLOW above the SLO and
// leaves it only below a margin under it, so a p99 that wanders around the
// SLO does not flip the state. The window is one scrape interval and the
// state hysteresis is off, so each evaluation sees only that second's
// requests and the threshold alone decides.
func TestSLOThresholdHysteresis(t *testing.T) {
	// With vLLM's ITL buckets: every token at 120 ms gives p99 149.5 ms
	// (over the 100 ms SLO), at 90 ms p99 99.75 ms (under the SLO, above
	// the 90 ms exit), at 60 ms p99 74.75 ms (under the exit).
	itl := func(v float64) request { r := chat; r.itl = v; return r }
	hot, near, cool := itl(0.12), itl(0.09), itl(0.06)
	seconds := []struct {
		r    request
		want State
	}{
		{cool, StateHealthy}, {hot, StateSlow}, {near, StateSlow}, {hot, StateSlow}, {near, StateSlow}, {cool, StateHealthy}, {near, StateHealthy},
	}
	s := newServer()
	s.running, s.kv = 48, 0.3
	samples := []catalogue.Sample{s.scrape(t0)}
	cfg := DefaultConfig()
	cfg.Window, cfg.Hysteresis = time.Second, 1
	var prev *Report
	for i, sec := range seconds {
		s.finish(30, sec.r)
		now := t0.Add(time.Duration(i+1) * time.Second)
		samples = append(samples, s.scrape(now))
		rep := Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, cfg, prev)
		prev = &rep
		got := rep.Replicas[0]
		if got.State != sec.want {
			t.Errorf("second %d (p99 ITL %v): %v, want %v; reasons %q", i+1, got.ITL.P99, got.State, sec.want, got.Reasons)
		}
		// Held between the exit and the SLO, the reason must not say the
		// p99 is over the SLO.
		if held := got.State == StateSlow && got.ITL.P99 < 0.1; held &&
			!strings.Contains(strings.Join(got.Reasons, "\n"), "p99 ITL 99.8ms, not yet below 90ms (10% under the 100ms SLO)") {
			t.Errorf("second %d: held SLOW with reasons %q", i+1, got.Reasons)
		}
	}
}

// TestTooFewRequestsToJudge: no state from a p99 of fewer than
// cfg.MinObservations observations in the window (it is their maximum: one
// slow request sets it); the reason says so. A median over the SLO is
// another matter: a handful of requests shows that most are slow.
func TestTooFewRequestsToJudge(t *testing.T) {
	late := chat
	late.ttft = 2.4
	tests := []struct {
		name       string
		steps      []step
		scrapes    int
		want       State
		wantReason string
	}{
		// Seconds into the window: too little to call anything healthy,
		// and the one slow request is said.
		{"start: 5 requests, one slow", []step{finishing(4, chat), finishing(1, late)}, 2, StateWarming,
			"too few requests to judge p99 TTFT 1s–2.5s against the 1s SLO: 5 in the window, fewer than 20"},
		{"start: 15 requests, one in five slow", []step{finishing(4, chat), finishing(1, late)}, 4, StateWarming, "too few requests to judge"},
		// Past the least evidence, a handful of requests one of which
		// missed the SLO proves neither SLOW nor HEALTHY.
		{"low traffic, one of six slow", []step{func(s *server, i int) {
			switch {
			case i == 4:
				s.finish(1, late)
			case i%2 == 0:
				s.finish(1, chat)
			}
		}}, 13, StateUnjudged, "too few requests to judge p99 TTFT"},
		{"20 requests, one in five slow", []step{finishing(4, chat), finishing(1, late)}, 5, StateSlow, "p99 TTFT 1s–2.5s over the 1s SLO"},
		{"low traffic, every request slow", []step{func(s *server, i int) {
			if i%3 == 0 {
				s.finish(1, late)
			}
		}}, 31, StateSlow, "only 10 requests in the window, but their p50, 1s–2.5s, is over the SLO too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running, s.kv = 8, 0.1
			samples, now := run(s, tt.scrapes-1, time.Second, tt.steps...)
			targets := []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}
			before := Analyze(t0, targets, DefaultConfig(), nil)
			rep := Analyze(now, targets, DefaultConfig(), &before)
			r := rep.Replicas[0]
			for _, e := range rep.Events {
				if strings.HasPrefix(e.Text, "p99 TTFT") && tt.want != StateSlow {
					t.Errorf("no crossing event from too few requests: %q", e.Text)
				}
			}
			if r.State != tt.want {
				t.Errorf("state %v, want %v; reasons %q", r.State, tt.want, r.Reasons)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
		})
	}
}
