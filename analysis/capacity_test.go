package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// spikingReplica is a replica that finished before per second with no
// queue, then, from reading fullFrom of 30 on, at at per second with a
// queue growing by 5 a second at a batch of 64: a spike's start.
func spikingReplica(target string, before, at float64, fullFrom int) catalogue.Readings {
	s := newServer()
	s.kv = 0.5
	samples, _ := run(s, 30, time.Second, func(s *server, i int) {
		if i < fullFrom {
			s.running, s.waiting = 40, 0
			s.finish(before, chat)
			return
		}
		s.running, s.waiting = 64, float64(5*(i-fullFrom+1))
		s.finish(at, chat)
	})
	return catalogue.Readings{Target: target, Samples: samples}
}

// TestCapacityAtCapacityOnly: a replica's capacity is what it finishes
// successfully over the readings in which it has been at its capacity (a
// queue in each), not over the window, most of which may be from before
// the spike; with fewer than capacitySettle seconds of such readings the
// capacity is not settled, and the advice says so, with no count.
func TestCapacityAtCapacityOnly(t *testing.T) {
	tests := []struct {
		name         string
		fullFrom     int     // the first reading with a queue
		wantSeconds  float64 // at capacity
		wantCapacity float64 // per replica, NaN when not settled
		wantText     string
	}{
		{"FULL for the last 11 s of 30: the rate since, not the window's", 19, 11, 10, "a full replica does 10: 4 up → "},
		{"FULL since before the window: the window's", 1, 29, 10, "a full replica does 10: 4 up → "},
		{"FULL for 3 s: settling, no count", 27, 3, math.NaN(), "settling: 3 of 10 s at capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var targets []catalogue.Readings
			for _, name := range []string{"a", "b", "c", "d"} {
				targets = append(targets, spikingReplica("gpu-"+name+":8000", 4, 10, tt.fullFrom))
			}
			now := targets[0].Samples[len(targets[0].Samples)-1].Time
			cfg := DefaultConfig()
			cfg.Hysteresis = 1
			rep := Analyze(now, targets, cfg, nil)
			r := rep.Replicas[0]
			if r.State != StateFull || r.AtCapacitySeconds != tt.wantSeconds {
				t.Errorf("%v at capacity for %v s, want FULL for %v s", r.State, r.AtCapacitySeconds, tt.wantSeconds)
			}
			if tt.fullFrom > 0 && !sameFloat(r.CapacityPerSecond.Float(), 10) {
				t.Errorf("successful %v/s while at capacity, want 10", r.CapacityPerSecond)
			}
			a := rep.Fleet.Advice
			if !sameFloat(a.CapacityPerReplica.Float(), tt.wantCapacity) || a.Action != "add" {
				t.Errorf("capacity %v, action %q, want %v and add: %q", a.CapacityPerReplica, a.Action, tt.wantCapacity, a.Recommendation)
			}
			// The demand of a replica settled at capacity is what arrived
			// over its newest 10 s there: 10 finished and 5 more waiting
			// each second, 15 req/s, whatever the window before held.
			if !math.IsNaN(tt.wantCapacity) && !sameFloat(a.ArrivalsPerSecond.Float(), 4*15) {
				t.Errorf("demand %v, want the 60 req/s arriving since the queue formed", a.ArrivalsPerSecond)
			}
			if math.IsNaN(tt.wantCapacity) && a.RecommendedReplicas.Known() {
				t.Errorf("a count %v from a capacity not settled: %q", a.RecommendedReplicas, a.Recommendation)
			}
			if !strings.Contains(a.Recommendation, tt.wantText) {
				t.Errorf("recommendation %q lacks %q", a.Recommendation, tt.wantText)
			}
		})
	}
}

// TestCapacityStillRising: a batch that has just filled finishes what it
// admitted before the queue, and its rate climbs: 10 s at capacity whose
// newest half finishes faster than the whole beyond the noise is not a
// capacity yet, and the advice says the rate still rises.
func TestCapacityStillRising(t *testing.T) {
	var targets []catalogue.Readings
	for _, name := range []string{"a", "b", "c", "d"} {
		s := newServer()
		s.kv = 0.5
		samples, _ := run(s, 30, time.Second, func(s *server, i int) {
			if i < 18 {
				s.running, s.waiting = 40, 0
				s.finish(4, chat)
				return
			}
			s.running, s.waiting = 64, float64(5*(i-17))
			s.finish(min(4+1.5*float64(i-18), 20), chat) // 4, 5.5, … 20
		})
		targets = append(targets, catalogue.Readings{Target: "gpu-" + name + ":8000", Samples: samples})
	}
	now := targets[0].Samples[len(targets[0].Samples)-1].Time
	cfg := DefaultConfig()
	cfg.Hysteresis = 1
	rep := Analyze(now, targets, cfg, nil)
	if r := rep.Replicas[0]; r.AtCapacitySeconds != 12 || r.CapacitySettled {
		t.Errorf("%v s at capacity, settled %v: want 12 s, not settled", r.AtCapacitySeconds, r.CapacitySettled)
	}
	if a := rep.Fleet.Advice; a.RecommendedReplicas.Known() || !strings.Contains(a.Recommendation, "settling: 12 s at capacity, the finish rate still rising") {
		t.Errorf("count %v: %q", a.RecommendedReplicas, a.Recommendation)
	}
}

// TestCapacityNotReadOverAStall: a queue that stood behind an engine that
// did not step is not a batch at its capacity. A replica stalled for 8 s
// (running 64 and a queue, no token, no finish) and then at its cap for
// the rest of the window is at capacity from its last still reading on
// (16 s), and finishes 10 a second there: read over the stall's seconds
// too, its capacity was 7.2 and the advice's count 40 % high.
func TestCapacityNotReadOverAStall(t *testing.T) {
	s := newServer()
	s.kv = 0.5
	samples, _ := run(s, 30, time.Second, func(s *server, i int) {
		s.running, s.waiting = 64, 200
		switch {
		case i < 7:
			s.finish(10, chat)
		case i < 15: // the stall: nothing moves but the queue
			s.waiting = 200 + float64(i)
		default:
			s.finish(10, chat)
		}
	})
	targets := []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}
	now := samples[len(samples)-1].Time
	cfg := DefaultConfig()
	cfg.Hysteresis = 1
	r := Analyze(now, targets, cfg, nil).Replicas[0]
	if r.AtCapacitySeconds != 16 || !sameFloat(r.CapacityPerSecond.Float(), 10) {
		t.Errorf("at capacity %v s finishing %v/s, want 16 s at 10/s: the stall is not capacity", r.AtCapacitySeconds, r.CapacityPerSecond)
	}
}
