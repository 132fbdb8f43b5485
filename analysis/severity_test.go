package analysis

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// judged is a replica in a state with the evidence severity reads: the
// queue, p99 TTFT and preemptions/s (NaN for n/a).
func judged(target string, s State, waiting, ttftP99, preemptions float64) ReplicaReport {
	r := ReplicaReport{Target: target, State: s, Figures: naFigures()}
	r.Waiting, r.TTFT.P99, r.PreemptionsPerSecond = Num(waiting), Num(ttftP99), Num(preemptions)
	return r
}

// wasUp gives r a good scrape at 14:00:00: a replica that answered
// before it went DOWN, not a target that never answered.
func wasUp(r ReplicaReport) ReplicaReport {
	r.LastGood = t0
	return r
}

// finishingAt gives r a finish rate.
func finishingAt(r ReplicaReport, perSecond float64) ReplicaReport {
	r.RequestsPerSecond = Num(perSecond)
	return r
}

// Severity puts the replica that needs the engineer first: the state
// still ranks (DOWN first, the states that prove nothing wrong last), but
// among the urgent ones — PREEMPTING, FULL and SLOW — the evidence decides,
// so a FULL replica with 1,900 waiting and a 159 s p99 TTFT comes before a
// PREEMPTING one with 30 waiting.
func TestSeverityOrdersWorstFirst(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name         string
		worse, other ReplicaReport
	}{
		{"a FULL replica's deep queue and TTFT before a light PREEMPTING one",
			judged("full", StateFull, 1900, 159, 0), judged("preempting", StatePreempting, 30, 2.1, 0.5)},
		{"a PREEMPTING replica before a FULL one with the same queue and TTFT",
			judged("preempting", StatePreempting, 95, 8.2, 2.4), judged("full", StateFull, 95, 8.2, 0)},
		{"a SLOW replica far over the SLO before a FULL one barely queueing",
			judged("slow", StateSlow, 0, 60, 0), judged("full", StateFull, 3, 1.2, 0)},
		{"the longer queue first within a state",
			judged("a", StateFull, 200, 5, 0), judged("b", StateFull, 20, 5, 0)},
		{"the higher p99 TTFT beyond the SLO first within a state",
			judged("a", StateSlow, 0, 9, 0), judged("b", StateSlow, 0, 3, 0)},
		{"a replica that was up and went DOWN before any evidence of an urgent state",
			wasUp(judged("down", StateDown, nan, nan, nan)), judged("full", StateFull, 1e6, 1e4, 1e3)},
		{"a FULL replica before a target that never answered",
			judged("full", StateFull, 1, 0.5, 0), judged("never", StateDown, nan, nan, nan)},
		{"a STALLED replica before a target that never answered",
			judged("stalled", StateStalled, 0, nan, 0), judged("never", StateDown, nan, nan, nan)},
		{"a replica that went DOWN before a target that never answered",
			wasUp(judged("was-up", StateDown, nan, nan, nan)), judged("never", StateDown, nan, nan, nan)},
		{"a target that never answered before STALE with no evidence",
			judged("never", StateDown, nan, nan, nan), judged("stale", StateStale, 0, nan, 0)},
		{"a target that never answered before WARMING and HEALTHY",
			judged("never", StateDown, nan, nan, nan), judged("warming", StateWarming, 40, 9, 0)},
		{"an urgent state before STALE, whatever the figures",
			judged("slow", StateSlow, 0, 1.1, 0), judged("stale", StateStale, 500, 80, 0)},
		{"WARMING (not judged yet) before HEALTHY with a queue",
			judged("warming", StateWarming, 0, nan, nan), judged("healthy", StateHealthy, 40, 0.5, 0)},
		{"a queue within HEALTHY ranks it above an empty one",
			judged("queue", StateHealthy, 12, 0.5, 0), judged("empty", StateHealthy, 0, 0.5, 0)},
		{"no TTFT histogram: the queue's wait at the finish rate stands in for p99 TTFT",
			finishingAt(judged("tgi", StateFull, 1473, nan, 0), 6.6), judged("preempting", StatePreempting, 40, 39.8, 0.86)},
		{"n/a figures count as no evidence, not as worse",
			judged("known", StateFull, 10, 2, 0), judged("unknown", StateFull, nan, nan, nan)},
		{"equal evidence: the worse state, then the target",
			judged("a", StatePreempting, 10, 2, 0), judged("b", StateFull, 10, 2, 0)},
	}
	cfg := DefaultConfig()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, o := tt.worse, tt.other
			w.Severity, o.Severity = SeverityOf(&w, cfg), SeverityOf(&o, cfg)
			if CompareSeverity(&w, &o) >= 0 || CompareSeverity(&o, &w) <= 0 {
				t.Errorf("%s (severity %v) must come before %s (severity %v)", w.Target, w.Severity, o.Target, o.Severity)
			}
		})
	}
}

// The score is written down: the state's rank in the hundreds, the
// evidence in doublings below it.
func TestSeverityScore(t *testing.T) {
	cfg := DefaultConfig() // TTFT SLO 1 s
	tests := []struct {
		name string
		r    ReplicaReport
		want float64
	}{
		{"healthy, nothing waiting, within the SLO", judged("a", StateHealthy, 0, 0.5, 0), 0},
		{"healthy, 3 waiting: two doublings of the queue", judged("a", StateHealthy, 3, 0.5, 0), 2},
		{"full: 7 waiting, p99 TTFT 4× the SLO", judged("a", StateFull, 7, 4, 0), 500 + 3 + 2},
		{"preempting: 1 preemption/s is 60 a minute", judged("a", StatePreempting, 0, 1, 1), 500 + math.Log2(61)},
		{"slow, the evidence capped below the next rank", judged("a", StateSlow, 1e30, 1e30, 1e30), 599.99},
		{"down, after answering", wasUp(judged("a", StateDown, 50, 3, 1)), 600},
		{"down, never answered: a question of configuration", judged("a", StateDown, 50, 3, 1), 400},
		{"stale", judged("a", StateStale, 0, math.NaN(), 0), 400},
		{"full, no TTFT: 7 waiting at 0.5 req/s wait 14 s, 14× the SLO", finishingAt(judged("a", StateFull, 7, math.NaN(), 0), 0.5), 500 + 3 + math.Log2(14)},
		{"full, no TTFT and no finish rate: the queue alone", judged("a", StateFull, 7, math.NaN(), 0), 503},
	}
	for _, tt := range tests {
		if got := SeverityOf(&tt.r, cfg); got != tt.want {
			t.Errorf("%s: severity %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The fleet's worst replica and the JSON read the same score.
func TestWorstIsBySeverity(t *testing.T) {
	preempting := judged("preempting:8000", StatePreempting, 30, 2.1, 0.5)
	full := judged("full:8000", StateFull, 1900, 159, 0)
	never := judged("127.0.0.1:31502", StateDown, math.NaN(), math.NaN(), math.NaN())
	cfg := DefaultConfig()
	reps := []ReplicaReport{never, preempting, full}
	for i := range reps {
		reps[i].Severity = SeverityOf(&reps[i], cfg)
	}
	if got := fleetFigures(reps, cfg, t0, nil).Worst; got != "full:8000" {
		t.Errorf("worst = %s, want full:8000", got)
	}
	samples, now := steadyChat()
	r := analyzeOne(samples, now, cfg)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"severity":`) || r.Severity != SeverityOf(&r, cfg) {
		t.Errorf("the report's severity %v is not the score, or not in the JSON: %s", r.Severity, b)
	}
	sorted := slices.Clone(reps)
	slices.SortFunc(sorted, func(a, b ReplicaReport) int { return CompareSeverity(&a, &b) })
	if sorted[0].Target != "full:8000" {
		t.Errorf("sorted worst first: %s first", sorted[0].Target)
	}
}
