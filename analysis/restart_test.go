package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// restartAt restarts the server at scrape i: every counter from zero, as
// vLLM starts, and a new process start time.
func restartAt(at int) step {
	return func(s *server, i int) {
		if i == at {
			fresh := newServer()
			fresh.running, fresh.kv, fresh.startTime = s.running, s.kv, s.startTime+900
			*s = *fresh
		}
	}
}

// TestRestartIsVisible: while a restart is in the window the replica says
// so (flag, time, reason), the fleet counts it, and an event marks it once.
// Rates keep Prometheus's reset rule; only the words are new.
func TestRestartIsVisible(t *testing.T) {
	tests := []struct {
		name       string
		steps      []step
		at         time.Duration // after t0; 0 for no restart in the window
		wantReason string
	}{
		{"new process start time", []step{finishing(6, chat), restartAt(15)}, 15 * time.Second,
			"window holds a restart at 14:00:15 (process_start_time_seconds changed)"},
		{"a counter going down", []step{finishing(6, chat), func(s *server, i int) {
			if i == 10 {
				s.finished[catalogue.FinishStop] = 0
			}
		}}, 10 * time.Second, "window holds a restart at 14:00:10 (a counter went down)"},
		{"no restart", []step{finishing(6, chat)}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running, s.kv = 48, 0.3
			s.finish(10_000, chat)
			samples, now := run(s, 30, time.Second, tt.steps...)
			calm, _ := run(newServer(), 30, time.Second, finishing(6, chat))
			targets := []catalogue.Readings{{Target: "a", Samples: samples}, {Target: "b", Samples: calm}}
			before := Analyze(now.Add(-25*time.Second), targets, DefaultConfig(), nil)
			rep := Analyze(now, targets, DefaultConfig(), &before)
			r := rep.Replicas[0]
			reasons := strings.Join(r.Reasons, "\n")
			if tt.at == 0 {
				if r.Restarted || !r.RestartedAt.IsZero() || strings.Contains(reasons, "restart") || rep.Fleet.Restarted != 0 {
					t.Errorf("no restart: flag %v at %v, fleet %d, reasons %q", r.Restarted, r.RestartedAt, rep.Fleet.Restarted, r.Reasons)
				}
				return
			}
			if !r.Restarted || !r.RestartedAt.Equal(t0.Add(tt.at)) {
				t.Errorf("restarted %v at %v, want at %v", r.Restarted, r.RestartedAt, t0.Add(tt.at))
			}
			if !strings.Contains(reasons, tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
			if rep.Fleet.Restarted != 1 {
				t.Errorf("fleet restarted = %d, want 1", rep.Fleet.Restarted)
			}
			var restartEvents int
			for _, e := range rep.Events {
				if e.Target == "a" && strings.Contains(e.Text, "restarted at "+t0.Add(tt.at).Format("15:04:05")) {
					restartEvents++
				}
			}
			if restartEvents != 1 {
				t.Errorf("one restart event, got %v", rep.Events)
			}
			again := Analyze(now, targets, DefaultConfig(), &rep)
			for _, e := range again.Events {
				if strings.Contains(e.Text, "restarted") {
					t.Errorf("the restart is an event once: %q", e.Text)
				}
			}
		})
	}
}
