package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A change of state is one event, not a state event plus a threshold
// crossing that says the same thing one reading earlier ("p99 TTFT 3s over
// the 1s SLO", then "SLOW: p99 TTFT 3s over the 1s SLO"). A crossing that
// is news — the state holds, or the change is about something else — is
// still an event.
func TestOneEventPerStateChange(t *testing.T) {
	slowTTFT := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 3, itl: 0.027, e2e: 11}
	slowITL := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 0.5, itl: 0.3, e2e: 90}
	slowBoth := slowITL
	slowBoth.ttft = 3
	tests := []struct {
		name   string
		before func(s *server) // each second before the change
		after  func(s *server) // each second after it
		want   []string        // the events, by prefix, in order: the first verdict's, then the change's
	}{
		{"healthy → SLOW by TTFT",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.finish(6, slowTTFT) },
			[]string{"HEALTHY: ", "SLOW: p99 TTFT"}},
		{"healthy → PREEMPTING with the KV cache over 90%", // preemption material at once: 10/s of 6 requests/s
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.97; s.preemptions += 10; s.finish(6, chat) },
			[]string{"HEALTHY: ", "PREEMPTING: "}},
		{"SLOW by ITL stays SLOW as TTFT crosses its SLO: news",
			func(s *server) { s.finish(6, slowITL) },
			func(s *server) { s.finish(6, slowBoth) },
			[]string{"SLOW: p99 ITL", "p99 TTFT"}},
		{"healthy, the KV cache over 90% and no change: news",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.93; s.finish(6, chat) },
			[]string{"HEALTHY: ", "KV cache 93%"}},
		{"healthy → SLOW by TTFT with the KV cache over 90%: another fact",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.93; s.finish(6, slowTTFT) },
			[]string{"HEALTHY: ", "SLOW: p99 TTFT", "KV cache 93%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const change, end = 40, 80
			s := newServer()
			s.running, s.kv = 48, 0.3
			samples, _ := run(s, end, time.Second, func(s *server, i int) {
				if i < change {
					tt.before(s)
				} else {
					tt.after(s)
				}
			})
			var got []string
			var prev *Report
			for i := 1; i <= end; i++ {
				r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "a", Samples: samples[:i+1]}}, DefaultConfig(), prev)
				for _, e := range r.Events {
					got = append(got, e.Text)
				}
				prev = &r
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events %q, want %d starting %q", got, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("event %d = %q, want %q…", i, got[i], want)
				}
			}
		})
	}
}

// The event log tells every change of the state shown from a target's
// first evaluation on: a replica down when vtop starts is an event at
// once, its WARMING when it answers again and its HEALTHY when it settles
// are events too; a replica that vtop starts reading while it is fine
// tells its first verdict once, with no event for the WARMING every
// target starts in.
func TestStateEventsFromTheFirstEvaluation(t *testing.T) {
	const answersFrom, end = 5, 40
	healthy := newServer()
	healthy.running, healthy.kv = 48, 0.3
	back := newServer()
	back.running, back.kv = 48, 0.3
	var a, b []catalogue.Sample
	got := map[string][]string{}
	var prev *Report
	for i := 0; i <= end; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		if i > 0 {
			healthy.finish(6, chat)
			back.finish(6, chat)
		}
		b = append(b, healthy.scrape(at))
		if i < answersFrom {
			a = append(a, catalogue.Sample{Time: at, Err: "dial tcp 10.0.0.7:8000: connect: connection refused"})
		} else {
			a = append(a, back.scrape(at))
		}
		r := Analyze(at, []catalogue.Readings{{Target: "a", Samples: a}, {Target: "b", Samples: b}}, DefaultConfig(), prev)
		for _, e := range r.Events {
			name, _, _ := strings.Cut(e.Text, ":")
			got[e.Target] = append(got[e.Target], name)
		}
		prev = &r
	}
	want := map[string][]string{"a": {"DOWN", "WARMING", "HEALTHY"}, "b": {"HEALTHY"}}
	for _, target := range []string{"a", "b"} {
		if strings.Join(got[target], " ") != strings.Join(want[target], " ") {
			t.Errorf("%s: events %q, want %q", target, got[target], want[target])
		}
	}
}

// byHand is a report at t0+at second with each replica "target=state"
// (a state by name), reasons "because <state>".
func byHand(at int, replicas ...string) *Report {
	r := &Report{Time: t0.Add(time.Duration(at) * time.Second)}
	for _, spec := range replicas {
		target, name, _ := strings.Cut(spec, "=")
		var s State
		if err := s.UnmarshalText([]byte(name)); err != nil {
			panic(err)
		}
		r.Replicas = append(r.Replicas, ReplicaReport{Target: target, State: s, Reasons: []string{"because " + name}})
	}
	return r
}

// The stream of changes: every change of the state shown is one change,
// from the state shown before; a target's first state other than the
// WARMING every target starts in is a change from none, and a target no
// longer read a change to none. Each target's changes are a chain: the
// first from none, each next from where the one before went. Each change
// is an event, with the state's first reason.
func TestChangeStream(t *testing.T) {
	tests := []struct {
		name    string
		reports []*Report
		want    []string // "target from→to", in order
	}{
		{"down at start: a change at the first evaluation", []*Report{
			byHand(0, "a=down", "b=warming"),
		}, []string{"a none→down"}},
		{"down, back, warming, healthy again, then unjudged: every change, in a chain", []*Report{
			byHand(0, "a=down"), byHand(1, "a=down"), byHand(2, "a=warming"), byHand(3, "a=warming"),
			byHand(4, "a=healthy"), byHand(5, "a=unjudged"), byHand(6, "a=healthy"),
		}, []string{"a none→down", "a down→warming", "a warming→healthy", "a healthy→unjudged", "a unjudged→healthy"}},
		{"warming at start is no news: the first verdict is the first change, from none", []*Report{
			byHand(0, "a=warming", "b=warming"), byHand(1, "a=warming", "b=warming"),
			byHand(2, "a=healthy", "b=warming"), byHand(3, "a=unjudged", "b=idle"),
		}, []string{"a none→healthy", "a healthy→unjudged", "b none→idle"}},
		{"warming again after a verdict (a restart) is told, and so is what it settles in", []*Report{
			byHand(0, "a=healthy"), byHand(1, "a=warming"), byHand(2, "a=healthy"),
		}, []string{"a none→healthy", "a healthy→warming", "a warming→healthy"}},
		{"a target new in the fleet starts its own chain", []*Report{
			byHand(0, "a=healthy"), byHand(1, "a=healthy", "b=full"),
		}, []string{"a none→healthy", "b none→full"}},
		{"a target no longer read leaves, to none; one that told nothing leaves quietly", []*Report{
			byHand(0, "a=down", "b=full", "c=warming"), byHand(1, "b=full"),
		}, []string{"a none→down", "b none→full", "a down→none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var prev *Report
			last := map[string]string{}
			for _, r := range tt.reports {
				r.FollowChanges(prev)
				var states []string
				for _, c := range r.Changes {
					got = append(got, c.Target+" "+c.FromName()+"→"+c.ToName())
					if !c.Time.Equal(r.Time) {
						t.Errorf("change at %s in the report of %s", c.Time, r.Time)
					}
					if from, ok := last[c.Target]; ok != !c.First || (ok && from != c.FromName()) {
						t.Errorf("%s: from %s (first %v), but the chain was at %q", c.Target, c.FromName(), c.First, from)
					}
					last[c.Target] = c.ToName()
					states = append(states, c.Text)
				}
				var events []string
				for _, e := range r.Events {
					events = append(events, e.Text)
				}
				if strings.Join(events, "\n") != strings.Join(states, "\n") {
					t.Errorf("events %q, want one per change %q", events, states)
				}
				prev = r
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("changes\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
