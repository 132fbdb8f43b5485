package analysis

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A replica that cannot be judged yet (fewer than two good scrapes) is
// WARMING, whatever its gauges say, unless the readings already prove a
// state: a long queue at the batch cap in two readings is FULL, and says it
// was judged on two readings.
func TestWarmingState(t *testing.T) {
	oneReading := func(running, waiting float64) func() ([]catalogue.Sample, time.Time) {
		return func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.waiting, s.kv = running, waiting, 0.5
			return run(s, 0, time.Second)
		}
	}
	tests := []struct {
		name       string
		samples    func() ([]catalogue.Sample, time.Time)
		want       State
		wantReason string
	}{
		{"no scrape yet", func() ([]catalogue.Sample, time.Time) { return nil, t0 }, StateWarming, "waiting for the first scrape"},
		{"one reading under load", oneReading(48, 0), StateWarming, "warming up: 1 good scrape in the window, rates need two; running 48, waiting 0"},
		{"one reading with nothing running is not yet idle", oneReading(0, 0), StateWarming, "running 0, waiting 0"},
		{"one reading of a long queue at the cap", oneReading(256, 951), StateWarming, "a queue of 951 at running 256: FULL if the next reading shows it too"},
		{"two readings of a long queue at the cap are full", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.waiting, s.kv = 256, 951, 0.6
			return run(s, 1, time.Second, finishing(12, chat), queueing(951, 3))
		}, StateFull, "judged on 2 readings: a queue of 951 and 954 at the cap"},
		// Rates are known from two readings, health is not: a second
		// may hold no preemption and no slow request of a replica that
		// has them.
		{"two readings a second apart are not yet healthy", steadyFor(1), StateWarming, "judging: 1s of readings of the 10s a verdict of health needs"},
		{"nine seconds are not yet healthy", steadyFor(9), StateWarming, "judging: 9s of readings"},
		{"ten seconds are", steadyFor(10), StateHealthy, "running 48, waiting 0"},
		{"a preemption is shown at once", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 48, 0.9
			return run(s, 1, time.Second, finishing(6, chat), preempting(1))
		}, StatePreempting, "1 preemption over 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			rep := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, DefaultConfig(), nil)
			r := rep.Replicas[0]
			if r.State != tt.want {
				t.Fatalf("state = %v, want %v; reasons %q", r.State, tt.want, r.Reasons)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
			if tt.want == StateWarming && (rep.Fleet.States["healthy"] != 0 || rep.Fleet.States["idle"] != 0 || rep.Fleet.States["warming"] != 1) {
				t.Errorf("a warming replica is counted as warming, not healthy or idle: %v", rep.Fleet.States)
			}
		})
	}
}

func TestWarmingJSONAndOrder(t *testing.T) {
	samples, _ := steadyChat()
	r := analyzeOne(samples[:1], samples[0].Time, DefaultConfig())
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"state":"warming"`) {
		t.Errorf("JSON lacks the warming state: %s", b)
	}
	var back State
	if err := back.UnmarshalText([]byte("warming")); err != nil || back != StateWarming {
		t.Errorf("warming reads back as %v, %v", back, err)
	}
	// Unknown health ranks above the states that prove a replica fine and
	// below every state that proves a problem: worst first, an unjudged
	// replica is not hidden among healthy ones, nor put before a full one.
	order := []State{StateHealthy, StateIdle, StateWarming, StateStale, StateSlow, StateFull, StatePreempting, StateDown}
	for i := 1; i < len(order); i++ {
		if !(order[i] > order[i-1]) {
			t.Errorf("%v must rank above %v", order[i], order[i-1])
		}
	}
}

// steadyFor is steadyChat's replica over n seconds of readings.
func steadyFor(n int) func() ([]catalogue.Sample, time.Time) {
	return func() ([]catalogue.Sample, time.Time) {
		s := newServer()
		s.running, s.kv = 48, 0.3
		return run(s, n, time.Second, finishing(6, chat))
	}
}

// TestHealthAfterARestart: a process that restarted is judged on its own
// readings: the old process's seconds in the window are no evidence of
// its health, so it is WARMING until it has shown the least evidence
// itself.
func TestHealthAfterARestart(t *testing.T) {
	for _, tt := range []struct {
		restartAt int
		want      State
		reason    string
	}{
		{27, StateWarming, "judging: 3s of readings since the restart at 14:00:27 of the 10s a verdict of health needs"},
		{20, StateHealthy, "running 48, waiting 0"},
	} {
		s := newServer()
		s.running, s.kv = 48, 0.3
		samples, now := run(s, 30, time.Second, finishing(6, chat), func(s *server, i int) {
			if i == tt.restartAt {
				fresh := newServer()
				fresh.running, fresh.kv, fresh.startTime = 48, 0.3, s.startTime+900
				*s = *fresh
			}
		})
		r := analyzeOne(samples, now, DefaultConfig())
		if r.State != tt.want || !strings.HasPrefix(r.Reasons[0], tt.reason) {
			t.Errorf("restarted at %ds: %v %q, want %v %q", tt.restartAt, r.State, r.Reasons, tt.want, tt.reason)
		}
	}
}
