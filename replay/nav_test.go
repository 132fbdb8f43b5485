package replay

import (
	"fmt"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
)

// navStretch is a synthetic stretch of 24 reports over 12 replicas, where
// the fleet's picture changes rarely but some replica changes state in
// every report: "flip" goes HEALTHY, IDLE, HEALTHY… throughout (another
// replica is IDLE all along, so the worst state stays), "flap" goes
// SLOW, FULL, SLOW… from report 10 on. The incident: r1 FULL from 10
// (with flap, 2 replicas ask for action), r2 from 11 and r3 from 12 (3,
// 4: the same step, 2–4), r4 and r5 from 15 (6: the step 5–9), all
// recover at 20, flap too.
func navStretch() *ahead {
	const reports = 24
	a := &ahead{ticks: make([]record.Tick, reports), every: minCheckpointEvery, column: map[string]int{}}
	fullFrom := map[string]int{"r1": 10, "r2": 11, "r3": 12, "r4": 15, "r5": 15}
	for n := range reports {
		r := &analysis.Report{Time: time.Unix(int64(n), 0)}
		add := func(target string, s analysis.State) {
			r.Replicas = append(r.Replicas, analysis.ReplicaReport{Target: target, State: s})
		}
		add("idle", analysis.StateIdle)
		add("flip", []analysis.State{analysis.StateHealthy, analysis.StateIdle}[n%2])
		switch {
		case n >= 10 && n < 20:
			add("flap", []analysis.State{analysis.StateSlow, analysis.StateFull}[n%2])
		default:
			add("flap", analysis.StateHealthy)
		}
		for k := 1; k <= 9; k++ {
			target := fmt.Sprintf("r%d", k)
			if from, ok := fullFrom[target]; ok && n >= from && n < 20 {
				add(target, analysis.StateFull)
			} else {
				add(target, analysis.StateHealthy)
			}
		}
		a.keep(n, r)
	}
	return a
}

// n and N move by the fleet's picture, not by every replica's state: in
// a stretch where a replica flips every report, they stop where the
// incident begins, grows a step and ends; in a replica's detail, by that
// replica's state.
func TestNextAndPreviousChange(t *testing.T) {
	a := navStretch()
	walk := func(target string, from int, step func(int, string) int) []int {
		var got []int
		for i := step(from, target); i >= 0; i = step(i, target) {
			got = append(got, i)
		}
		return got
	}
	cases := []struct {
		name    string
		target  string
		forward bool
		from    int
		want    []int
	}{
		{"the fleet, forward", "", true, 0, []int{10, 15, 20}},
		{"the fleet, back from the end", "", false, 23, []int{20, 15, 10}},
		{"the fleet, forward from inside the incident", "", true, 12, []int{15, 20}},
		{"r1, forward", "r1", true, 0, []int{10, 20}},
		{"r5, back", "r5", false, 23, []int{20, 15}},
		{"flip changes every report", "flip", true, 0, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"a replica never seen", "nobody", true, 0, nil},
	}
	for _, c := range cases {
		step := a.prevChange
		if c.forward {
			step = a.nextChange
		}
		got := walk(c.target, c.from, step)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: stops at %v, want %v", c.name, got, c.want)
		}
	}
}
