package analysis

import (
	"strings"
	"testing"
)

// Every state has a meaning short enough for one line of the help at 80
// columns beside its badge, and no two states share one.
func TestStateMeaningEveryState(t *testing.T) {
	const room = 80 - len("PREEMPTING") - 4
	seen := map[string]State{}
	for s := StateHealthy; s <= StateDown; s++ {
		m := StateMeaning(s)
		switch {
		case m == "":
			t.Errorf("%s has no meaning", s)
		case len([]rune(m)) > room:
			t.Errorf("%s: %q is %d runes, more than the %d of one help line", s, m, len([]rune(m)), room)
		case strings.Contains(m, "\n"):
			t.Errorf("%s: %q is more than one line", s, m)
		}
		if other, dup := seen[m]; dup && m != "" {
			t.Errorf("%s and %s share the meaning %q", s, other, m)
		}
		seen[m] = s
	}
	if got := StateMeaning(State(200)); got != "" {
		t.Errorf("an unknown state has the meaning %q", got)
	}
}

// A SLOW replica whose p99 TTFT is within its SLO says why it is SLOW in
// a few words: the ITL p99 over its SLO, a p99 not yet under the exit
// margin, or a return to health held by the hysteresis. One whose p99
// TTFT is over the SLO, or that is not SLOW, needs no mark.
func TestSlowMark(t *testing.T) {
	cfg := DefaultConfig() // SLOs 1s and 100ms, exit 10% under them
	q := func(p99 float64) Quantiles {
		return Quantiles{Mean: NA, P50: Num(p99 / 2), P90: NA, P99: Num(p99), Observations: 500,
			P50Bucket: QuantileBucket{NA, NA}, P90Bucket: QuantileBucket{NA, NA}, P99Bucket: QuantileBucket{NA, NA}}
	}
	tests := []struct {
		name      string
		state     State
		ttft, itl float64
		pending   State
		count     int
		want      string
	}{
		{"TTFT over the SLO: the figure says it", StateSlow, 3.4, 0.04, StateSlow, 0, ""},
		{"TTFT held between the exit and the SLO", StateSlow, 0.95, 0.04, StateSlow, 0, "until TTFT <900ms"},
		{"ITL over its SLO", StateSlow, 0.245, 0.15, StateSlow, 0, "ITL 150ms"},
		{"ITL held between the exit and the SLO", StateSlow, 0.245, 0.095, StateSlow, 0, "until ITL <90ms"},
		{"held by the hysteresis on today's figures", StateSlow, 0.245, 0.04, StateHealthy, 1, "pending healthy 1/2"},
		{"not SLOW", StateFull, 0.245, 0.04, StateFull, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &ReplicaReport{State: tt.state, Pending: tt.pending, PendingCount: tt.count}
			r.TTFT, r.ITL = q(tt.ttft), q(tt.itl)
			if got := SlowMark(r, cfg); got != tt.want {
				t.Errorf("SlowMark = %q, want %q", got, tt.want)
			}
		})
	}
}
