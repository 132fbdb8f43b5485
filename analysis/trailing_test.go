package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestTrailingEvidence: FULL and SLOW read the newest readings, so that
// what the window remembers of a queue neither hides one that has formed
// nor keeps one that has gone.
func TestTrailingEvidence(t *testing.T) {
	waited := chat
	waited.ttft, waited.queue = 2.4, 1.9 // most of the TTFT spent queueing
	prefilled := chat
	prefilled.ttft, prefilled.prefill = 2.4, 1.9 // most of it prefill
	tests := []struct {
		name       string
		request    request
		waiting    func(i int) float64
		want       State
		wantReason string
		wantAction string
	}{
		{"a queue in each reading of the last 5s is FULL, whatever the window held before",
			chat, func(i int) float64 { return float64(max(0, i-24) * 5) }, StateFull, "waiting 5 → 30 over 5s, running 48 (the most seen)", "add replicas"},
		{"a queue in all but the first reading of the last 5s is not",
			chat, func(i int) float64 { return float64(max(0, i-25)) }, StateHealthy, "running 48, waiting 5", ""},
		{"a queue of ten or more in the two newest readings is FULL",
			chat, func(i int) float64 { return float64(max(0, i-28) * 12) }, StateFull, "waiting 0 → 24 over 5s", "add replicas"},
		{"a queue in one reading is not",
			chat, func(i int) float64 { return float64(max(0, i-29) * 12) }, StateHealthy, "running 48, waiting 12", ""},
		{"a slow TTFT from a queue that has gone is not SLOW, nor HEALTHY beside it: RECOVERING",
			waited, func(i int) float64 { return float64(max(0, 20-i) * 5) }, StateRecovering, "the backlog cleared at 14:00:20", "none to take"},
		{"a slow TTFT from prefill is SLOW with no queue",
			prefilled, func(int) float64 { return 0 }, StateSlow, "p99 TTFT 1s–2.5s over the 1s SLO", "prefill is slow for its length"},
		{"while a queue stands the slow TTFT is the queue's, though the split lags it",
			prefilled, func(i int) float64 { return float64(max(0, i-28)) }, StateSlow, "p99 TTFT 1s–2.5s over the 1s SLO",
			"a queue stands (running 48, waiting 2): requests wait for a batch slot; add replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running, s.kv = 48, 0.3
			samples, now := run(s, 30, time.Second, finishing(6, tt.request), func(s *server, i int) { s.waiting = tt.waiting(i) })
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != tt.want {
				t.Fatalf("state %v, want %v; reasons %q, action %q", r.State, tt.want, r.Reasons, r.Action)
			}
			if !strings.HasPrefix(r.Reasons[0], tt.wantReason) {
				t.Errorf("first reason %q, want it to start %q", r.Reasons[0], tt.wantReason)
			}
			if !strings.Contains(r.Action, tt.wantAction) {
				t.Errorf("action %q lacks %q", r.Action, tt.wantAction)
			}
		})
	}
}

// TestFullEndsWithItsQueue: a FULL replica stays FULL while either of its
// two newest readings holds a queue, shrinking or not, and its end is held
// for the hysteresis like any return to HEALTHY.
func TestFullEndsWithItsQueue(t *testing.T) {
	cfg := DefaultConfig()
	s := newServer()
	s.running, s.kv = 256, 0.5
	queue := []float64{40, 40, 40, 40, 30, 20, 10, 3, 0, 0, 0}
	samples, _ := run(s, len(queue)+20, time.Second, finishing(6, chat), func(s *server, i int) {
		s.waiting = 0
		if k := i - 20; k >= 0 && k < len(queue) {
			s.waiting = queue[k]
		}
	})
	var prev *Report
	var states []State
	for i := 19; i < len(samples); i++ {
		r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "a", Samples: samples[:i+1]}}, cfg, prev)
		prev = &r
		states = append(states, r.Replicas[0].State)
	}
	// From the reading before the queue: 40 once is not FULL, twice is,
	// at once; the queue shrinks and stays FULL; one reading with none is
	// still one of the two newest with a queue; two with none is the
	// candidate HEALTHY, held once.
	want := []State{StateHealthy, StateHealthy, StateFull, StateFull, StateFull, StateFull, StateFull, StateFull, StateFull, StateFull, StateFull, StateHealthy}
	if len(states) < len(want) || !sameStates(states[:len(want)], want) {
		t.Errorf("states %v, want %v", states, want)
	}
}

func sameStates(a, b []State) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
