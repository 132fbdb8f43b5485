package analysis

import (
	"cmp"
	"math"
	"strings"
)

// SeverityOf scores how much a replica needs the engineer, for the
// worst-first order of every screen (CompareSeverity): 100 × the state's
// rank (severityRank) plus the evidence in doublings, so that no one
// figure drowns the others: log2(1 + waiting) + log2(p99 TTFT ÷ SLO) when
// over it (the queue's wait where there is no TTFT histogram) + log2(1 +
// preemptions per minute), capped below 100. The urgent states share a
// rank, so that the evidence, not the name, decides among them. A DOWN
// replica's figures are its last seen and add nothing; one that never
// answered is a question of configuration and ranks with STALE, so that
// it does not stand first for a whole incident.
func SeverityOf(r *ReplicaReport, cfg Config) float64 {
	rank := severityRank(r.State)
	if r.State == StateDown {
		if r.LastGood.IsZero() {
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

// ttftOrQueueWait is the p99 TTFT of r, or without a TTFT histogram the
// wait of a request arriving now (Little's law: waiting ÷ requests/s).
func ttftOrQueueWait(r *ReplicaReport) float64 {
	if r.TTFT.P99.Known() {
		return r.TTFT.P99.Float()
	}
	if r.Waiting > 0 && r.RequestsPerSecond > 0 {
		return r.Waiting.Float() / r.RequestsPerSecond.Float()
	}
	return math.NaN()
}

// maxEvidence caps the evidence of severity below the next rank.
const maxEvidence = 99.99

// severityRank is the state's rank in severity (states).
func severityRank(s State) float64 {
	if int(s) < len(states) {
		return states[s].rank
	}
	return 0
}

// CompareSeverity orders replicas worst first: the higher Severity, then
// the worse state, then by target, the same on every screen.
func CompareSeverity(a, b *ReplicaReport) int {
	if d := cmp.Compare(b.Severity, a.Severity); d != 0 {
		return d
	}
	if d := cmp.Compare(b.State, a.State); d != 0 {
		return d
	}
	return strings.Compare(a.Target, b.Target)
}
