package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// refusing makes the page send values of every gauge and work counter
// that a parser refuses (NaN): n/a, and marked refused.
func refusing(s *server, i int) {
	unexported(s, i)
	for _, k := range []catalogue.Scalar{catalogue.Running, catalogue.Waiting, catalogue.KVCacheUsage,
		catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.Preemptions, catalogue.FinishedRequests} {
		s.refused.Add(catalogue.ScalarFigure(k))
	}
}

// refusingCounters refuses the work counters only: the gauges are read.
func refusingCounters(s *server, _ int) {
	s.prompt, s.gen = math.NaN(), math.NaN()
	for r := range s.finished {
		s.finished[r] = math.NaN()
	}
	s.refused = 0
	for _, k := range []catalogue.Scalar{catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.FinishedRequests} {
		s.refused.Add(catalogue.ScalarFigure(k))
	}
}

// unexported drops every gauge and counter from the page, as pages that
// export only some families do (a trimmed vLLM page, TensorRT-LLM through
// Dynamo): n/a, not refused.
func unexported(s *server, _ int) {
	s.running, s.waiting, s.kv = math.NaN(), math.NaN(), math.NaN()
	s.prompt, s.gen, s.preemptions, s.httpRequests = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	for r := range s.finished {
		s.finished[r] = math.NaN()
	}
	s.refused = 0
}

// firstTokens counts 2 first tokens a second in the TTFT histogram.
func firstTokens(s *server, _ int) {
	b := &s.hist[catalogue.TTFT]
	counts := make([]float64, len(b.Counts))
	for j := range counts {
		counts[j] = b.Counts[j] + 2
	}
	b.Counts, b.Sum, b.Count = counts, b.Sum+0.2, b.Count+2
}

// TestHealthNeedsItsFiguresKnown: a verdict of health (HEALTHY or IDLE)
// claims that nothing is wrong, or that no work was done; where the page
// sent the figures those claims rest on (running, waiting, the work
// counters) and every value of them in the window was refused (NaN, past
// 2^53), a refused value is no zero and the replica is UNJUDGED, saying
// which figures were refused and what work the page did show. A figure the
// page does not export at all is a limit of the page, judged as before;
// so is a refusal in one reading of a figure the others know.
func TestHealthNeedsItsFiguresKnown(t *testing.T) {
	refusedOnce := func(s *server, i int) {
		if i == 15 {
			refusing(s, i)
			return
		}
		*s = *newServer()
	}
	tests := []struct {
		name  string
		first step // applied before the first scrape too
		steps []step
		want  State
		says  []string // in the reasons
	}{
		{"every gauge and counter refused while first tokens come", refusing, []step{refusing, firstTokens}, StateUnjudged,
			[]string{"running, waiting, prompt tokens, generation tokens, finished requests refused", "the TTFT histogram counted 2 req/s meanwhile"}},
		{"every gauge and counter refused and nothing moving", refusing, []step{refusing}, StateUnjudged,
			[]string{"running, waiting, prompt tokens, generation tokens, finished requests refused"}},
		{"the work counters refused, the gauges read, first tokens coming", refusingCounters, []step{refusingCounters, firstTokens}, StateUnjudged,
			[]string{"prompt tokens, generation tokens, finished requests refused"}},
		{"the gauges and counters not exported, nothing moving", unexported, []step{unexported}, StateIdle, nil},
		{"the gauges and counters not exported, first tokens coming", unexported, []step{unexported, firstTokens}, StateHealthy, nil},
		{"every gauge and counter refused in one reading, read in the others", nil, []step{refusedOnce}, StateIdle, nil},
		{"gauges and counters read, nothing moving", nil, nil, StateIdle, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			if tt.first != nil {
				tt.first(s, 0)
			}
			samples, now := run(s, 30, time.Second, tt.steps...)
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != tt.want {
				t.Fatalf("state %v, want %v (reasons %q)", r.State, tt.want, r.Reasons)
			}
			reasons := strings.Join(r.Reasons, "\n")
			for _, w := range tt.says {
				if !strings.Contains(reasons, w) {
					t.Errorf("reasons %q do not say %q", r.Reasons, w)
				}
			}
		})
	}
}
