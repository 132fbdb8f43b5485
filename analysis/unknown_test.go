package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestHealthNeedsItsFigures: a verdict of health (HEALTHY or IDLE) rests
// on the gauges every state reads, running and waiting: where their
// values are n/a throughout the window (a page or a store whose values
// were all refused as NaN), no problem can be seen and none can be ruled
// out, and the replica is UNJUDGED, saying why; a replica whose gauges are
// known is judged as before.
func TestHealthNeedsItsFigures(t *testing.T) {
	nanCounters := func(s *server, _ int) {
		s.running, s.waiting, s.kv = math.NaN(), math.NaN(), math.NaN()
		s.prompt, s.gen, s.preemptions, s.httpRequests = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		for r := range s.finished {
			s.finished[r] = math.NaN()
		}
	}
	firstTokens := func(s *server, _ int) {
		b := &s.hist[catalogue.TTFT]
		counts := make([]float64, len(b.Counts))
		for j := range counts {
			counts[j] = b.Counts[j] + 2
		}
		b.Counts, b.Sum, b.Count = counts, b.Sum+0.2, b.Count+2
	}
	tests := []struct {
		name  string
		steps []step
		want  State
	}{
		{"every gauge and counter NaN while first tokens come", []step{nanCounters, firstTokens}, StateUnjudged},
		{"every gauge and counter NaN and nothing moving", []step{nanCounters}, StateUnjudged},
		{"gauges known, nothing moving", nil, StateIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			if len(tt.steps) > 0 {
				tt.steps[0](s, 0)
			}
			samples, now := run(s, 30, time.Second, tt.steps...)
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != tt.want {
				t.Fatalf("state %v, want %v (reasons %q)", r.State, tt.want, r.Reasons)
			}
			if tt.want == StateUnjudged && !strings.Contains(strings.Join(r.Reasons, "\n"), "running and waiting are n/a") {
				t.Errorf("reasons %q do not say the gauges are n/a", r.Reasons)
			}
		})
	}
}
