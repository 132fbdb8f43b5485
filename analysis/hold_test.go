package analysis

import (
	"math"
	"strings"
	"testing"
)

// atCapacityFleet is ten replicas up, full of them FULL and settled at a
// capacity of 10 successful req/s with 50 waiting each, the queue growing
// by growth a second (its newest readings show it); the demand, demand req/s, spread over the ten.
func atCapacityFleet(full int, demand, growth float64) []*ReplicaReport {
	reps := make([]*ReplicaReport, 10)
	for i := range reps {
		r := &ReplicaReport{Target: "r", State: StateHealthy, Samples: 30, Figures: naFigures()}
		r.ArrivalsPerSecond, r.RequestsPerSecond, r.FinishedPerSecond.Stop = Num(demand/10), Num(demand/10), Num(demand/10)
		r.Waiting, r.WaitingGrowth = 0, 0
		if i < full {
			r.State, r.AtCapacity, r.AtCapacitySeconds, r.CapacitySettled = StateFull, true, 30, true
			r.CapacityPerSecond, r.ArrivalsAtCapacity, r.WaitingGrowthAtCapacity = 10, Num(demand/10), Num(growth/float64(full))
			r.Waiting, r.WaitingGrowth = 50, Num(growth/float64(full))
			r.trailQueue = queueShowing(50, growth)
		}
		reps[i] = r
	}
	return reps
}

// TestAdviceHeldWithinNoise: the count and the action change when their
// inputs move beyond their noise, not on every reading. A count within
// adviceCountNoise of the one shown (10 % of it, at least one replica),
// or another action while replicas are FULL, is shown only once the
// inputs have said it on adviceHold evaluations in a row; while it is
// held the advice says what the inputs say now. A count beyond the noise,
// and the first count, are shown at once.
func TestAdviceHeldWithinNoise(t *testing.T) {
	type step struct {
		full           int
		demand, growth float64
		wantAction     string
		wantN          float64
		wantPending    string // in the summary while held; "" none
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a count one replica off is held until it persists", []step{
			{10, 150, 5, "add", 16, ""},
			{10, 160, 5, "add", 16, "the inputs now say add 7 → 17 (1 of 3 evaluations)"},
			{10, 150, 5, "add", 16, ""},
			{10, 160, 5, "add", 16, "(1 of 3 evaluations)"},
			{10, 160, 5, "add", 16, "(2 of 3 evaluations)"},
			{10, 160, 5, "add", 17, ""},
		}},
		{"a count beyond the noise is shown at once", []step{
			{10, 150, 5, "add", 16, ""},
			{10, 200, 5, "add", 21, ""},
			{10, 300, 5, "add", 31, ""},
			{10, 280, 5, "add", 31, "add 19 → 29 (1 of 3"},
		}},
		{"spread the load ↔ add 1 is held", []step{
			{3, 90, 0.5, "rebalance", 10, ""},
			{3, 101, 0.5, "rebalance", 10, "the inputs now say add 1 → 11 (1 of 3 evaluations)"},
			{3, 90, 0.5, "rebalance", 10, ""},
		}},
		{"spread the load ↔ no replica to add is held", []step{
			{3, 90, 0, "rebalance", 10, ""},
			{3, 90, -3, "rebalance", 10, "the inputs now say no replica to add (1 of 3 evaluations)"},
			{3, 90, -3, "rebalance", 10, "(2 of 3 evaluations)"},
			{3, 90, -3, "drain", 10, ""},
		}},
		{"keep to a FULL action at once: never keep beside a FULL pane", []step{
			{0, 90, 0, "keep", 10, ""},
			{3, 90, 0.5, "rebalance", 10, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prev *Advice
			for i, st := range tt.steps {
				a := advice(atCapacityFleet(st.full, st.demand, st.growth), 0, DefaultConfig(), t0, prev)
				summary := strings.Join(a.Summary, "\n")
				if a.Action != st.wantAction || !sameFloat(a.RecommendedReplicas.Float(), st.wantN) {
					t.Errorf("step %d: %s → %v, want %s → %v: %q", i, a.Action, a.RecommendedReplicas, st.wantAction, st.wantN, summary)
				}
				held := strings.Contains(summary, "held: ")
				if st.wantPending == "" && held || st.wantPending != "" && !strings.Contains(summary, st.wantPending) {
					t.Errorf("step %d: summary %q, want pending %q", i, summary, st.wantPending)
				}
				if a.Summary[0] != a.Recommendation {
					t.Errorf("step %d: the summary leads with the recommendation: %q", i, a.Summary)
				}
				if a.Action == "add" && !sameFloat(a.Add.Float(), a.RecommendedReplicas.Float()-10) || a.Action != "add" && !math.IsNaN(a.Add.Float()) {
					t.Errorf("step %d: add %v beside %s → %v", i, a.Add, a.Action, a.RecommendedReplicas)
				}
				prev = &a
			}
		})
	}
}

// TestAdviceNeverKeepsBesideAQueue: a queue longer than the target queue
// time's worth of arrivals (Little's law) is not a fleet to keep, FULL or
// not: while the replicas are WARMING and none is FULL yet, the advice
// says there is none yet, and why.
func TestAdviceNeverKeepsBesideAQueue(t *testing.T) {
	reps := make([]*ReplicaReport, 6)
	for i := range reps {
		r := &ReplicaReport{Target: "r", State: StateWarming, Samples: 3, Figures: naFigures()}
		r.ArrivalsPerSecond, r.RequestsPerSecond, r.FinishedPerSecond.Stop = 10, 10, 10
		r.Waiting, r.WaitingGrowth = 225, 0
		reps[i] = r
	}
	a := advice(reps, 0, DefaultConfig(), t0, nil)
	if a.Action == "keep" || !strings.HasPrefix(a.Recommendation, "no advice yet: 1,350 waiting") || !strings.Contains(a.Recommendation, "6 WARMING") {
		t.Errorf("%s: %q", a.Action, a.Recommendation)
	}
	// A queue within the target queue time is no reason not to keep.
	for _, r := range reps {
		r.State, r.Waiting = StateHealthy, 5
	}
	if a := advice(reps, 0, DefaultConfig(), t0, nil); a.Action != "keep" {
		t.Errorf("30 waiting at 60 req/s: %s: %q", a.Action, a.Recommendation)
	}
	// Nor is a handful caught between two steps at a quiet replica: fewer
	// than a FULL replica's obvious queue on each.
	quiet := &ReplicaReport{Target: "r", State: StateHealthy, Samples: 30, Figures: naFigures()}
	quiet.ArrivalsPerSecond, quiet.RequestsPerSecond, quiet.FinishedPerSecond.Stop, quiet.Waiting, quiet.WaitingGrowth = 2, 2, 2, 6, 0
	if a := advice([]*ReplicaReport{quiet}, 0, DefaultConfig(), t0, nil); a.Action != "keep" {
		t.Errorf("6 waiting at 2 req/s: %s: %q", a.Action, a.Recommendation)
	}
}
