package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/notify"
)

// TestOneStreamFeedsEveryOutput runs reports through the stream of state
// changes and through every output that tells of them, as a watching vtop
// does: the event log (the report's events), the hook (--on-change, a
// real command), the bell (--bell) and the alerts (--alertmanager's
// tracker). Each gets the same changes: a replica down at start reaches
// all of them, the hook sees every change (the return to HEALTHY after
// DOWN → WARMING included) in a chain from none, the bell rings for the
// changes into its states, and an alert fires for each change into a
// problem state and is resolved by the change out of it.
func TestOneStreamFeedsEveryOutput(t *testing.T) {
	type step struct {
		replicas []string // "target=state"
		want     []string // the changes, "target from→to", in order
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"down at start, back through warming to healthy, unjudged, healthy", []step{
			{[]string{"a=down", "b=warming"}, []string{"a none→down"}},
			{[]string{"a=down", "b=warming"}, nil},
			{[]string{"a=warming", "b=warming"}, []string{"a down→warming"}},
			{[]string{"a=warming", "b=healthy"}, []string{"b none→healthy"}},
			{[]string{"a=healthy", "b=healthy"}, []string{"a warming→healthy"}},
			{[]string{"a=unjudged", "b=healthy"}, []string{"a healthy→unjudged"}},
			{[]string{"a=healthy", "b=healthy"}, []string{"a unjudged→healthy"}},
		}},
		{"problems at start, between problems, and a replica that leaves", []step{
			{[]string{"a=full", "b=slow", "c=stale"}, []string{"a none→full", "b none→slow", "c none→stale"}},
			{[]string{"a=preempting", "b=slow", "c=stale"}, []string{"a full→preempting"}},
			{[]string{"a=full", "b=healthy"}, []string{"a preempting→full", "b slow→healthy", "c stale→none"}},
			{[]string{"a=idle", "b=down"}, []string{"a full→idle", "b healthy→down"}},
		}},
	}
	bell := []analysis.State{analysis.StateDown, analysis.StateFull, analysis.StateHealthy}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("DIR", dir)
			flags := notifyFlags{
				OnChange: `cat > "$(mktemp "$DIR/change-XXXXXX")"`, OnChangeTimeout: 10 * time.Second, OnChangePerMinute: 1000,
				Bell: "down,full,healthy",
			}
			var mu sync.Mutex
			var said []string
			n, err := flags.startNotifier(context.Background(), func(s string) { mu.Lock(); defer mu.Unlock(); said = append(said, s) })
			if err != nil {
				t.Fatal(err)
			}
			var alerts []notify.Alert
			n.tracker, n.post = notify.NewTracker(time.Hour), func(a []notify.Alert) { alerts = append(alerts, a...) }

			var prev *analysis.Report
			chains := map[string][]string{}
			start := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
			for i, s := range tt.steps {
				r := &analysis.Report{Time: start.Add(time.Duration(i) * time.Second)}
				for _, spec := range s.replicas {
					target, name, _ := strings.Cut(spec, "=")
					var st analysis.State
					if err := st.UnmarshalText([]byte(name)); err != nil {
						t.Fatal(err)
					}
					r.Replicas = append(r.Replicas, analysis.ReplicaReport{Target: target, State: st, Reasons: []string{"because " + name}})
				}
				r.FollowChanges(prev)
				prev = r

				// The event log: one event per change, in order.
				var events, wantEvents []string
				for _, e := range r.Events {
					events = append(events, e.Target+" "+strings.ToLower(strings.SplitN(e.Text, ":", 2)[0]))
				}
				wantRing := false
				var wantAlerts []string
				for _, c := range s.want {
					target, fromTo, _ := strings.Cut(c, " ")
					from, to, _ := strings.Cut(fromTo, "→")
					chains[target] = append(chains[target], fromTo)
					text := to
					if to == analysis.NoState {
						text = "no longer among the targets read"
					}
					wantEvents = append(wantEvents, target+" "+text)
					var st analysis.State
					if st.UnmarshalText([]byte(to)) == nil && slices.Contains(bell, st) {
						wantRing = true
					}
					if st.UnmarshalText([]byte(from)) == nil && notify.Alerting(st) {
						wantAlerts = append(wantAlerts, "resolved "+target+" "+from)
					}
				}
				for _, c := range s.want { // resolutions first, then what fires
					target, fromTo, _ := strings.Cut(c, " ")
					_, to, _ := strings.Cut(fromTo, "→")
					var st analysis.State
					if st.UnmarshalText([]byte(to)) == nil && notify.Alerting(st) {
						wantAlerts = append(wantAlerts, "fired "+target+" "+to)
					}
				}
				if strings.Join(events, ", ") != strings.Join(wantEvents, ", ") {
					t.Errorf("report %d: events %q, want %q", i, events, wantEvents)
				}

				alerts = nil
				if ring := n.observe(*r); ring != wantRing {
					t.Errorf("report %d: bell %v, want %v (changes %q)", i, ring, wantRing, s.want)
				}
				n.hook.Wait() // this report's runs done: no run is refused for the runs under way
				var got []string
				for _, a := range alerts {
					how := "fired"
					if !a.EndsAt.After(r.Time) {
						how = "resolved"
					}
					got = append(got, how+" "+a.Labels["replica"]+" "+strings.ToLower(a.Labels["state"]))
				}
				if strings.Join(got, ", ") != strings.Join(wantAlerts, ", ") {
					t.Errorf("report %d: alerts %q, want %q", i, got, wantAlerts)
				}
			}
			n.stop()
			mu.Lock()
			defer mu.Unlock()
			if len(said) > 0 {
				t.Errorf("said %q", said)
			}

			// The hook: every change, each replica's in a chain from none.
			runs, _ := filepath.Glob(filepath.Join(dir, "change-*"))
			type run struct {
				at  time.Time
				got string
			}
			hooked := map[string][]run{}
			for _, path := range runs {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var c notify.Change
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				hooked[c.Replica] = append(hooked[c.Replica], run{c.Time, c.From + "→" + c.State})
			}
			for target, want := range chains {
				rs := hooked[target]
				slices.SortFunc(rs, func(a, b run) int { return a.at.Compare(b.at) })
				var got []string
				for _, r := range rs {
					got = append(got, r.got)
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("the hook got %s %q, want %q", target, got, want)
				}
			}
			if len(hooked) != len(chains) {
				t.Errorf("the hook ran for %d replicas, want %d", len(hooked), len(chains))
			}
		})
	}
}
