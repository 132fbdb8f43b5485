package verdicts

import (
	"math"
	"slices"

	"github.com/vtop-dev/vtop/analysis"
)

// The truth's parameters. They are the benchmark's definitions, written
// down in BENCHMARKS.md; they are chosen from what an engineer would call
// each state, not from vtop's thresholds.
const (
	// SLO is the TTFT objective, vtop's default: a p99 over it is SLOW.
	SLO = 1.0
	// ITLSLO is the inter-token objective, vtop's default. The
	// scenarios keep the decode step under it (TestModel checks), so
	// SLOW is judged on TTFT.
	ITLSLO = 0.1
	// PreemptingFor is how long a replica is PREEMPTING after its latest
	// preemption (seconds), while preemption's cost is material.
	PreemptingFor = 10.0
	// PreemptingPriced is the span over which preemption's cost is priced
	// (seconds): the half-minute over which an engineer reads rates.
	// Its cost is material from PreemptingRecomputed of the tokens
	// generated in it recomputed (a tenth of the work redone), or from
	// PreemptingShare of the requests finished in it preempted (one in
	// twenty: the p95 of the end-to-end latency is a preempted
	// request's). Below both, preemption is the price of a batch at the KV
	// cache's edge, not a cache too small for the batch.
	PreemptingPriced     = 30.0
	PreemptingRecomputed = 0.10
	PreemptingShare      = 0.05
	// FullAfter is how long the queue must have persisted at the cap
	// before a replica is FULL (seconds).
	FullAfter = 3.0
	// SlowRecent is the span whose first tokens give the p99 TTFT; when
	// it holds fewer than SlowMinRequests, the newest SlowMinRequests
	// within SlowLongest are used; with fewer still, their median.
	SlowRecent      = 10.0
	SlowLongest     = 30.0
	SlowMinRequests = 20
	// StalledAfter is how long work must have been present (requests
	// running or waiting) with no token generated before a replica is
	// STALLED (seconds): some two hundred decode steps, longer than any
	// prefill of the scenarios.
	StalledAfter = 5.0
	// IdleFor is how long no request may have arrived, run or waited
	// before a replica is IDLE (seconds).
	IdleFor = 5.0
	// RecoveringWindow is the span whose first tokens' TTFT must be within
	// the SLO for a replica that is not FULL, SLOW or PREEMPTING to be
	// HEALTHY: the analysis window by default, the span over which vtop
	// shows its p99 TTFT beside the state (seconds).
	RecoveringWindow = 30.0
)

// Truth is the true state of the replica at second t (seconds since the
// start, a whole number of steps), judged from the model's own records,
// never from vtop's output. In priority order:
//
//   - DOWN: the scrape at t fails (the process is away).
//   - STALLED: at the end of every step in (t−StalledAfter, t] the
//     process was up, requests ran or waited, and no token was
//     generated in the step (the engine stopped stepping).
//   - PREEMPTING: a preemption happened in (t−PreemptingFor, t], and
//     preemption's cost over (t−PreemptingPriced, t] is material: the
//     tokens the preemptions threw out of the KV cache (to be prefilled
//     again) are at least PreemptingRecomputed of the tokens generated,
//     or the preemptions at least PreemptingShare of the requests
//     finished (or nothing was generated nor finished). A rarer
//     preemption leaves the replica in the state it is otherwise in.
//   - FULL: at the end of every step in (t−FullAfter, t] the process was
//     up, requests waited, and the batch was at capacity (running at
//     max_num_seqs, the head of the queue refused for KV blocks, or a
//     request preempted in the step: the KV cache could not hold the
//     batch). A
//     queue that shrinks is FULL until it is gone: a request that arrives
//     meanwhile waits behind it.
//   - SLOW: the p99 (nearest rank) of the time from admission to first
//     token (the TTFT less the time spent waiting: prefill, and what
//     shares the GPU with it) of the requests whose first token came in
//     (t−SlowRecent, t] — or of the newest SlowMinRequests in
//     (t−SlowLongest, t] when the recent span has fewer — exceeds SLO.
//     With fewer than SlowMinRequests in SlowLongest, their median must
//     exceed it: most of them missed. Time spent waiting is FULL's: a
//     replica is SLOW for latency while not full (long prompts, prefill
//     interference), not for a queue that has gone. (ITL is under its
//     SLO in every scenario.)
//   - RECOVERING: the p99 (nearest rank) of the TTFT, wait included, of
//     the requests whose first token came in (t−RecoveringWindow, t]
//     exceeds SLO (with fewer than SlowMinRequests of them, their
//     median): none of the states above holds now, but the latency of
//     the span a dashboard shows is still over the objective, the
//     requests a backlog held up still in it.
//   - IDLE: the process was up through (t−IdleFor, t] and no request
//     arrived, ran or waited in it.
//   - HEALTHY: none of these.
func (r *Replica) Truth(t float64, dt float64) analysis.State {
	k := int(math.Round(t/dt)) - 1 // the step that ends at t
	if k < 0 || k >= len(r.Steps) {
		return analysis.StateWarming
	}
	steps := r.Steps
	if !steps[k].Up {
		return analysis.StateDown
	}
	if r.stalled(k, int(math.Round(StalledAfter/dt))) {
		return analysis.StateStalled
	}
	from := func(span float64) int { return max(0, k-int(math.Round(span/dt))+1) }
	if r.preempting(k, from(PreemptingFor), from(PreemptingPriced)) {
		return analysis.StatePreempting
	}
	if r.full(k, int(math.Round(FullAfter/dt)), t) {
		return analysis.StateFull
	}
	if r.slow(t) {
		return analysis.StateSlow
	}
	if r.recovering(t) {
		return analysis.StateRecovering
	}
	idle := k-from(IdleFor)+1 == int(math.Round(IdleFor/dt))
	for i := from(IdleFor); i <= k && idle; i++ {
		s := steps[i]
		idle = s.Up && s.Running == 0 && s.Waiting == 0 && s.Arrivals == 0
	}
	if idle {
		return analysis.StateIdle
	}
	return analysis.StateHealthy
}

// preempting is PREEMPTING's rule at step k: a preemption in the steps
// from recent on, and a material cost over the steps from priced on.
func (r *Replica) preempting(k, recent, priced int) bool {
	if !slices.ContainsFunc(r.Steps[recent:k+1], func(s StepRecord) bool { return s.Preemptions > 0 }) {
		return false
	}
	var preemptions, recomputed, generated, finished int
	for _, s := range r.Steps[priced : k+1] {
		preemptions += s.Preemptions
		recomputed += s.Recomputed
		generated += s.Generated
		finished += s.Finished
	}
	if generated == 0 && finished == 0 {
		return true
	}
	return float64(recomputed) >= PreemptingRecomputed*float64(generated) ||
		float64(preemptions) >= PreemptingShare*float64(finished)
}

// stalled is STALLED's rule over the n steps that end with step k.
func (r *Replica) stalled(k, n int) bool {
	if k+1 < n {
		return false
	}
	for _, s := range r.Steps[k-n+1 : k+1] {
		if !s.Up || (s.Running == 0 && s.Waiting == 0) || s.Generated > 0 {
			return false
		}
	}
	return true
}

// full is FULL's rule over the n steps that end with step k, at time t.
func (r *Replica) full(k, n int, t float64) bool {
	if k+1 < n {
		return false
	}
	for i := k - n + 1; i <= k; i++ {
		s := r.Steps[i]
		if !s.Up || s.Waiting == 0 || !(s.Running >= r.cfg.MaxNumSeqs || s.Blocked || s.Preemptions > 0) {
			return false
		}
	}
	return true
}

// QueuePersists reports whether requests waited at the end of every step
// in (t−FullAfter, t], the process up throughout.
func (r *Replica) QueuePersists(t, dt float64) bool {
	k, n := int(math.Round(t/dt))-1, int(math.Round(FullAfter/dt))
	if k+1 < n || k >= len(r.Steps) {
		return false
	}
	for _, s := range r.Steps[k-n+1 : k+1] {
		if !s.Up || s.Waiting == 0 {
			return false
		}
	}
	return true
}

// recovering is RECOVERING's rule at t: the p99 of the TTFT (wait
// included) of the requests whose first token came in the last
// RecoveringWindow over the SLO, or, with fewer than SlowMinRequests of
// them, their median.
func (r *Replica) recovering(t float64) bool {
	start, end := r.servedWithin(t, RecoveringWindow)
	return overSLOAt(r.FirstTokens[start:end], end-start >= SlowMinRequests, func(s Served) float64 { return s.TTFT })
}

// slow is SLOW's rule at t: the p99 of the recent requests' time from
// admission to first token over the SLO, or, with fewer than
// SlowMinRequests in SlowLongest, their median.
func (r *Replica) slow(t float64) bool {
	start, end := r.servedWithin(t, SlowRecent)
	if end-start < SlowMinRequests {
		start = end
		for start > 0 && end-start < SlowMinRequests && r.FirstTokens[start-1].At > t-SlowLongest {
			start--
		}
	}
	return overSLOAt(r.FirstTokens[start:end], end-start >= SlowMinRequests, func(s Served) float64 { return s.Admitted })
}

// servedWithin is the range of FirstTokens in (t−span, t].
func (r *Replica) servedWithin(t, span float64) (start, end int) {
	ft := r.FirstTokens
	end = len(ft)
	for end > 0 && ft[end-1].At > t {
		end--
	}
	start = end
	for start > 0 && ft[start-1].At > t-span {
		start--
	}
	return start, end
}

// overSLOAt reports whether the p99 (nearest rank) of value over served,
// or their median when not enough, is over the SLO; false with none.
func overSLOAt(served []Served, enough bool, value func(Served) float64) bool {
	if len(served) == 0 {
		return false
	}
	q := 0.99
	if !enough {
		q = 0.5
	}
	xs := make([]float64, 0, len(served))
	for _, s := range served {
		xs = append(xs, value(s))
	}
	slices.Sort(xs)
	return xs[int(math.Ceil(q*float64(len(xs))))-1] > SLO
}
