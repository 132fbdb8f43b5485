package analysis

import (
	"cmp"
	"math"
	"strings"
)

// SeverityOf scores how much a replica needs the engineer, for
// worst-first order; Analyze writes it in ReplicaReport.Severity, which the
// grid, the table's default order and the fleet's worst replica read
// (CompareSeverity). cfg gives the TTFT SLO.
//
// It is 100 × the state's rank plus the evidence, capped below 100. The ranks: HEALTHY 0, IDLE 1, SLEEPING 2,
// WARMING, UNJUDGED and RECOVERING 3, STALE and a target that never
// answered 4, the urgent states PREEMPTING, FULL, SLOW and STALLED 5
// together, DOWN 6. The urgent states share a rank so that the evidence,
// not the state's name, decides among them: a FULL replica with 1,900
// waiting and a 159 s p99 TTFT comes before a PREEMPTING one with 30
// waiting. A target DOWN that has never answered (no good scrape, none
// carried: neverAnswered) is a question of configuration, not a replica
// in trouble: it ranks with STALE, after every live replica in trouble,
// so that it does not stand first for a whole incident.
//
// The evidence counts doublings, so that no one figure drowns the others:
// log2(1 + waiting) + log2(p99 TTFT ÷ the TTFT SLO) when over it +
// log2(1 + preemptions per minute). An engine that exports no TTFT
// histogram has its queue's wait (waiting ÷ requests/s, Little's law) in
// place of p99 TTFT. A figure that is n/a adds nothing. A DOWN replica's
// figures are its last seen, not current: they add nothing.
func SeverityOf(r *ReplicaReport, cfg Config) float64 {
	rank := severityRank(r.State)
	if r.State == StateDown {
		if neverAnswered(r) {
			rank = severityRank(StateStale)
		}
		return 100 * rank
	}
	evidence := 0.0
	if r.Waiting > 0 {
		evidence += math.Log2(1 + r.Waiting.Float())
	}
	if slo := cfg.SLOTTFT.Seconds(); slo > 0 && ttftOrQueueWait(r) > slo {
		evidence += math.Log2(ttftOrQueueWait(r) / slo)
	}
	if r.PreemptionsPerSecond > 0 {
		evidence += math.Log2(1 + 60*r.PreemptionsPerSecond.Float())
	}
	return 100*rank + min(evidence, maxEvidence)
}

// ttftOrQueueWait is the p99 TTFT of r, or, when its engine exports no
// TTFT histogram, how long its queue takes to drain at its finish rate
// (Little's law: waiting ÷ requests/s), the wait a request arriving now
// has before its first token; NaN when neither is known.
func ttftOrQueueWait(r *ReplicaReport) float64 {
	if r.TTFT.P99.Known() {
		return r.TTFT.P99.Float()
	}
	if r.Waiting > 0 && r.RequestsPerSecond > 0 {
		return r.Waiting.Float() / r.RequestsPerSecond.Float()
	}
	return math.NaN()
}

// neverAnswered reports whether r is a target with no good scrape since
// vtop started: none in hand and none carried from an earlier evaluation.
func neverAnswered(r *ReplicaReport) bool { return r.LastGood.IsZero() }

// maxEvidence caps the evidence of severity below the next rank.
const maxEvidence = 99.99

// severityRank is the state's rank in severity: the urgent states share
// one.
func severityRank(s State) float64 {
	switch s {
	case StateSlow, StateFull, StatePreempting, StateStalled:
		return 5
	case StateDown:
		return 6
	case StateStale:
		return 4
	case StateWarming, StateUnjudged, StateRecovering:
		return 3
	case StateSleeping:
		return 2
	case StateIdle:
		return 1
	}
	return 0
}

// CompareSeverity orders replicas worst first: the higher Severity, then
// the worse state (PREEMPTING before FULL before SLOW on equal evidence),
// then by target, so that the order is the same on every screen.
func CompareSeverity(a, b *ReplicaReport) int {
	if d := cmp.Compare(b.Severity, a.Severity); d != 0 {
		return d
	}
	if d := cmp.Compare(b.State, a.State); d != 0 {
		return d
	}
	return strings.Compare(a.Target, b.Target)
}
