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
			Picture{Worst: StateDown, Urgent: 5}},
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
		{Picture{StateFull, 30}, Picture{StateFull, 31}, false},   // within 20..49
		{Picture{StateFull, 30}, Picture{StateFull, 49}, false},   // within 20..49
		{Picture{StateFull, 49}, Picture{StateFull, 50}, true},    // crosses 50
		{Picture{StateFull, 19}, Picture{StateFull, 20}, true},    // crosses 20
		{Picture{StateHealthy, 0}, Picture{StateSlow, 1}, true},   // the first urgent replica
		{Picture{StateSlow, 1}, Picture{StateFull, 1}, true},      // the worst state
		{Picture{StateSlow, 3}, Picture{StateSlow, 4}, false},     // within 2..4
		{Picture{StateSlow, 4}, Picture{StateSlow, 5}, true},      // crosses 5
		{Picture{StateFull, 700}, Picture{StateFull, 999}, false}, // within 500..999
		{Picture{StateFull, 999}, Picture{StateFull, 1000}, true}, // crosses 1000
		{Picture{StateIdle, 0}, Picture{StateHealthy, 0}, true},   // the worst state, even a mild one
		{Picture{StateFull, 12}, Picture{StateFull, 12}, false},
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
