// Package notify tells the world outside the terminal what a running vtop
// sees: it turns successive reports into alerts posted to an Alertmanager
// (Alertmanager), runs a command per state change (Hook) and decides when
// the dashboard rings the bell (Bell).
//
// The translation from reports to alerts and changes is pure (Changes,
// Tracker); the posting and the commands run on goroutines of their own,
// so that nothing here ever delays a report or a frame: a slow
// Alertmanager or a hook that hangs costs a count and a notice, never a
// reading.
package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/safetext"
)

// Change is a replica's state change, as a hook receives it on stdin.
type Change struct {
	Time    time.Time      `json:"time"`
	Replica string         `json:"replica"`
	From    analysis.State `json:"from"`
	State   analysis.State `json:"state"`
	// Severity is the alert severity of the new state: critical, warning,
	// or none for a state that is not a problem.
	Severity string `json:"severity"`
	// Text is the change as the event log says it: "FULL: waiting 41, …".
	Text    string   `json:"text"`
	Reasons []string `json:"reasons,omitempty"`
	Action  string   `json:"action,omitempty"`
}

// Changes are the state changes from prev to cur, in cur's order of
// replicas. A replica new in cur has no state to change from, and a
// replica warming up that is then judged fine has not changed (the event
// log says neither, for the same reasons). A replica whose source failed
// keeps a verdict that is not news. A nil prev has no changes.
func Changes(prev, cur *analysis.Report) []Change {
	if prev == nil || cur == nil {
		return nil
	}
	before := make(map[string]analysis.State, len(prev.Replicas))
	for i := range prev.Replicas {
		before[prev.Replicas[i].Target] = prev.Replicas[i].State
	}
	var out []Change
	for i := range cur.Replicas {
		rep := &cur.Replicas[i]
		from, ok := before[rep.Target]
		if !ok || from == rep.State || rep.SourceStale || analysis.FirstJudgmentFine(from, rep.State) {
			continue
		}
		out = append(out, Change{
			Time: cur.Time, Replica: rep.Target, From: from, State: rep.State,
			Severity: Severity(rep.State), Text: stateText(rep),
			Reasons: rep.Reasons, Action: rep.Action,
		})
	}
	return out
}

// stateText is the state and its first reason, as the event log writes a
// state change.
func stateText(rep *analysis.ReplicaReport) string {
	text := strings.ToUpper(rep.State.String())
	if len(rep.Reasons) > 0 {
		text += ": " + rep.Reasons[0]
	}
	return text
}

// Severities of the alerts. A replica that serves nobody (DOWN), or that
// needs more capacity now (FULL, PREEMPTING), pages; one that is slow or
// whose exporter is stuck is a ticket.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
	SeverityNone     = "none"
)

// Severity is the severity of an alert for state s: SeverityNone for the
// states that are not problems (HEALTHY, IDLE, SLEEPING, WARMING,
// UNJUDGED), which raise no alert.
func Severity(s analysis.State) string {
	switch s {
	case analysis.StateDown, analysis.StateStalled, analysis.StatePreempting, analysis.StateFull:
		return SeverityCritical
	case analysis.StateSlow, analysis.StateStale:
		return SeverityWarning
	}
	return SeverityNone
}

// Alerting reports whether state s raises an alert.
func Alerting(s analysis.State) bool { return Severity(s) != SeverityNone }

// AlertName is the alertname of the alert for state s: VtopDown, VtopFull,
// … — the names of the alerting rules `vtop rules` writes, so that routes
// and silences match either source of the same alert.
func AlertName(s analysis.State) string {
	name := s.String()
	if name == "" {
		return "Vtop"
	}
	return "Vtop" + strings.ToUpper(name[:1]) + name[1:]
}

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
