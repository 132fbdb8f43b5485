package notify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

var t0 = time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)

// report is a report at t0+at with each replica "target=state" (state by
// name; "target=state!" marks its source stale).
func report(at time.Duration, replicas ...string) *analysis.Report {
	r := &analysis.Report{Time: t0.Add(at)}
	for _, spec := range replicas {
		target, name, _ := strings.Cut(spec, "=")
		stale := strings.HasSuffix(name, "!")
		var s analysis.State
		if err := s.UnmarshalText([]byte(strings.TrimSuffix(name, "!"))); err != nil {
			panic(err)
		}
		r.Replicas = append(r.Replicas, analysis.ReplicaReport{Target: target, State: s, Reasons: []string{"because " + strings.TrimSuffix(name, "!")}, Action: "act on " + name, SourceStale: stale})
	}
	return r
}

// followed is r given its stream of changes from prev (nil: r is the
// first report).
func followed(prev, r *analysis.Report) *analysis.Report {
	r.FollowChanges(prev)
	return r
}

// sent writes alerts as "alertname replica state severity start→end" (times
// as offsets from t0), one per alert, in order.
func sent(alerts []Alert) []string {
	var out []string
	for _, a := range alerts {
		l := a.Labels
		out = append(out, fmt.Sprintf("%s %s %s %s %s→%s", l["alertname"], l["replica"], l["state"], l["severity"],
			a.StartsAt.Sub(t0), a.EndsAt.Sub(t0)))
	}
	return out
}

func TestTrackerFiresResendsAndResolves(t *testing.T) {
	type step struct {
		report *analysis.Report
		want   []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a problem fires with endsAt four re-sends ahead, is quiet within the re-send interval, is sent again after it with startsAt kept", []step{
			{report(0, "a=healthy"), nil},
			{report(time.Second, "a=full"), []string{"VtopFull a FULL critical 1s→4m1s"}},
			{report(30*time.Second, "a=full"), nil},
			{report(61*time.Second, "a=full"), []string{"VtopFull a FULL critical 1s→5m1s"}},
		}},
		{"leaving the state resolves the alert at the report's time", []step{
			{report(0, "a=down"), []string{"VtopDown a DOWN critical 0s→4m0s"}},
			{report(5*time.Second, "a=warming"), []string{"VtopDown a DOWN critical 0s→5s"}},
			{report(70*time.Second, "a=healthy"), nil},
		}},
		{"a change between problems resolves one alert and fires the other, resolution first", []step{
			{report(0, "a=full"), []string{"VtopFull a FULL critical 0s→4m0s"}},
			{report(2*time.Second, "a=preempting"), []string{"VtopFull a FULL critical 0s→2s", "VtopPreempting a PREEMPTING critical 2s→4m2s"}},
		}},
		{"warnings: SLOW and STALE", []step{
			{report(0, "a=slow", "b=stale", "c=idle", "d=sleeping", "e=unjudged"), []string{"VtopSlow a SLOW warning 0s→4m0s", "VtopStale b STALE warning 0s→4m0s"}},
		}},
		{"a replica gone from the fleet is resolved", []step{
			{report(0, "a=full", "b=down"), []string{"VtopFull a FULL critical 0s→4m0s", "VtopDown b DOWN critical 0s→4m0s"}},
			{report(time.Second, "a=full"), []string{"VtopDown b DOWN critical 0s→1s"}},
		}},
		{"a replica whose source failed is not sent again", []step{
			{report(0, "a=full"), []string{"VtopFull a FULL critical 0s→4m0s"}},
			{report(90*time.Second, "a=full!"), nil},
			{report(100*time.Second, "a=full"), []string{"VtopFull a FULL critical 0s→5m40s"}},
		}},
		{"a replica whose source failed changes as the stream says: shown, so told", []step{
			{report(0, "a=full"), []string{"VtopFull a FULL critical 0s→4m0s"}},
			{report(90*time.Second, "a=healthy!"), []string{"VtopFull a FULL critical 0s→1m30s"}},
		}},
		{"a replica warming at start raises nothing, then fires at its first verdict", []step{
			{report(0, "a=warming"), nil},
			{report(time.Second, "a=down"), []string{"VtopDown a DOWN critical 1s→4m1s"}},
		}},
		{"the alert fires again after a resolution, with a new startsAt", []step{
			{report(0, "a=down"), []string{"VtopDown a DOWN critical 0s→4m0s"}},
			{report(time.Second, "a=healthy"), []string{"VtopDown a DOWN critical 0s→1s"}},
			{report(2*time.Second, "a=down"), []string{"VtopDown a DOWN critical 2s→4m2s"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker(time.Minute)
			var prev *analysis.Report
			for i, s := range tt.steps {
				s.report.FollowChanges(prev)
				prev = s.report
				got := sent(tr.Update(s.report))
				if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
					t.Errorf("step %d: sent\n  %s\nwant\n  %s", i, strings.Join(got, "\n  "), strings.Join(s.want, "\n  "))
				}
			}
		})
	}
}

func TestTrackerAnnotationsCarryTheNewestReasons(t *testing.T) {
	tr := NewTracker(time.Minute)
	r := report(0, "gpu-a:8000=full")
	r.Replicas[0].Reasons = []string{"waiting 41 in each of 3 readings", "running 256 (the most seen)"}
	r.Replicas[0].Action = "add replicas"
	r.FollowChanges(nil)
	a := tr.Update(r)[0]
	want := map[string]string{
		"summary":     "gpu-a:8000 FULL: waiting 41 in each of 3 readings",
		"description": "waiting 41 in each of 3 readings; running 256 (the most seen)",
		"action":      "add replicas",
	}
	for k, v := range want {
		if a.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, a.Annotations[k], v)
		}
	}
	prev := r
	r = report(time.Minute, "gpu-a:8000=full")
	r.Replicas[0].Reasons = []string{"waiting 95 in each of 3 readings"}
	r.FollowChanges(prev)
	if got := tr.Update(r)[0].Annotations["summary"]; got != "gpu-a:8000 FULL: waiting 95 in each of 3 readings" {
		t.Errorf("re-sent summary = %q, want the newest reason", got)
	}
}

// A hook gets the report's stream of changes: from none at a replica's
// first, to none when it is no longer read, with the severity, reasons
// and action of the state it changed to.
func TestChanges(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur *analysis.Report
		want      []string // "replica from→state severity text | action"
	}{
		{"a replica's first state, down at start", nil, report(0, "a=down", "b=warming"),
			[]string{"a none→down critical DOWN: because down | act on down"}},
		{"a state change, with the severity of the new state", report(0, "a=healthy", "b=full"), report(time.Second, "a=full", "b=healthy"),
			[]string{"a healthy→full critical FULL: because full | act on full", "b full→healthy none HEALTHY: because healthy | act on healthy"}},
		{"the first verdict after warming at start, fine", report(0, "a=warming", "b=warming"), report(time.Second, "a=healthy", "b=warming"),
			[]string{"a none→healthy none HEALTHY: because healthy | act on healthy"}},
		{"a replica no longer read", report(0, "a=healthy", "b=down"), report(time.Second, "a=healthy"),
			[]string{"b down→none none no longer among the targets read | "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.prev != nil {
				tt.prev.FollowChanges(nil)
			}
			tt.cur.FollowChanges(tt.prev)
			var got []string
			for _, c := range Changes(tt.cur) {
				if !c.Time.Equal(tt.cur.Time) {
					t.Errorf("change at %s, want the report's time %s", c.Time, tt.cur.Time)
				}
				got = append(got, fmt.Sprintf("%s %s→%s %s %s | %s", c.Replica, c.From, c.State, c.Severity, c.Text, c.Action))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
