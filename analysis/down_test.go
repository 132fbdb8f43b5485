package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// outage is a replica that served steadily until 14:00:30 and whose every
// scrape failed from 14:00:31, once a second, evaluated once a second with
// the previous report carried, as the monitor does: good is the last
// evaluation before the failures, reps those after. The samples in hand at
// each evaluation are the newest ring of them, as a poller keeps: a ring
// shorter than the outage forgets its start.
func outage(t *testing.T, failFor time.Duration, ring int) (good ReplicaReport, reps []ReplicaReport) {
	t.Helper()
	samples, last := steadyChat()
	cfg := DefaultConfig()
	first := Analyze(last, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples[max(len(samples)-ring, 0):]}}, cfg, nil)
	prev := &first
	for at := last.Add(time.Second); !at.After(last.Add(failFor)); at = at.Add(time.Second) {
		samples = append(samples, catalogue.Sample{Time: at, Err: "dial tcp 10.0.0.7:8000: connect: connection refused"})
		inHand := samples[max(len(samples)-ring, 0):]
		r := Analyze(at, []catalogue.Readings{{Target: "gpu-a:8000", Samples: inHand}}, cfg, prev)
		reps = append(reps, r.Replicas[0])
		prev = &r
	}
	return first.Replicas[0], reps
}

// A replica that fails for longer than the samples in hand reach back is
// down since its first failed scrape, with the count of failures rising
// every scrape; the window does not make it forget when the outage began.
func TestDownSinceOutlastsTheSamplesInHand(t *testing.T) {
	start := t0.Add(31 * time.Second) // 14:00:31, the first failed scrape
	tests := []struct {
		name      string
		failFor   time.Duration
		ring      int
		wantCount int
		wantSince string
		wantGood  string
	}{
		{"within the samples in hand", 10 * time.Second, 40, 10, "14:00:31", "last good scrape at 14:00:30, 10s ago"},
		{"longer than the samples in hand", 100 * time.Second, 40, 100, "14:00:31", "last good scrape at 14:00:30, 1m40s ago"},
		{"long past the window, short ring", 5 * time.Minute, 5, 300, "14:00:31", "last good scrape at 14:00:30, 5m0s ago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, reps := outage(t, tt.failFor, tt.ring)
			for i, r := range reps {
				if r.State != StateDown || !r.DownSince.Equal(start) || r.FailedScrapes != i+1 {
					t.Fatalf("evaluation %d: %s since %s, %d failed; want DOWN since 14:00:31, %d failed",
						i+1, r.State, r.DownSince.Format("15:04:05"), r.FailedScrapes, i+1)
				}
			}
			r := reps[len(reps)-1]
			want := fmt.Sprintf("scrape failing since %s (%d failed in a row)", tt.wantSince, tt.wantCount)
			if got := strings.Join(r.Reasons, "\n"); !strings.Contains(got, want) || !strings.Contains(got, tt.wantGood) {
				t.Errorf("reasons %q, want %q and %q", r.Reasons, want, tt.wantGood)
			}
			if !r.LastGood.Equal(t0.Add(30 * time.Second)) {
				t.Errorf("last good = %s, want 14:00:30", r.LastGood.Format("15:04:05"))
			}
		})
	}
}

// A replica that answers again is no longer down; a later outage is
// counted from its own start, not the earlier one's.
func TestDownSinceStartsAgainAfterRecovery(t *testing.T) {
	samples, last := steadyChat()
	cfg := DefaultConfig()
	eval := func(now time.Time, prev *Report) Report {
		return Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, prev)
	}
	fail := func(at time.Time) {
		samples = append(samples, catalogue.Sample{Time: at, Err: "connection refused"})
	}
	fail(last.Add(time.Second))
	first := eval(last.Add(time.Second), nil)
	s := newServer()
	s.running = 48
	samples = append(samples, s.scrape(last.Add(2*time.Second)))
	up := eval(last.Add(2*time.Second), &first)
	if r := up.Replicas[0]; r.State == StateDown || !r.DownSince.IsZero() || r.FailedScrapes != 0 {
		t.Fatalf("answering again: %s since %v, %d failed; want up, no down_since", r.State, r.DownSince, r.FailedScrapes)
	}
	fail(last.Add(3 * time.Second))
	again := eval(last.Add(3*time.Second), &up).Replicas[0]
	if !again.DownSince.Equal(last.Add(3*time.Second)) || again.FailedScrapes != 1 {
		t.Errorf("second outage: since %s, %d failed; want since its own first failure, 1", again.DownSince.Format("15:04:05"), again.FailedScrapes)
	}
}

// Once DOWN, the figures are those of the last good evaluation, frozen:
// not recomputed from the good scrapes left in a shrinking window (a p99
// read from ever fewer of them changes though the process is dead), and
// not lost when the samples in hand no longer hold a good one.
func TestDownFiguresAreFrozenAtTheLastGoodEvaluation(t *testing.T) {
	for _, ring := range []int{40, 5} {
		t.Run(fmt.Sprintf("ring of %d", ring), func(t *testing.T) {
			good, reps := outage(t, 45*time.Second, ring)
			last := t0.Add(30 * time.Second)
			for i, r := range reps {
				if r.TTFT.P99 != good.TTFT.P99 || r.RequestsPerSecond != good.RequestsPerSecond || r.Running != good.Running {
					t.Fatalf("%ds down: p99 TTFT %v, %v req/s, running %v; want the last good evaluation's %v, %v, %v",
						i+1, r.TTFT.P99, r.RequestsPerSecond, r.Running, good.TTFT.P99, good.RequestsPerSecond, good.Running)
				}
				if r.Model != good.Model || !r.LastGood.Equal(last) {
					t.Fatalf("%ds down: model %q, last good %v; want %q, %v", i+1, r.Model, r.LastGood, good.Model, last)
				}
			}
		})
	}
}

// A hung target's scrapes fail only when their timeout runs out: each
// failed sample is stamped when its scrape began and comes into hand 800
// ms later, after the evaluation that followed its start. Its count of
// failures rises by one a scrape all the same, past the samples in hand
// (a hung target's count stopped at the ring's 32 while refused ones rose
// to 273).
func TestFailureCountRisesForLateFailures(t *testing.T) {
	samples, last := steadyChat()
	cfg := DefaultConfig()
	const ring, timeout = 5, 800 * time.Millisecond
	var pending []catalogue.Sample // begun, not yet in hand
	var prev *Report
	for i := 1; i <= 40; i++ {
		start := last.Add(time.Duration(i) * time.Second)
		pending = append(pending, catalogue.Sample{Time: start, Err: "dial tcp 10.0.0.7:8000: i/o timeout"})
		now := start.Add(500 * time.Millisecond) // between the start and the timeout
		for len(pending) > 0 && !pending[0].Time.Add(timeout).After(now) {
			samples, pending = append(samples, pending[0]), pending[1:]
		}
		r := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples[max(len(samples)-ring, 0):]}}, cfg, prev)
		prev = &r
		// The newest failure in hand is the one begun a second before.
		if got := r.Replicas[0].FailedScrapes; i > 1 && got != i-1 {
			t.Fatalf("evaluation %d: %d failed in a row, want %d", i, got, i-1)
		}
	}
}
