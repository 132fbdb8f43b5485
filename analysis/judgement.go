package analysis

import (
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// Thresholds are the spans and counts of the state rules, for an evaluator
// of the same judgement outside this package (the Prometheus rules `vtop
// rules` writes), so that the two cannot drift apart. The constants in
// state.go say why each is what it is.
type Thresholds struct {
	// FullReadings is how many of the newest readings, over at least
	// FullSpan, must each hold a queue for a replica to be FULL.
	FullReadings int
	FullSpan     time.Duration
	// ObviousQueue is the queue that makes a replica FULL on two readings.
	ObviousQueue float64
	// PreemptingSpan is the trailing span over which a preemption makes a
	// replica PREEMPTING when its cost over the window is material: its
	// recomputed tokens at least MaterialRecomputed of the tokens
	// generated, or its preemptions MaterialPreempted of the requests.
	PreemptingSpan                        time.Duration
	MaterialRecomputed, MaterialPreempted float64
	// LeastEvidence is the span of readings a verdict of health needs.
	LeastEvidence time.Duration
	// StaleReadings is how many readings must show no counter moving while
	// requests run for a replica to be STALE.
	StaleReadings int
	// StalledSpan is how long work must wait with no token generated for a
	// replica to be STALLED.
	StalledSpan time.Duration
}

// JudgementThresholds returns the thresholds the analysis judges by.
func JudgementThresholds() Thresholds {
	return Thresholds{
		FullReadings:       fullMinSamples,
		FullSpan:           fullSpan,
		ObviousQueue:       obviousQueue,
		PreemptingSpan:     preemptingSpan,
		MaterialRecomputed: materialRecomputed,
		MaterialPreempted:  materialPreempted,
		LeastEvidence:      leastEvidence,
		StaleReadings:      staleMinSamples,
		StalledSpan:        stalledSpan,
	}
}

// preemptingAction is PREEMPTING's first action when the KV cache's
// capacity is not known, so no cap can be computed.
const preemptingAction = "lower max_num_seqs (or raise gpu_memory_utilization), or add VRAM / replicas"

// slowAction is SLOW's first action before the histograms name a cause.
const slowAction = "by the cause the histograms show: long prompts (shorten them, prefix caching, chunked prefill), slow prefill, " +
	"prefill interference (chunked prefill with a smaller max_num_batched_tokens, or split prefill and decode), " +
	"slow decode steps (lower max_num_seqs, or add replicas)"

// recoveringAction is RECOVERING's first action: none, the cause passed.
const recoveringAction = "none to take: watch that it clears; if backlogs recur, the load needs more replicas (see the advice)"

// downAction is DOWN's first action, without the target and error a
// replica's report names.
const downAction = "check the inference server process / pod"

// FirstAction is the first action of a state, as far as it can be said
// without one replica's figures; "" for the states that ask for nothing.
func FirstAction(s State, kind catalogue.EngineKind, cfg Config) string {
	switch {
	case s == StateFull:
		return scaleOnWords("add replicas; ", waitingMetric(kind), NA, NA, cfg.TargetQueueTime.Seconds())
	case int(s) < len(states):
		return states[s].action
	}
	return ""
}
