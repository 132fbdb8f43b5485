package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// blinkingQueue sets waiting to n on odd scrapes and 0 on even ones: a
// queue that does not persist, so the replica is not FULL whatever its
// TTFT.
func blinkingQueue(n float64) step {
	return func(s *server, i int) { s.waiting = float64(i%2) * n }
}

// TestSlowCauseFollowsEvidence: the cause a SLOW replica is given follows
// its histograms. TTFT is split by the means of the queue and prefill
// histograms (exact, from _sum and _count); ITL is told apart by whether the
// median token is within the SLO (spikes: prefill interference) or not
// (every decode step is slow at this batch size).
func TestSlowCauseFollowsEvidence(t *testing.T) {
	waited := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 23.5, itl: 0.027, e2e: 31, queue: 23.3, prefill: 0.2, decode: 8}
	longPrompt := request{reason: catalogue.FinishStop, prompt: 6000, gen: 300, ttft: 2.4, itl: 0.027, e2e: 10, queue: 0.05, prefill: 2.3, decode: 8}
	neither := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 2.4, itl: 0.027, e2e: 10, queue: 0.2, prefill: 0.3, decode: 8}
	spiky := chat
	spiky.itl = 0.3
	slowStep := chat
	slowStep.itl = 0.12
	tests := []struct {
		name       string
		running    float64
		steps      []step
		noPhases   bool
		wantReason string
		wantAction string
		notAction  []string
	}{
		{"queue time dominates TTFT: waiting for a slot", 254, []step{finishing(10, waited), blinkingQueue(28)},
			false, "mean TTFT 23.5s: queue 23.3s (99%), prefill 200ms (0.9%)",
			"requests wait for a batch slot", []string{"without a queue", "prefix caching", "prefill time"}},
		{"prefill dominates TTFT: long prompts", 8, []step{finishing(1, longPrompt)},
			false, "mean TTFT 2.4s: queue 50ms (2.1%), prefill 2.3s (96%)",
			"long prompts (mean 6,000 tokens)", []string{"wait for a batch slot"}},
		{"neither phase dominates TTFT", 8, []step{finishing(1, neither)},
			false, "queue 200ms (8.3%), prefill 300ms (13%)",
			"outside queue and prefill", []string{"wait for a batch slot", "long prompts"}},
		{"TTFT without phase histograms cannot be split", 8, []step{finishing(1, longPrompt)},
			true, "queue and prefill times n/a",
			"cannot be split", []string{"wait for a batch slot", "without a queue"}},
		{"ITL spikes while prefilling: prefill interference", 30, []step{finishing(27, chat), finishing(3, spiky)},
			false, "p99 ITL 290ms over the 100ms SLO, p50 38.9ms within it, while prefilling 15,000 prompt tokens/s",
			"prefill interference", []string{"every decode step"}},
		{"every token slow: the decode step at this batch", 256, []step{finishing(10, slowStep)},
			false, "p50 ITL 125ms over the 100ms SLO too: every decode step is slow",
			"every decode step is slow at running 256", []string{"prefill interference"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running, s.kv = tt.running, 0.5
			samples, now := run(s, 30, time.Second, tt.steps...)
			if tt.noPhases {
				for i := range samples {
					samples[i].Total.Histograms[catalogue.QueueTime] = catalogue.Buckets{}
					samples[i].Total.Histograms[catalogue.PrefillTime] = catalogue.Buckets{}
				}
			}
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != StateSlow {
				t.Fatalf("state = %v, want slow; reasons %q", r.State, r.Reasons)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
			if !strings.Contains(r.Action, tt.wantAction) {
				t.Errorf("action %q lacks %q", r.Action, tt.wantAction)
			}
			for _, bad := range tt.notAction {
				if strings.Contains(r.Action, bad) {
					t.Errorf("action %q contradicts the evidence with %q", r.Action, bad)
				}
			}
		})
	}
}

// A queue that persists at a flat batch at its cap is FULL even when it is
// not growing, or shrinks too slowly to empty within a window: every
// arriving request still waits for a slot, and only capacity shortens the
// wait. A queue that empties within a window is a spike being cleared.
func TestFullWithoutGrowth(t *testing.T) {
	waited := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 23.5, itl: 0.027, e2e: 31, queue: 23.3, prefill: 0.2, decode: 8}
	tests := []struct {
		name          string
		first, growth float64
		want          State
	}{
		{"steady queue of 28 at the cap", 28, 0, StateFull},
		{"queue shrinking 40 → 28, empty in about 70 s", 40, -0.4, StateFull},
		{"queue of 90 shrinking by 3/s, empty within the window", 90, -3, StateSlow},
	}
	for _, tt := range tests {
		s := newServer()
		s.running, s.kv, s.waiting = 254, 0.6, tt.first
		samples, now := run(s, 30, time.Second, finishing(10, waited), queueing(tt.first, tt.growth))
		if r := analyzeOne(samples, now, DefaultConfig()); r.State != tt.want {
			t.Errorf("%s: %v, want %v; reasons %q, action %q", tt.name, r.State, tt.want, r.Reasons, r.Action)
		}
	}
}
