package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// recordedAt is a replica as vtop's rules recorded it, firing the states
// given.
func recordedAt(at time.Time, firing ...string) *catalogue.Recorded {
	return &catalogue.Recorded{At: at, Window: 30 * time.Second, Up: true, Running: 48, Waiting: 7,
		Requests: 180, PromptTokens: 90_000, GenerationTokens: 54_000, Preemptions: 3, RecomputedTokens: 1_500,
		TTFT:   catalogue.RecordedLatency{P99: 2.5, P50: 0.4, Observations: 180},
		ITL:    catalogue.RecordedLatency{P99: 0.05, P50: 0.03, Observations: 54_000},
		Firing: firing}
}

// TestRecordedReplica: a replica read from the rules' recorded series is
// reported from them: its rates are the increases over the window, its
// quantiles those recorded, its state the highest that fires (healthy
// when none does, down when its scrapes fail), said to be the rules'.
func TestRecordedReplica(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	down := recordedAt(at)
	down.Up = false
	tests := []struct {
		name   string
		rec    *catalogue.Recorded
		want   State
		action bool
	}{
		{"none firing", recordedAt(at), StateHealthy, false},
		{"slow", recordedAt(at, "slow"), StateSlow, true},
		{"full over slow", recordedAt(at, "slow", "full"), StateFull, true},
		{"preempting over full", recordedAt(at, "full", "preempting"), StatePreempting, true},
		{"idle", recordedAt(at, "idle"), StateIdle, false},
		{"an unknown name is passed over", recordedAt(at, "sideways", "stale"), StateStale, true},
		{"up is 0", down, StateDown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Analyze(at, []catalogue.Readings{{Target: "gpu-a:8000", Recorded: tt.rec}}, DefaultConfig(), nil)
			rep := r.Replicas[0]
			if rep.State != tt.want {
				t.Errorf("state %s, want %s", rep.State, tt.want)
			}
			if !rep.Recorded || !strings.Contains(strings.Join(rep.Reasons, " "), "recording rules") {
				t.Errorf("recorded %v, reasons %q: want it said that the rules judged it", rep.Recorded, rep.Reasons)
			}
			if (rep.Action != "") != tt.action {
				t.Errorf("action %q, want one: %v", rep.Action, tt.action)
			}
			if tt.want == StateDown {
				if rep.Running.Known() || rep.Error == "" {
					t.Errorf("down: running %v, error %q; want no figures and the store's word", rep.Running, rep.Error)
				}
				return
			}
			figures := []struct {
				name      string
				got, want Num
			}{
				{"running", rep.Running, 48},
				{"waiting", rep.Waiting, 7},
				{"requests/s", rep.RequestsPerSecond, 6},
				{"prompt tokens/s", rep.PromptTokensPerSecond, 3000},
				{"generation tokens/s", rep.GenerationTokensPerSecond, 1800},
				{"I/O ratio", rep.IORatio, 3000.0 / 1800},
				{"preemptions/s", rep.PreemptionsPerSecond, 0.1},
				{"recomputed tokens/s", rep.RecomputedTokensPerSecond, 50},
				{"TTFT p99", rep.TTFT.P99, 2.5},
				{"TTFT p50", rep.TTFT.P50, 0.4},
				{"TTFT observations", rep.TTFT.Observations, 180},
				{"ITL p99", rep.ITL.P99, 0.05},
				{"KV cache usage (not recorded)", rep.KVCacheUsage, NA},
			}
			for _, f := range figures {
				if !closeNum(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			if r.Fleet.Running != 48 || r.Fleet.States[tt.want.String()] != 1 {
				t.Errorf("fleet: running %v, states %v", r.Fleet.Running, r.Fleet.States)
			}
		})
	}
}

// TestRecordedNotRecorded: a figure the rules recorded no row of (an
// engine without the family) is n/a, never 0.
func TestRecordedNotRecorded(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	rec := recordedAt(at)
	rec.TTFT.P99, rec.Preemptions, rec.RecomputedTokens = math.NaN(), math.NaN(), math.NaN()
	rep := Analyze(at, []catalogue.Readings{{Target: "a", Recorded: rec}}, DefaultConfig(), nil).Replicas[0]
	if rep.TTFT.P99.Known() || rep.PreemptionsPerSecond.Known() || rep.RecomputedTokensPerSecond.Known() {
		t.Errorf("TTFT p99 %v, preemptions/s %v, recomputed/s %v: want n/a", rep.TTFT.P99, rep.PreemptionsPerSecond, rep.RecomputedTokensPerSecond)
	}
}
