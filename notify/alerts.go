package notify

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// Alert is one alert as Alertmanager's v2 API takes it (POST
// /api/v2/alerts). Its labels identify it: a replica that goes from FULL
// to PREEMPTING resolves one alert and fires another.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

// key is the alert's identity: its labels, in order.
func (a Alert) key() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(a.Labels)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(a.Labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// lifetimes is how many re-send intervals ahead a firing alert's endsAt
// lies, as Prometheus sets it: three posts in a row may be lost, and the
// alerts of a vtop that stopped resolve on their own.
const lifetimes = 4

// Tracker turns successive reports, every one in order through Update,
// into the alerts to post, from each report's state changes: an alert
// fires when a replica changes into a problem state, its first state
// included, is sent again every resend interval while the replica stays
// in it, endsAt further ahead each time, and is resolved (endsAt = the
// report's time) when the replica changes out of it or leaves. It reads
// the reports' times, never a clock.
type Tracker struct {
	resend time.Duration
	firing map[string]*firing // by replica
}

// firing is the alert a replica has raised and not resolved.
type firing struct {
	alert    Alert
	lastSent time.Time
}

// NewTracker returns a tracker that re-sends firing alerts every resend
// (positive: --alertmanager-resend is at least a second).
func NewTracker(resend time.Duration) *Tracker {
	return &Tracker{resend: resend, firing: map[string]*firing{}}
}

// Update returns the alerts to post after report r: resolutions first,
// then the alerts that fire or are due to be sent again. A replica whose
// source failed (its verdict is from before the failure) is not sent
// again: vtop does not know whether it lasts, and Alertmanager resolves
// its alert at its endsAt if the source stays down.
func (t *Tracker) Update(r *analysis.Report) []Alert {
	var resolved, firingNow []Alert
	index := replicaIndex(r)
	fired := make(map[string]bool, len(r.Changes))
	for _, c := range r.Changes {
		if f := t.firing[c.Target]; f != nil {
			resolved = append(resolved, f.resolve(r.Time))
			delete(t.firing, c.Target)
		}
		rep := index[c.Target]
		if c.Left || rep == nil || !Alerting(c.To) {
			continue
		}
		f := &firing{alert: Alert{Labels: labels(rep), StartsAt: r.Time}}
		t.firing[c.Target] = f
		fired[c.Target] = true
		firingNow = append(firingNow, f.send(rep, r.Time, t.resend))
	}
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		f := t.firing[rep.Target]
		if f == nil || fired[rep.Target] || rep.SourceStale || r.Time.Sub(f.lastSent) < t.resend {
			continue
		}
		firingNow = append(firingNow, f.send(rep, r.Time, t.resend))
	}
	return append(resolved, firingNow...)
}

// send is f's alert as sent at now: rep's newest reasons, endsAt lifetimes
// re-sends ahead.
func (f *firing) send(rep *analysis.ReplicaReport, now time.Time, resend time.Duration) Alert {
	f.alert.Annotations = annotations(rep)
	f.alert.EndsAt = now.Add(lifetimes * resend)
	f.lastSent = now
	return f.alert
}

// resolve is the alert that ends f at now.
func (f *firing) resolve(now time.Time) Alert {
	a := f.alert
	a.EndsAt = now
	return a
}

// labels identify a replica's alert: alertname, replica, state, severity.
func labels(rep *analysis.ReplicaReport) map[string]string {
	alert, _ := analysis.AlertOf(rep.State)
	return map[string]string{
		"alertname": alert.Name,
		"replica":   rep.Target,
		"state":     strings.ToUpper(rep.State.String()),
		"severity":  Severity(rep.State),
	}
}

// annotations say why and what to do: the state's first reason, every
// reason, the first action. Alertmanager keeps the latest received, so a
// re-send carries today's numbers.
func annotations(rep *analysis.ReplicaReport) map[string]string {
	a := map[string]string{"summary": rep.Target + " " + analysis.StateText(rep)}
	if len(rep.Reasons) > 0 {
		a["description"] = strings.Join(rep.Reasons, "; ")
	}
	if rep.Action != "" {
		a["action"] = rep.Action
	}
	return a
}
