package analysis_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// llamaState is what a llama.cpp server's page shows at one reading: its
// token counters (which move when a request's prompt is evaluated or it
// ends) and its two gauges.
type llamaState struct{ prompt, predicted, processing, deferred float64 }

// llamaPage renders a llama.cpp (b8901) page.
func llamaPage(s llamaState) []byte {
	return fmt.Appendf(nil, `# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total %g
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total %g
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing %g
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred %g
`, s.prompt, s.predicted, s.processing, s.deferred)
}

// replayLlama evaluates the pages, one a second (or at the times given),
// as the monitor does, the previous report carried; it returns the report
// of each reading.
func replayLlama(t *testing.T, states []llamaState, times []time.Time, cfg analysis.Config) []analysis.ReplicaReport {
	t.Helper()
	in := page.NewIngester()
	readings := []catalogue.Readings{{Target: "llama:8080"}}
	var prev *analysis.Report
	var out []analysis.ReplicaReport
	for i, st := range states {
		s, err := in.Ingest(llamaPage(st), "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		s.Time = time.Unix(1_800_000_000, 0).Add(time.Duration(i) * time.Second)
		if times != nil {
			s.Time = times[i]
		}
		readings[0].Samples = append(readings[0].Samples, s)
		for len(readings[0].Samples) > 0 && readings[0].Samples[0].Time.Before(s.Time.Add(-cfg.Window-2*time.Second)) {
			readings[0].Samples = readings[0].Samples[1:]
		}
		r := analysis.Analyze(s.Time, readings, cfg, prev)
		prev = &r
		out = append(out, r.Replicas[0])
	}
	return out
}

// phase appends n readings to states, each made by next from the one before.
func phase(states []llamaState, n int, next func(llamaState) llamaState) []llamaState {
	for range n {
		last := llamaState{}
		if len(states) > 0 {
			last = states[len(states)-1]
		}
		states = append(states, next(last))
	}
	return states
}

// light is a light load none of whose requests a scrape catches running:
// a request of 256 tokens ends between every two scrapes.
func light(s llamaState) llamaState {
	return llamaState{prompt: s.prompt + 40, predicted: s.predicted + 256}
}

// overloaded is 2 slots busy and 6 deferred, 12 requests ending a second.
func overloaded(s llamaState) llamaState {
	return llamaState{prompt: s.prompt + 480, predicted: s.predicted + 3072, processing: 2, deferred: 6}
}

// drained is the overload's last requests ending, nothing left.
func drained(s llamaState) llamaState {
	return llamaState{prompt: s.prompt, predicted: s.predicted + 1024}
}

// quietNext is nothing: no request, the counters still.
func quietNext(s llamaState) llamaState { return llamaState{prompt: s.prompt, predicted: s.predicted} }

// A llama.cpp server whose token counters move is not IDLE, though no
// scrape catches a request running (they are short, and llama.cpp counts
// no finished requests); once the counters and the gauges have been still
// for the least evidence, it is IDLE, though the window still holds the
// work before.
func TestLlamaCppIdleFollowsTheTokens(t *testing.T) {
	tests := []struct {
		name   string
		states []llamaState
		// from the reading idleFrom on (1-based), IDLE; before it, not
		notIdleUntil, idleFrom int
	}{
		{"light load no scrape catches", phase(phase(nil, 15, quietNext), 40, light), 55, 0},
		{"after the drain", phase(phase(phase(nil, 30, overloaded), 1, drained), 29, quietNext), 31, 41},
		{"after light load", phase(phase(nil, 30, light), 25, quietNext), 30, 41},
		{"idle from the start", phase(nil, 25, quietNext), 0, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, r := range replayLlama(t, tt.states, nil, analysis.DefaultConfig()) {
				n := i + 1
				idle := r.State == analysis.StateIdle
				if n <= tt.notIdleUntil && n > 15 && idle {
					t.Errorf("reading %d, %+v: IDLE while the token counters move: %s", n, tt.states[i], strings.Join(r.Reasons, " | "))
				}
				if tt.idleFrom > 0 && n >= tt.idleFrom && !idle {
					t.Errorf("reading %d, %+v: %s, want IDLE: %s", n, tt.states[i], r.State, strings.Join(r.Reasons, " | "))
				}
			}
		})
	}
}

// Two readings of an overload, taken 10 s or 70 s apart (vtop analyze on
// two pages), with 6 waiting and 2 running in each: a queue three times
// the batch in both readings proves the replica FULL, as 10 waiting does.
// A queue shorter than that on two readings does not.
func TestLlamaCppTwoOverloadPagesAreFull(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name     string
		apart    time.Duration
		a, b     llamaState
		wantFull bool
	}{
		{"10 s apart", 10 * time.Second, llamaState{1000, 20480, 2, 6}, llamaState{6000, 51200, 2, 6}, true},
		{"70 s apart", 70 * time.Second, llamaState{1000, 20480, 2, 6}, llamaState{34000, 235520, 2, 6}, true},
		{"a queue of twice the batch", 10 * time.Second, llamaState{1000, 20480, 2, 4}, llamaState{6000, 51200, 2, 4}, false},
		{"a queue in one reading only", 10 * time.Second, llamaState{1000, 20480, 2, 0}, llamaState{6000, 51200, 2, 6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := analysis.DefaultConfig()
			cfg.Window = tt.apart // as vtop analyze sets it: the span between the pages
			r := replayLlama(t, []llamaState{tt.a, tt.b}, []time.Time{at.Add(-tt.apart), at}, cfg)
			if got := r[1].State == analysis.StateFull; got != tt.wantFull {
				t.Errorf("%s, want FULL %v: %s", r[1].State, tt.wantFull, strings.Join(r[1].Reasons, " | "))
			}
		})
	}
}

// The queue's trend is said only of a queue that moves: not "shrinks by
// 0/s" of a queue at 6 in the newest readings after one dip, nor of one
// held at 6 after a jump.
func TestLlamaCppFlatQueueHasNoTrend(t *testing.T) {
	dip := phase(nil, 20, overloaded)
	dip[14].deferred = 5 // one reading a request short, as a real overload shows
	jump := phase(phase(nil, 15, light), 20, overloaded)
	falling := phase(nil, 20, overloaded)
	for i := range falling {
		falling[i].deferred = float64(30 - i)
	}
	tests := []struct {
		name      string
		states    []llamaState
		wantTrend bool
	}{
		{"flat after one dip", dip, false},
		{"flat after a jump", jump, false},
		{"falling", falling, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := replayLlama(t, tt.states, nil, analysis.DefaultConfig())
			last := r[len(r)-1]
			if last.State != analysis.StateFull {
				t.Fatalf("%s, want FULL: %s", last.State, strings.Join(last.Reasons, " | "))
			}
			text := strings.Join(last.Reasons, " | ")
			if trend := strings.Contains(text, "queue shrinks") || strings.Contains(text, "queue grows"); trend != tt.wantTrend {
				t.Errorf("trend said %v, want %v: %s", trend, tt.wantTrend, text)
			}
		})
	}
}

// The report says how long its readings span, which on a loaded host is
// not their count times the interval.
func TestCoveredSeconds(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	var times []time.Time
	for i := range 25 {
		times = append(times, at.Add(time.Duration(i)*1200*time.Millisecond))
	}
	r := replayLlama(t, phase(nil, 25, quietNext), times, analysis.DefaultConfig())
	if got := r[len(r)-1].CoveredSeconds; got != 28.8 {
		t.Errorf("25 readings 1.2 s apart cover %gs, want 28.8s", got)
	}
	if got := r[0].CoveredSeconds; got != 0 {
		t.Errorf("one reading covers %gs, want 0", got)
	}
}
