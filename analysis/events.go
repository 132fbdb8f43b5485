package analysis

import (
	"fmt"
	"strings"
	"time"
)

// events compares this evaluation with the previous one: state changes and
// threshold crossings (KV cache usage reaching 90 %, p99 TTFT going over
// the SLO, read from enough requests to judge by). A crossing that comes
// with a change to a state that explains it is not an event of its own:
// the state's event says it. befores[i] is reps[i]'s previous report; a
// target new in this evaluation has none, so no basis and no event.
func events(now time.Time, reps []ReplicaReport, befores []*ReplicaReport, cfg Config) []Event {
	var out []Event
	for i := range reps {
		r, before := &reps[i], befores[i]
		if before == nil {
			continue
		}
		if r.State != before.State && !firstJudgmentFine(before.State, r.State) {
			out = append(out, Event{Time: now, Target: r.Target, State: r.State,
				Text: strings.ToUpper(r.State.String()) + ": " + firstOr(r.Reasons, "")})
		}
		if r.Restarted && !(before.Restarted && before.RestartedAt.Equal(r.RestartedAt)) {
			out = append(out, Event{Time: now, Target: r.Target, State: r.State,
				Text: "restarted at " + r.RestartedAt.Format("15:04:05") + " (" + r.restartCause + ")"})
		}
		if r.KVCacheUsage >= kvBoundUsage && !(before.KVCacheUsage >= kvBoundUsage) && !changingTo(r, before, StateFull, StatePreempting) {
			out = append(out, Event{Time: now, Target: r.Target, State: r.State,
				Text: fmt.Sprintf("KV cache %s (≥ %s), running %s, waiting %s",
					percent(r.KVCacheUsage.Float()), percent(kvBoundUsage), count(r.Running.Float()), count(r.Waiting.Float()))})
		}
		slo := cfg.SLOTTFT.Seconds()
		enough := r.TTFT.Observations.Float() >= float64(cfg.MinObservations)
		if slo > 0 && enough && r.TTFT.P99.Float() > slo && !(before.TTFT.P99.Float() > slo) &&
			!changingTo(r, before, StateSlow, StateFull, StatePreempting) {
			out = append(out, Event{Time: now, Target: r.Target, State: r.State,
				Text: fmt.Sprintf("p99 TTFT %s over the %s SLO", r.TTFT.P99Bucket.Seconds(r.TTFT.P99), seconds(slo))})
		}
	}
	return out
}

// FirstJudgmentFine reports whether a change is a replica's first judgment
// after warming up and a fine one: not an event, or every replica of a
// fleet would log one at start. Outputs that act on state changes (a hook,
// the bell) skip the same changes the event log does.
func FirstJudgmentFine(before, now State) bool { return firstJudgmentFine(before, now) }

func firstJudgmentFine(before, now State) bool {
	return (before == StateWarming || before == StateUnjudged) && (now == StateHealthy || now == StateIdle)
}

// changingTo reports whether r is changing to one of the states, now (it
// is shown for the first time) or on its way (it is pending, held back by
// the hysteresis: its event comes when it shows). A crossing at such a
// change is part of it: a full queue or preemption raises TTFT and fills
// the KV cache, and a slow TTFT is what SLOW says.
func changingTo(r, before *ReplicaReport, states ...State) bool {
	for _, s := range states {
		if (r.State == s && before.State != s) || (r.Pending == s && r.State != s) {
			return true
		}
	}
	return false
}
