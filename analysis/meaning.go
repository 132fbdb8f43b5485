package analysis

import "fmt"

// StateMeaning is what a state means, in one short line (states); ""
// for an unknown state.
func StateMeaning(s State) string {
	if int(s) < len(states) {
		return states[s].meaning
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
	for _, l := range []sloFigure{{"TTFT", "requests", r.TTFT, cfg.SLOTTFT}, {"ITL", "tokens", r.ITL, cfg.SLOITL}} {
		if over, _ := overSLO(l.q, l.slo, true, cfg); over {
			return fmt.Sprintf("until %s <%s", l.name, seconds(l.slo.Seconds()*(1-cfg.SLOExitMargin)))
		}
	}
	return ""
}
