// Package notify tells the world outside the terminal what a running vtop
// sees: alerts posted to an Alertmanager, a command per state change
// (Hook), the dashboard's bell (Rings), all from the report's one stream
// of state changes (analysis.Change).
//
// The translation from reports is pure (Changes, Rings, Tracker); posting
// and commands run on goroutines of their own, so that a slow
// Alertmanager or a hung hook costs a count and a notice, never a frame.
package notify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/safetext"
)

// Change is a replica's state change, as a hook receives it on stdin: one
// of the report's stream of changes (analysis.Change), which the event
// log, the bell and the alerts read too.
type Change struct {
	Time    time.Time `json:"time"`
	Replica string    `json:"replica"`
	// From is the state before, by name ("healthy"): "none" at the
	// replica's first change, when it had none to tell. State is the
	// state now: "none" once the replica is no longer among the targets.
	From  string `json:"from"`
	State string `json:"state"`
	// Severity is the alert severity of the new state: critical, warning,
	// or none for a state that is not a problem.
	Severity string `json:"severity"`
	// Text is the change as the event log says it: "FULL: waiting 41, …".
	Text    string   `json:"text"`
	Reasons []string `json:"reasons,omitempty"`
	Action  string   `json:"action,omitempty"`
}

// Changes are the report's state changes (Report.Changes), as a hook
// receives them, in the report's order.
func Changes(r *analysis.Report) []Change {
	if r == nil || len(r.Changes) == 0 {
		return nil
	}
	index := replicaIndex(r)
	out := make([]Change, 0, len(r.Changes))
	for _, c := range r.Changes {
		hc := Change{Time: c.Time, Replica: c.Target, From: c.FromName(), State: c.ToName(),
			Severity: SeverityNone, Text: c.Text}
		if rep := index[c.Target]; rep != nil && !c.Left {
			hc.Severity, hc.Reasons, hc.Action = Severity(c.To), rep.Reasons, rep.Action
		}
		out = append(out, hc)
	}
	return out
}

// Rings reports whether the report's changes ring a bell set for states:
// a replica changed into one of them.
func Rings(r *analysis.Report, states []analysis.State) bool {
	for _, c := range r.Changes {
		if !c.Left && slices.Contains(states, c.To) {
			return true
		}
	}
	return false
}

// replicaIndex finds the report's replicas by target.
func replicaIndex(r *analysis.Report) map[string]*analysis.ReplicaReport {
	index := make(map[string]*analysis.ReplicaReport, len(r.Replicas))
	for i := range r.Replicas {
		index[r.Replicas[i].Target] = &r.Replicas[i]
	}
	return index
}

// SeverityNone is the severity of a change into a state that raises no
// alert.
const SeverityNone = "none"

// Severity is the severity of an alert for state s as a running vtop
// raises it: the rules' (analysis.AlertOf) for a problem, SeverityNone
// otherwise, IDLE included (the rules' informational alert shows it on a
// dashboard; a running vtop pages only problems).
func Severity(s analysis.State) string {
	if a, ok := analysis.AlertOf(s); ok && a.Severity != analysis.AlertInfo {
		return a.Severity
	}
	return SeverityNone
}

// Alerting reports whether state s raises an alert.
func Alerting(s analysis.State) bool { return Severity(s) != SeverityNone }

// ParseStates reads a comma-separated list of state names (down,full),
// any case. Errors name the word at fault and the states there are.
func ParseStates(list string) ([]analysis.State, error) {
	var out []analysis.State
	for _, word := range strings.Split(list, ",") {
		word = strings.ToLower(strings.TrimSpace(word))
		var s analysis.State
		if err := s.UnmarshalText([]byte(word)); err != nil || word == "" {
			var names []string
			for s := analysis.StateHealthy; s <= analysis.StateDown; s++ {
				names = append(names, s.String())
			}
			return nil, fmt.Errorf("%q is not a state (want some of %s)", safetext.Sanitize(word), strings.Join(names, ","))
		}
		out = append(out, s)
	}
	return out, nil
}
