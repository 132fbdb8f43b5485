package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/human"
)

// Change is one change of a replica's state as shown: the one stream that
// the event log, a hook (--on-change), the bell and Alertmanager all read
// (Report.Changes), so that none tells what another leaves out. A target
// vtop has just started reading tells nothing while WARMING: its first
// other state is its first change, from none (First); a target no longer
// read changes to none (Left). Each target's changes form a chain.
type Change struct {
	Time   time.Time
	Target string
	From   State // the state shown before; meaningless when First
	To     State // the state shown now; meaningless when Left
	First  bool
	Left   bool
	// Text is the change as the event log writes it (StateText).
	Text string
}

// NoState names the side of a Change where the target has no state: before
// its first, after it left.
const NoState = "none"

// FromName is the name of the state changed from, NoState at a target's
// first change.
func (c Change) FromName() string {
	if c.First {
		return NoState
	}
	return c.From.String()
}

// ToName is the name of the state changed to, NoState when the target left.
func (c Change) ToName() string {
	if c.Left {
		return NoState
	}
	return c.To.String()
}

// leftText is the text of a change of a target no longer read.
const leftText = "no longer among the targets read"

// FollowChanges gives r its stream of changes (Report.Changes) from prev,
// the evaluation before it (nil for the first), and an event for each
// change, before any other event: what Analyze does for each report it
// makes, for a report made otherwise.
func (r *Report) FollowChanges(prev *Report) {
	r.followChanges(prev, previousReports(prev, len(r.Replicas), func(i int) string { return r.Replicas[i].Target }))
}

// followChanges is FollowChanges with each replica's previous report found
// (befores[i] is r.Replicas[i]'s, nil for a target new in r).
func (r *Report) followChanges(prev *Report, befores []*ReplicaReport) {
	r.Changes = nil
	found := 0
	for i := range r.Replicas {
		if befores[i] != nil {
			found++
		}
		if c, ok := changeOf(&r.Replicas[i], befores[i], r.Time); ok {
			r.Changes = append(r.Changes, c)
		}
	}
	if prev != nil && found < len(prev.Replicas) {
		r.addDepartures(prev)
	}
	for _, c := range r.Changes {
		state := c.To
		if c.Left {
			state = c.From
		}
		r.Events = append(r.Events, Event{Time: c.Time, Target: c.Target, State: state, Text: c.Text})
	}
}

// changeOf is the change a replica's report tells at t against its
// previous one (before, nil for none), if it tells one.
func changeOf(rep, before *ReplicaReport, t time.Time) (Change, bool) {
	told := before != nil && before.told
	rep.told = told || rep.State != StateWarming
	if !rep.told || (told && before.State == rep.State) {
		return Change{}, false
	}
	c := Change{Time: t, Target: rep.Target, To: rep.State, First: !told, Text: StateText(rep)}
	if told {
		c.From = before.State
	}
	return c, true
}

// addDepartures adds the changes of the told targets of prev not in r.
func (r *Report) addDepartures(prev *Report) {
	now := make(map[string]bool, len(r.Replicas))
	for i := range r.Replicas {
		now[r.Replicas[i].Target] = true
	}
	for i := range prev.Replicas {
		if p := &prev.Replicas[i]; p.told && !now[p.Target] {
			r.Changes = append(r.Changes, Change{Time: r.Time, Target: p.Target, From: p.State, Left: true, Text: leftText})
		}
	}
}

// StateText is a replica's state and its first reason, as a change into it
// is written: "FULL: waiting 41 in each of 3 readings".
func StateText(rep *ReplicaReport) string {
	text := strings.ToUpper(rep.State.String())
	if len(rep.Reasons) > 0 {
		text += ": " + rep.Reasons[0]
	}
	return text
}

// events are this evaluation's events other than state changes: a
// restart, and threshold crossings (KV cache usage reaching kvBoundUsage,
// p99 TTFT going over the SLO) that no change to a state explains.
// befores[i] is reps[i]'s previous report: a new target has no crossing.
func events(now time.Time, reps []ReplicaReport, befores []*ReplicaReport, cfg Config) []Event {
	var out []Event
	for i := range reps {
		r, before := &reps[i], befores[i]
		if before == nil {
			continue
		}
		if r.Restarted && !(before.Restarted && before.RestartedAt.Equal(r.RestartedAt)) {
			out = append(out, Event{Time: now, Target: r.Target, State: r.State,
				Text: "restarted at " + r.RestartedAt.Format(human.Clock) + " (" + r.restartCause + ")"})
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

// changingTo reports whether r is changing to one of the states, shown
// now or pending: a crossing at such a change is part of it.
func changingTo(r, before *ReplicaReport, states ...State) bool {
	for _, s := range states {
		if (r.State == s && before.State != s) || (r.Pending == s && r.State != s) {
			return true
		}
	}
	return false
}
