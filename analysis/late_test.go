package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// timedOut is a scrape that got no answer within the scrape timeout, as
// the scraper words and marks it.
func timedOut(at time.Time) catalogue.Sample {
	return catalogue.Sample{Time: at, Err: "no answer within 800ms", TimedOut: true}
}

// refused is a scrape whose connection was refused: no process listens.
func refused(at time.Time) catalogue.Sample {
	return catalogue.Sample{Time: at, Err: "connection refused"}
}

// A late answer does not prove a replica down; a refused connection does.
// A run of timeouts is shown late, the replica keeping its last verdict
// and figures, until it repeats lateScrapes times; any other failure is
// DOWN at once, and so is a timeout that follows one.
func TestATimeoutIsDownOnlyWhenItRepeats(t *testing.T) {
	tests := []struct {
		name     string
		failures []func(time.Time) catalogue.Sample
		// want is the state of each evaluation, and late whether it is
		// marked late.
		want []State
		late []bool
	}{
		{"timeouts: late, then DOWN when they repeat",
			repeatFailure(timedOut, lateScrapes+1),
			append(repeatState(StateHealthy, lateScrapes-1), StateDown, StateDown),
			append(repeatBool(true, lateScrapes-1), false, false)},
		{"a refused connection: DOWN at once",
			repeatFailure(refused, 2), []State{StateDown, StateDown}, []bool{false, false}},
		{"a timeout after a refusal: still DOWN",
			[]func(time.Time) catalogue.Sample{refused, timedOut}, []State{StateDown, StateDown}, []bool{false, false}},
		{"a refusal after a timeout: DOWN at once",
			[]func(time.Time) catalogue.Sample{timedOut, refused}, []State{StateHealthy, StateDown}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, last := steadyChat()
			cfg := DefaultConfig()
			first := Analyze(last, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, nil)
			if s := first.Replicas[0].State; s != StateHealthy {
				t.Fatalf("before the failures: %s, want healthy", s)
			}
			prev := &first
			for i, fail := range tt.failures {
				at := last.Add(time.Duration(i+1) * time.Second)
				samples = append(samples, fail(at))
				r := Analyze(at, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, prev)
				rep := r.Replicas[0]
				if rep.State != tt.want[i] || rep.Late != tt.late[i] {
					t.Fatalf("failure %d (%s): %s, late %v; want %s, late %v (reasons %q)",
						i+1, samples[len(samples)-1].Err, rep.State, rep.Late, tt.want[i], tt.late[i], rep.Reasons)
				}
				if rep.Late && (r.Fleet.Down != 0 || r.Fleet.Late != 1 || r.Fleet.Advice.Uncounted != 0) {
					t.Errorf("failure %d: the fleet counts down %d, late %d, uncounted %d; want 0, 1, 0",
						i+1, r.Fleet.Down, r.Fleet.Late, r.Fleet.Advice.Uncounted)
				}
				prev = &r
			}
		})
	}
}

// A late replica keeps the figures and the verdict of its last good
// evaluation, and says so: how long it has been late and whose figures
// these are.
func TestALateReplicaKeepsItsLastFigures(t *testing.T) {
	samples, last := steadyChat()
	cfg := DefaultConfig()
	first := Analyze(last, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, nil)
	good := first.Replicas[0]
	samples = append(samples, timedOut(last.Add(time.Second)))
	r := Analyze(last.Add(time.Second), []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, &first).Replicas[0]
	if r.TTFT.P99 != good.TTFT.P99 || r.RequestsPerSecond != good.RequestsPerSecond || r.Running != good.Running ||
		r.Action != good.Action || strings.Join(r.Reasons, "|") != strings.Join(good.Reasons, "|") {
		t.Errorf("late: p99 %v, %v req/s, running %v, reasons %q; want the last evaluation's %v, %v, %v, %q",
			r.TTFT.P99, r.RequestsPerSecond, r.Running, r.Reasons, good.TTFT.P99, good.RequestsPerSecond, good.Running, good.Reasons)
	}
	if want := "late: no answer within 800ms (1 in a row); figures of 14:00:30"; LateNote(&r) != want {
		t.Errorf("late note %q, want %q", LateNote(&r), want)
	}
	if r.Error != "no answer within 800ms" {
		t.Errorf("error %q, want the scrape's", r.Error)
	}
	if LateNote(&good) != "" {
		t.Errorf("a replica that answered has a late note: %q", LateNote(&good))
	}
}

// A target whose first scrape times out has no verdict to keep: it is
// WARMING, not DOWN, until the timeouts repeat.
func TestAFirstScrapeThatTimesOutIsNotDown(t *testing.T) {
	cfg := DefaultConfig()
	var prev *Report
	var samples []catalogue.Sample
	for i := range lateScrapes {
		at := t0.Add(time.Duration(i) * time.Second)
		samples = append(samples, timedOut(at))
		r := Analyze(at, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, prev)
		want := StateWarming
		if i == lateScrapes-1 {
			want = StateDown
		}
		if got := r.Replicas[0].State; got != want {
			t.Fatalf("timeout %d with no answer ever: %s, want %s (reasons %q)", i+1, got, want, r.Replicas[0].Reasons)
		}
		prev = &r
	}
}

// When most targets time out in the same round, the failure is likely
// vtop's (its host, its network): the header says so, and none of them is
// counted down however long it lasts. Fewer than half, or a fleet too
// small to tell, is each target's own timeouts.
func TestMostTargetsTimingOutAtOnce(t *testing.T) {
	tests := []struct {
		name            string
		targets, failed int
		rounds          int
		wantNotice      string // "" for none
		wantDown        int    // after the rounds
	}{
		{"4 of 6 for one round", 6, 4, 1, "4 of 6 targets at once: no answer within 800ms; likely this host or its network, not the replicas", 0},
		{"4 of 6 for longer than a replica's own timeouts", 6, 4, lateScrapes + 2, "4 of 6 targets at once", 0},
		{"3 of 6: half is not most", 6, 3, lateScrapes, "", 3},
		{"3 of 3: too few targets to tell", 3, 3, lateScrapes, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			readings := make([]catalogue.Readings, tt.targets)
			var last time.Time
			for i := range readings {
				var samples []catalogue.Sample
				samples, last = steadyChat()
				readings[i] = catalogue.Readings{Target: fmt.Sprintf("gpu-%c:8000", 'a'+i), Samples: samples}
			}
			r := Analyze(last, readings, cfg, nil)
			for round := 1; round <= tt.rounds; round++ {
				at := last.Add(time.Duration(round) * time.Second)
				for i := range readings {
					s := timedOut(at)
					if i >= tt.failed {
						s = newServer().scrape(at)
					}
					readings[i].Samples = append(readings[i].Samples, s)
				}
				next := Analyze(at, readings, cfg, &r)
				r = next
				if tt.wantNotice != "" && !strings.Contains(r.Fleet.LateRound, tt.wantNotice) {
					t.Fatalf("round %d: notice %q, want %q", round, r.Fleet.LateRound, tt.wantNotice)
				}
				if tt.wantNotice == "" && r.Fleet.LateRound != "" {
					t.Fatalf("round %d: notice %q, want none", round, r.Fleet.LateRound)
				}
			}
			if r.Fleet.Down != tt.wantDown || r.Fleet.Advice.Uncounted != tt.wantDown {
				t.Errorf("after %d rounds: down %d, uncounted %d; want %d", tt.rounds, r.Fleet.Down, r.Fleet.Advice.Uncounted, tt.wantDown)
			}
		})
	}
}

func repeatFailure(f func(time.Time) catalogue.Sample, n int) []func(time.Time) catalogue.Sample {
	out := make([]func(time.Time) catalogue.Sample, n)
	for i := range out {
		out[i] = f
	}
	return out
}

func repeatState(s State, n int) []State {
	out := make([]State, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func repeatBool(b bool, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = b
	}
	return out
}
