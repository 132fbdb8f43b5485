package analysis

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// readingsWith builds the readings of one priority case: with the winning
// state's evidence (true) or without it (false), the rest unchanged.
type readingsWith func(winnerEvidence bool) ([]catalogue.Sample, time.Time)

// preemptingAndFull is a replica whose batch is flat at 256 with a queue
// that grows from 10 in every reading, and whose preemption counter rises
// by 2 a second when preempt is true.
func preemptingAndFull(preempt bool) ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running, s.kv, s.waiting = 256, 0.99, 10
	steps := []step{finishing(6, chat), queueing(10, 1)}
	if preempt {
		steps = append(steps, preempting(2))
	}
	return run(s, 30, time.Second, steps...)
}

// fullAndSlow is a replica flat at 256 whose requests see a 2.4 s TTFT (p99
// over the 1 s SLO) and, when queue is true, a queue that grows from 41 in
// every reading, which most of the TTFT is spent in; without it, the time
// is prefill (a TTFT that is mostly queue time with no queue is a queue
// that has gone, which is not SLOW).
func fullAndSlow(queue bool) ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running, s.kv = 256, 0.6
	late := chat
	late.ttft, late.prefill = 2.4, 1.9
	steps := []step{finishing(12, late)}
	if queue {
		late.queue, late.prefill = 1.9, chat.prefill
		steps = []step{finishing(12, late)}
		s.waiting = 41
		steps = append(steps, queueing(41, 1.8))
	}
	return run(s, 30, time.Second, steps...)
}

// staleAndIdle is a replica whose every engine value is 0 (nothing runs,
// waits or finishes) while, when served is true, its HTTP request counter
// rises: the API server answers but the metrics are empty.
func staleAndIdle(served bool) ([]catalogue.Sample, time.Time) {
	var steps []step
	if served {
		steps = append(steps, func(s *server, _ int) { s.httpRequests += 5 })
	}
	return run(newServer(), 30, time.Second, steps...)
}

// downAndEverything is preemptingAndFull with long TTFTs (so slow too) whose
// newest scrape failed when failing is true.
func downAndEverything(failing bool) ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running, s.kv, s.waiting = 256, 0.99, 10
	late := chat
	late.ttft = 2.4
	samples, now := run(s, 30, time.Second, finishing(6, late), queueing(10, 1), preempting(2))
	if failing {
		samples[30] = catalogue.Sample{Time: now, Err: "connection refused"}
	}
	return samples, now
}

// TestStatePriority: when the evidence of two states holds at once the
// higher one wins, and each case proves its conflict is real: the same
// readings without the winner's evidence give the other state.
func TestStatePriority(t *testing.T) {
	tests := []struct {
		name          string
		readings      readingsWith
		winner, loser State
	}{
		{"preempting over full: without the preemption counter moving it is full", preemptingAndFull, StatePreempting, StateFull},
		{"full over slow: without the queue the same TTFT is slow", fullAndSlow, StateFull, StateSlow},
		{"stale over idle: without the HTTP requests the empty page is idle", staleAndIdle, StateStale, StateIdle},
		{"down over all: without the failed scrape it is preempting", downAndEverything, StateDown, StatePreempting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				withWinner bool
				want       State
			}{{true, tt.winner}, {false, tt.loser}} {
				samples, now := tt.readings(c.withWinner)
				if r := analyzeOne(samples, now, DefaultConfig()); r.State != c.want {
					t.Errorf("with the %v evidence %v: state %v, want %v; reasons %q", tt.winner, c.withWinner, r.State, c.want, r.Reasons)
				}
			}
		})
	}
}

// TestSlowOutranksStale checks the rule order on figures and evidence, not
// on readings: readings cannot hold both states. STALE means no counter
// moved, the histograms' _count included, and a p99 needs histogram
// buckets that moved; a page whose buckets move while _count stands still
// is broken. The order still decides such a page, so it is pinned here the
// same way: over-SLO p99 → slow; the same evidence without it → stale.
func TestSlowOutranksStale(t *testing.T) {
	running := gaugeStats{First: 12, Last: 12, Min: 12, Max: 12, Mean: 12, N: staleMinSamples}
	idleQueue := gaugeStats{N: staleMinSamples}
	ev := evidence{Kind: catalogue.EngineVLLM, Samples: staleMinSamples, SpanSeconds: 2, Running: running, Waiting: idleQueue,
		KVCacheUsage: idleQueue, Finished: 0, Preemptions: 0, CountersKnown: true}
	for _, tt := range []struct {
		name    string
		ttftP99 Num
		want    State
	}{
		{"p99 TTFT over the SLO", 2.5, StateSlow},
		{"the same without the p99", NA, StateStale},
	} {
		f := naFigures()
		f.Running, f.Waiting, f.TTFT.P99, f.TTFT.Observations = 12, 0, tt.ttftP99, 100
		if got := classify(&f, &ev, DefaultConfig()); got.State != tt.want {
			t.Errorf("%s: %v, want %v; reasons %q", tt.name, got.State, tt.want, got.Reasons)
		}
	}
}
