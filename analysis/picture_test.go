package analysis

import "testing"

func TestPictureOf(t *testing.T) {
	fleet := func(states ...State) *Report {
		r := &Report{}
		for _, s := range states {
			r.Replicas = append(r.Replicas, ReplicaReport{State: s})
		}
		return r
	}
	cases := []struct {
		name string
		r    *Report
		want Picture
	}{
		{"no replica", fleet(), Picture{Worst: StateHealthy}},
		{"all healthy", fleet(StateHealthy, StateIdle), Picture{Worst: StateIdle}},
		{"one full", fleet(StateHealthy, StateFull), Picture{Worst: StateFull, Urgent: 1}},
		{"the urgent states and down count", fleet(StateSlow, StateFull, StatePreempting, StateStalled, StateDown, StateStale, StateRecovering, StateWarming),
			Picture{Worst: StateDown, Urgent: 5, Down: 1}},
	}
	for _, c := range cases {
		if got := PictureOf(c.r); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestPictureChanged(t *testing.T) {
	cases := []struct {
		a, b Picture
		want bool
	}{
		{Picture{StateFull, 30, 0}, Picture{StateFull, 31, 0}, false},   // within 20..49
		{Picture{StateFull, 30, 0}, Picture{StateFull, 49, 0}, false},   // within 20..49
		{Picture{StateFull, 49, 0}, Picture{StateFull, 50, 0}, true},    // crosses 50
		{Picture{StateFull, 19, 0}, Picture{StateFull, 20, 0}, true},    // crosses 20
		{Picture{StateHealthy, 0, 0}, Picture{StateSlow, 1, 0}, true},   // the first urgent replica
		{Picture{StateSlow, 1, 0}, Picture{StateFull, 1, 0}, true},      // the worst state
		{Picture{StateSlow, 3, 0}, Picture{StateSlow, 4, 0}, false},     // within 2..4
		{Picture{StateSlow, 4, 0}, Picture{StateSlow, 5, 0}, true},      // crosses 5
		{Picture{StateFull, 700, 0}, Picture{StateFull, 999, 0}, false}, // within 500..999
		{Picture{StateFull, 999, 0}, Picture{StateFull, 1000, 0}, true}, // crosses 1000
		{Picture{StateIdle, 0, 0}, Picture{StateHealthy, 0, 0}, true},   // the worst state, even a mild one
		{Picture{StateFull, 12, 0}, Picture{StateFull, 12, 0}, false},
		{Picture{StateDown, 15, 1}, Picture{StateDown, 15, 2}, true},  // a FULL replica dies: the worst and the urgent count unchanged
		{Picture{StateDown, 15, 2}, Picture{StateDown, 15, 1}, true},  // … and comes back
		{Picture{StateDown, 15, 3}, Picture{StateDown, 15, 4}, false}, // within 2..4
	}
	for _, c := range cases {
		if got := c.a.Changed(c.b); got != c.want {
			t.Errorf("%+v → %+v: changed %v, want %v", c.a, c.b, got, c.want)
		}
		if got := c.b.Changed(c.a); got != c.want {
			t.Errorf("%+v → %+v: changed %v, want %v (either way)", c.b, c.a, got, c.want)
		}
	}
}
