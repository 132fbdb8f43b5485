package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// preemptedOnce adds one preemption at the i-th interval.
func preemptedOnce(at int) step {
	return func(s *server, i int) {
		if i == at {
			s.preemptions++
		}
	}
}

// TestPreemptionCost: a replica is PREEMPTING when preemption costs
// something material over the window — its recomputed tokens against the
// tokens generated, or the share of finished requests it preempted — and a
// rare preemption is a reason on the state the replica is in, with its
// price, not a state of its own.
func TestPreemptionCost(t *testing.T) {
	// longOutput is a request whose preemption recomputes little against
	// what it generates: a short prompt, a long answer.
	longOutput := chat
	longOutput.prompt, longOutput.gen = 50, 2000
	tests := []struct {
		name    string
		samples func() ([]catalogue.Sample, time.Time)
		state   State
		reasons []string // each must be in a reason
		action  string   // in the action, when set
	}{
		{
			// 6 chat requests/s generate 1,800 tokens/s; one preemption
			// recomputes about 650 (the prompt and half the output): 1.2 %
			// of the tokens generated over 30 s, 1 request in 180.
			name: "one preemption in half a minute at a healthy load",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.kv = 48, 0.9
				return run(s, 30, time.Second, finishing(6, chat), preemptedOnce(25))
			},
			state:   StateHealthy,
			reasons: []string{"1 preemption over 30s (0.03/s, recomputing 1.2% of generated tokens, 0.6% of requests): not material"},
		},
		{
			name: "one preemption in half a minute at a full batch stays FULL",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.waiting, s.kv = 256, 40, 0.97
				return run(s, 30, time.Second, finishing(7.7, chat), preemptedOnce(25))
			},
			state:   StateFull,
			reasons: []string{"1 preemption over 30s", "not material"},
		},
		{
			// 2 preemptions/s recompute 1,300 tokens/s against 1,800
			// generated: 72 %.
			name: "preemption recomputing most of what is generated",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.kv = 200, 0.99
				return run(s, 30, time.Second, finishing(6, chat), preempting(2))
			},
			state:   StatePreempting,
			reasons: []string{"recomputing 72% of generated tokens"},
			action:  "cap max_num_seqs at",
		},
		{
			// Short prompts, long answers: 0.4 preemptions/s of 5
			// requests/s recompute 420 tokens/s against 10,000 generated
			// (4 %), but preempt 8 % of the requests.
			name: "a material share of requests preempted, few tokens recomputed",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.kv = 200, 0.99
				return run(s, 30, time.Second, finishing(5, longOutput), preempting(0.4))
			},
			state:   StatePreempting,
			reasons: []string{"8% of requests"},
			action:  "cap max_num_seqs at",
		},
		{
			// The estimate says 65 tokens/s (4 %); the page counts 400
			// tokens/s recomputed (22 %): the count wins.
			name: "the recomputed tokens the page counts, over the estimate",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.kv = 48, 0.95
				samples, now := run(s, 30, time.Second, finishing(6, chat), preempting(0.1))
				return setEach(samples, func(i int, tot *catalogue.Series) {
					tot.Scalars[catalogue.PromptTokensRecomputed] = 400 * float64(i)
				}), now
			},
			state:   StatePreempting,
			reasons: []string{"recomputing 22% of generated tokens"},
		},
		{
			// No token counter and no finished counter: the cost cannot be
			// priced, and a preemption in the trailing span is then judged
			// as it was before it could be.
			name: "a preemption whose cost cannot be priced",
			samples: func() ([]catalogue.Sample, time.Time) {
				s := newServer()
				s.running, s.kv = 48, 0.95
				samples, now := run(s, 30, time.Second, finishing(6, chat), preemptedOnce(25))
				return setEach(samples, func(_ int, tot *catalogue.Series) {
					tot.Scalars[catalogue.GenerationTokens] = math.NaN()
					for r := range tot.Finished {
						tot.Finished[r] = math.NaN()
					}
				}), now
			},
			state:   StatePreempting,
			reasons: []string{"cost cannot be priced"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != tt.state {
				t.Errorf("state %v, want %v; reasons %q", r.State, tt.state, r.Reasons)
			}
			for _, want := range tt.reasons {
				if !hasReason(r, want) {
					t.Errorf("reasons %q lack %q", r.Reasons, want)
				}
			}
			if tt.action != "" && !strings.Contains(r.Action, tt.action) {
				t.Errorf("action %q lacks %q", r.Action, tt.action)
			}
			if r.State != StatePreempting && strings.Contains(r.Action, "max_num_seqs at") {
				t.Errorf("a rare preemption's state asks to cap max_num_seqs: %q", r.Action)
			}
		})
	}
}

// TestUrgentMovesHeld: FULL and PREEMPTING are proof, shown at once when
// they end a state that asks nothing; a move from one urgent state (FULL,
// PREEMPTING, SLOW) to another is a judgement between problems and holds
// for the hysteresis like any other.
func TestUrgentMovesHeld(t *testing.T) {
	f := naFigures()
	tests := []struct {
		prev, candidate State
		pendingBefore   int // the candidate's count in the previous evaluation
		shown           State
		pendingCount    int
	}{
		{StateHealthy, StateFull, 0, StateFull, 0},
		{StateHealthy, StatePreempting, 0, StatePreempting, 0},
		{StateIdle, StateFull, 0, StateFull, 0},
		{StateFull, StatePreempting, 0, StateFull, 1},
		{StateFull, StatePreempting, 1, StatePreempting, 0},
		{StatePreempting, StateFull, 0, StatePreempting, 1},
		{StatePreempting, StateFull, 1, StateFull, 0},
		{StateSlow, StateFull, 0, StateSlow, 1},
		{StateSlow, StatePreempting, 0, StateSlow, 1},
		{StateFull, StateSlow, 0, StateFull, 1},
		{StatePreempting, StateSlow, 1, StateSlow, 0},
	}
	for _, tt := range tests {
		prev := &ReplicaReport{State: tt.prev, Samples: 30, Action: "the old action"}
		if tt.pendingBefore > 0 {
			prev.Pending, prev.PendingCount = tt.candidate, tt.pendingBefore
		}
		shown, pending, count := hysteresis(verdict{State: tt.candidate, Reasons: []string{"why"}}, prev, 2, &f)
		if shown.State != tt.shown || count != tt.pendingCount || pending != tt.candidate {
			t.Errorf("%v → %v (pending %d before): shown %v, pending %v×%d; want %v, pending %v×%d",
				tt.prev, tt.candidate, tt.pendingBefore, shown.State, pending, count, tt.shown, tt.candidate, tt.pendingCount)
		}
	}
}
