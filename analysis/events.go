package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/human"
)

// Change is one change of a replica's state as shown: the one stream of
// state changes that the event log, a hook (--on-change), the bell and
// Alertmanager all read (Report.Changes), so that none of them tells what
// another leaves out. Every change of the state shown is one Change, From
// the state shown at the previous evaluation; a target's first state is a
// change from none (First), and a target no longer read is a change to
// none (Left).
//
// One change is not told, for every reader alike: a target that vtop has
// just started reading is WARMING, and that is no news; until it shows
// another state it has told nothing, and its first other state is its
// first change, from none. A target judged before that warms up again (a
// restart) tells its WARMING and then the state it settles in, like any
// other change. So each target's changes form a chain: the first from
// none, each next From the state the one before it went To.
type Change struct {
	Time   time.Time
	Target string
	From   State // the state shown before; meaningless when First
	To     State // the state shown now; meaningless when Left
	// First is set on a target's first change: it had no state to tell
	// before (FromName says "none").
	First bool
	// Left is set when the target is no longer among those read: it has
	// no state now (ToName says "none").
	Left bool
	// Text is the change as the event log writes it: "FULL: waiting 41 in
	// each of 3 readings", the new state and its first reason.
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
// change, before any other event. Analyze does it for each report it
// makes; a report made otherwise (a test's) is given its stream here,
// once, in order.
func (r *Report) FollowChanges(prev *Report) {
	befores := make([]*ReplicaReport, len(r.Replicas))
	if prev != nil {
		index := make(map[string]*ReplicaReport, len(prev.Replicas))
		for i := range prev.Replicas {
			index[prev.Replicas[i].Target] = &prev.Replicas[i]
		}
		for i := range r.Replicas {
			befores[i] = index[r.Replicas[i].Target]
		}
	}
	r.followChanges(prev, befores)
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
// previous one (before, nil for none), if it tells one: a replica's
// first state is told once it is out of WARMING, then each move.
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

// addDepartures adds the changes of the targets of prev that are not in r
// and whose state was told: they left.
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

// events are this evaluation's events other than state changes (those
// are its Changes'): a restart, and threshold crossings (KV cache usage
// reaching 90 %, p99 TTFT going over the SLO, read from enough requests
// to judge by). A crossing that comes with a change to a state that
// explains it is not an event of its own: the state's event says it.
// befores[i] is reps[i]'s previous report; a target new in this
// evaluation has none, so no basis for a crossing.
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
