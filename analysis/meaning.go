package analysis

import (
	"fmt"
	"time"
)

// stateMeanings are the states' meanings in one short line each, the
// legend of the help overlay; docs/verdicts.md writes down each rule whole.
var stateMeanings = [...]string{
	StateHealthy:    "serving within its SLOs, on enough evidence",
	StateIdle:       "no request finished, ran or waited over the window",
	StateSleeping:   "the engine says it sleeps (vLLM's /sleep): it cannot serve",
	StateUnjudged:   "no problem seen, but health cannot be proven from this page",
	StateWarming:    "too few readings yet to judge: no problem shown so far",
	StateRecovering: "its problem has passed; the window's figures still hold it",
	StateStale:      "telemetry frozen: no counter moves while requests run",
	StateSlow:       "not full, but p99 TTFT or ITL over its SLO",
	StateFull:       "a queue that persists: the batch is at its capacity",
	StatePreempting: "the KV cache is too small for the batch: work is recomputed",
	StateStalled:    "the engine stopped stepping: work is there, no token moves",
	StateDown:       "the scrape fails: refused, an HTTP error, or no engine metrics",
}

// StateMeaning is what a state means, in one short line (stateMeanings);
// "" for an unknown state.
func StateMeaning(s State) string {
	if int(s) < len(stateMeanings) {
		return stateMeanings[s]
	}
	return ""
}

// SlowMark is the short why of a SLOW replica whose p99 TTFT is within the
// TTFT SLO, for a table row: "pending healthy 1/2", "ITL 150ms" or "until
// TTFT <900ms". "" when the p99 TTFT is over its SLO, or not SLOW.
func SlowMark(r *ReplicaReport, cfg Config) string {
	if r.State != StateSlow || r.TTFT.P99.Float() > cfg.SLOTTFT.Seconds() {
		return ""
	}
	if r.Pending != StateSlow && r.PendingCount > 0 {
		return fmt.Sprintf("pending %s %d/%d", r.Pending, r.PendingCount, cfg.Hysteresis)
	}
	if r.ITL.P99.Float() > cfg.SLOITL.Seconds() {
		return "ITL " + r.ITL.P99Bucket.Seconds(r.ITL.P99)
	}
	for _, l := range []struct {
		name string
		q    Quantiles
		slo  time.Duration
	}{{"TTFT", r.TTFT, cfg.SLOTTFT}, {"ITL", r.ITL, cfg.SLOITL}} {
		if over, _ := overSLO(l.q, l.slo, true, cfg); over {
			return fmt.Sprintf("until %s <%s", l.name, seconds(l.slo.Seconds()*(1-cfg.SLOExitMargin)))
		}
	}
	return ""
}
