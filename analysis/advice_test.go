package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// member is one replica of a test fleet.
type member struct {
	stop, abort     float64 // requests finished per second, by reason
	running         float64 // flat, unless swinging
	swinging        bool    // running alternates by 40 between readings: never FULL
	waiting, growth float64 // the queue starts at waiting and grows by growth a second
	scrapes         int     // readings after the first; 30 when 0
	down            bool    // the scrape fails
}

// fleetOfMembers builds the readings of a fleet, one replica per member,
// the newest at the same time.
func fleetOfMembers(ms ...member) ([]catalogue.Readings, time.Time) {
	var targets []catalogue.Readings
	now := t0.Add(30 * time.Second)
	for i, m := range ms {
		target := "gpu-" + string(rune('a'+i)) + ":8000"
		if m.down {
			targets = append(targets, catalogue.Readings{Target: target, Samples: []catalogue.Sample{{Time: now, Err: "connection refused"}}})
			continue
		}
		n := m.scrapes
		if n == 0 {
			n = 30
		}
		s := newServer()
		s.running, s.waiting, s.kv = m.running, m.waiting, 0.5
		aborted := chat
		aborted.reason = catalogue.FinishAbort
		steps := []step{finishing(m.stop, chat), queueing(m.waiting, m.growth)}
		if m.abort > 0 {
			steps = append(steps, finishing(m.abort, aborted))
		}
		if m.swinging {
			steps = append(steps, func(s *server, i int) { s.running = m.running + float64(40*(i%2)) })
		}
		samples, _ := run(s, n, time.Second, steps...)
		// Shift the readings so that the newest is at now.
		shift := now.Sub(samples[len(samples)-1].Time)
		for j := range samples {
			samples[j].Time = samples[j].Time.Add(shift)
		}
		targets = append(targets, catalogue.Readings{Target: target, Samples: samples})
	}
	return targets, now
}

func repeat(m member, n int) []member {
	out := make([]member, n)
	for i := range out {
		out[i] = m
	}
	return out
}

var (
	fullMember    = member{stop: 12, running: 256, waiting: 951, growth: 1}
	healthyMember = member{stop: 6, running: 48}
)

// TestAdviceOneAction: the fleet advice is one action with one number and
// its inputs, from one model. Demand is what arrives; a replica's capacity
// is what a FULL replica finishes successfully; while a replica is FULL
// the advice adds (never keeps, never scales down); without a measured
// capacity it says "add replicas" without a count rather than the queue
// rule's giant number; DOWN replicas are neither demand nor capacity, and
// the advice says how many it could not count.
func TestAdviceOneAction(t *testing.T) {
	tests := []struct {
		name            string
		fleet           []member
		wantAction      string
		wantAdd, wantN  float64 // NaN: no count
		wantText, notIn []string
		wantSummary     []string
	}{
		{"FULL replicas: add what the demand needs over the successful capacity",
			repeat(fullMember, 4), "add", 1, 5,
			[]string{"add 1: 52 req/s arrive, 48 succeed, a full replica does 12: 4 up → 5; backlog 3,924: 6 would clear it in about 5 min"},
			[]string{"keep", "queue rule"},
			[]string{"demand 52 req/s", "capacity 12 successful req/s per replica", "the demand needs 5 replicas if spread evenly (ceil(52 ÷ 12))",
				"backlog 3,924 waiting: clears in about 8 min at 5 replicas; 6 would clear it in about 5 min"}},
		{"FULL replicas whose backlog drains: nothing to add, and never keep",
			repeat(member{stop: 12, running: 256, waiting: 951, growth: -4.5}, 4), "drain", math.NaN(), 4,
			[]string{"no replica to add: 4 up carry the 30 req/s arriving at 12 a full replica does; 4 FULL are clearing a backlog; backlog 3,264 clears in about 3 min"},
			[]string{"keep"}, nil},
		{"aborts are not capacity",
			repeat(member{stop: 6, abort: 6, running: 256, waiting: 951, growth: 1}, 4), "add", 5, 9,
			[]string{"add 5: 52 req/s arrive, 24 succeed, a full replica does 6: 4 up → 9"},
			nil, []string{"capacity 6 successful req/s per replica", "24 req/s aborted over the window, not counted"}},
		{"uneven load: the demand spread evenly, as a router spreads it",
			[]member{{stop: 12, running: 256, waiting: 951, growth: 10}, healthyMember, {stop: 12, running: 256, waiting: 951, growth: 10}, healthyMember}, "add", 1, 5,
			[]string{"add 1: 56 req/s arrive, 36 succeed, a full replica does 12: 4 up → 5"},
			nil, []string{"the demand needs 5 replicas if spread evenly (ceil(56 ÷ 12))"}},
		{"DOWN replicas are neither demand nor capacity",
			[]member{fullMember, {down: true}, fullMember, {down: true}}, "add", 1, 3,
			[]string{"add 1: 26 req/s arrive, 24 succeed, a full replica does 12: 2 up (2 down uncounted) → 3"},
			nil, []string{"2 of 4 replicas down: not counted"}},
		{"6 of 8 down, the 2 up are fine: not keep 2 as if 2 were enough",
			append(repeat(healthyMember, 2), repeat(member{down: true}, 6)...), "keep", math.NaN(), 8,
			[]string{"keep the 2 up and bring back the 6 down: none is FULL and the queue is not growing"},
			[]string{"keep 2"}, []string{"6 of 8 replicas down: not counted"}},
		{"no FULL and no queue: keep",
			repeat(healthyMember, 3), "keep", math.NaN(), 3,
			[]string{"keep 3 replicas: none is FULL and the queue is not growing"}, nil,
			[]string{"capacity not measured: no replica is FULL", "fewer replicas are not advised"}},
		// A queue in every reading is FULL whatever the batch does (the
		// written judgement): the advice counts it as capacity.
		{"a queue grows under a swinging batch: FULL, so a count",
			[]member{healthyMember, healthyMember, {stop: 6, running: 100, swinging: true, waiting: 40, growth: 2}}, "add", 1, 4,
			[]string{"add 1: 20 req/s arrive, 18 succeed, a full replica does 6: 3 up → 4; backlog 100 clears in about 25 s"},
			[]string{"(queue)", "HPA"}, nil},
		// A FULL replica whose queue drains is still FULL: never keep
		// beside it.
		{"a queue drains under a swinging batch: FULL, its backlog clears",
			[]member{healthyMember, healthyMember, {stop: 6, running: 100, swinging: true, waiting: 400, growth: -12}}, "drain", math.NaN(), 3,
			[]string{"no replica to add: 3 up carry the 12 req/s arriving at 6 a full replica does; 1 FULL is clearing a backlog"}, []string{"keep"}, nil},
		// A queue that clears only at a trickle, or holds, is not being
		// cleared: saying so would flip with the slope's sign each refresh.
		{"a FULL queue shrinking by a trickle beside replicas with room: spread the load, not a backlog that clears",
			[]member{healthyMember, healthyMember, {stop: 10, running: 100, swinging: true, waiting: 400, growth: -0.5}}, "rebalance", math.NaN(), 3,
			[]string{"spread the load: 3 up carry the 21.5 req/s arriving at 10 a full replica does, but 1 is FULL with the queue shrinking by only 0.5/s while others have room; spread evenly, the backlog of 385 clears in about 45 s"},
			[]string{"clearing a backlog", "keep"}, nil},
		{"a FULL queue that holds beside replicas with room: spread the load",
			[]member{healthyMember, healthyMember, {stop: 10, running: 100, swinging: true, waiting: 400, growth: 0}}, "rebalance", math.NaN(), 3,
			[]string{"but 1 is FULL with the queue not shrinking while others have room"},
			[]string{"clearing a backlog", "keep"}, nil},
		{"one FULL with its queue growing beside replicas with room: spread the load",
			[]member{healthyMember, healthyMember, {stop: 10, running: 100, swinging: true, waiting: 40, growth: 0.5}}, "rebalance", math.NaN(), 3,
			[]string{"spread the load: 3 up carry the 22.5 req/s arriving at 10 a full replica does, but 1 is FULL with the queue growing by 0.5/s while others have room"},
			[]string{"keep"}, nil},
		{"a replica FULL on two readings: add, no count until it shows a capacity",
			[]member{healthyMember, {stop: 12, running: 256, waiting: 60, growth: 1, scrapes: 1}}, "add", math.NaN(), math.NaN(),
			[]string{"add replicas: 1 replica FULL, the queue grows by 1/s; settling: 1 of 10 s at capacity"},
			[]string{"(queue)"}, []string{"capacity not measured yet: 1 replica FULL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets, now := fleetOfMembers(tt.fleet...)
			cfg := DefaultConfig()
			cfg.Hysteresis = 1
			rep := Analyze(now, targets, cfg, nil)
			a := rep.Fleet.Advice
			if !sameFloat(a.Add.Float(), tt.wantAdd) || !sameFloat(a.RecommendedReplicas.Float(), tt.wantN) || a.Action != tt.wantAction {
				t.Errorf("%s %v → %v, want %s %v → %v: %q", a.Action, a.Add, a.RecommendedReplicas, tt.wantAction, tt.wantAdd, tt.wantN, a.Recommendation)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(a.Recommendation, want) {
					t.Errorf("recommendation %q lacks %q", a.Recommendation, want)
				}
			}
			for _, not := range tt.notIn {
				if strings.Contains(a.Recommendation, not) {
					t.Errorf("recommendation %q says %q", a.Recommendation, not)
				}
			}
			summary := strings.Join(a.Summary, "\n")
			for _, want := range tt.wantSummary {
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, summary)
				}
			}
			if len(a.Summary) == 0 || a.Summary[0] != a.Recommendation {
				t.Errorf("the summary leads with the recommendation: %q", a.Summary)
			}
			// A FULL pane says what the fleet's advice says: it adds
			// replicas only where the advice adds them.
			head := map[string]string{"add": "add replicas; ", "rebalance": "spread the load: others have room; ",
				"drain": "none to add: the backlog clears; "}[a.Action]
			for _, r := range rep.Replicas {
				if r.State == StateFull && !strings.HasPrefix(r.Action, head+"scale on ") {
					t.Errorf("advice %s, FULL %s's action %q", a.Action, r.Target, r.Action)
				}
			}
		})
	}
}

// While any counted replica is FULL the advice adds replicas (one at
// least when it gives a count), spreads the load or lets a backlog clear,
// whatever the other figures: it never says keep or fewer beside a FULL
// pane.
func TestAdviceNeverKeepsWhileFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	states := []State{StateHealthy, StateFull, StateSlow, StatePreempting, StateIdle, StateWarming}
	figure := func() Num {
		if rng.IntN(6) == 0 {
			return NA
		}
		return Num(math.Round(rng.Float64()*50*10) / 10)
	}
	for range 5000 {
		counted := make([]*ReplicaReport, 1+rng.IntN(6))
		full := false
		for i := range counted {
			r := &ReplicaReport{Target: "r", State: states[rng.IntN(len(states))], Samples: 1 + rng.IntN(5), Figures: naFigures()}
			r.ArrivalsPerSecond, r.Waiting, r.WaitingGrowth = figure(), figure(), figure()-25
			r.RequestsPerSecond, r.FinishedPerSecond.Stop, r.FinishedPerSecond.Abort = figure(), figure(), figure()
			full = full || r.State == StateFull
			counted[i] = r
		}
		a := advice(counted, rng.IntN(3), DefaultConfig(), t0, nil)
		if !full {
			continue
		}
		acts := a.Action == "add" || a.Action == "rebalance" || a.Action == "drain"
		if !acts || strings.HasPrefix(a.Recommendation, "keep") || (a.Add.Known() && a.Add < 1) || a.RecommendedReplicas < Num(len(counted)) {
			t.Fatalf("FULL among %d replicas, advice %s %v: %q", len(counted), a.Action, a.Add, a.Recommendation)
		}
	}
}

// TestAdviceCapacityFromFull: a PREEMPTING replica with a standing queue
// is at its capacity, but what its short KV cache lets it finish is no
// replica's capacity while a FULL one shows one.
func TestAdviceCapacityFromFull(t *testing.T) {
	rep := func(state State, stop float64) *ReplicaReport {
		r := &ReplicaReport{Target: "r", State: state, AtCapacity: true, Samples: 30, Figures: naFigures(), AtCapacitySeconds: 30, CapacitySettled: true, CapacityPerSecond: Num(stop)}
		r.ArrivalsPerSecond, r.Waiting, r.WaitingGrowth = Num(stop+1), 500, 1
		r.trailQueue = queueShowing(500, 1)
		r.ArrivalsAtCapacity = r.ArrivalsPerSecond
		r.RequestsPerSecond, r.FinishedPerSecond.Stop = Num(stop), Num(stop)
		return r
	}
	a := advice([]*ReplicaReport{rep(StateFull, 6), rep(StatePreempting, 1)}, 0, DefaultConfig(), t0, nil)
	if !sameFloat(a.CapacityPerReplica.Float(), 6) || a.CapacityReplicas != 1 || a.AtCapacity != 2 {
		t.Errorf("capacity %v from %d of %d at capacity, want 6 from the FULL one", a.CapacityPerReplica, a.CapacityReplicas, a.AtCapacity)
	}
	a = advice([]*ReplicaReport{rep(StatePreempting, 1)}, 0, DefaultConfig(), t0, nil)
	if !sameFloat(a.CapacityPerReplica.Float(), 1) || !strings.Contains(a.Recommendation, "1 up → 3") {
		t.Errorf("a lone PREEMPTING replica at capacity: capacity %v, %q", a.CapacityPerReplica, a.Recommendation)
	}
}

// TestAdviceCountsInstances: a replica that sums several scrape targets
// (--group-by) is as many replicas as it has instances, in the count up,
// the capacity per replica and the replicas to add (ten carry 100 req/s
// at 10 each, with nothing spare for the backlog: eleven).
func TestAdviceCountsInstances(t *testing.T) {
	group := &ReplicaReport{Target: "vllm", State: StateFull, AtCapacity: true, Instances: 8, Samples: 30, Figures: naFigures(), AtCapacitySeconds: 30, CapacitySettled: true, CapacityPerSecond: 80}
	group.ArrivalsPerSecond, group.Waiting, group.WaitingGrowth = 100, 2000, 5
	group.trailQueue = queueShowing(2000, 5)
	group.ArrivalsAtCapacity = group.ArrivalsPerSecond
	group.RequestsPerSecond, group.FinishedPerSecond.Stop = 80, 80
	a := advice([]*ReplicaReport{group}, 0, DefaultConfig(), t0, nil)
	if a.Replicas != 8 || !sameFloat(a.CapacityPerReplica.Float(), 10) || a.Action != "add" || !sameFloat(a.RecommendedReplicas.Float(), 11) {
		t.Errorf("a group of 8 at 80 successful req/s with 100 arriving: %d up, capacity %v, %s → %v; %q",
			a.Replicas, a.CapacityPerReplica, a.Action, a.RecommendedReplicas, a.Recommendation)
	}
}

// The HPA's arithmetic: desired = ceil(current × value ÷ target), no
// change within 10 % of the target, never below one replica.
func TestHPADesired(t *testing.T) {
	tests := []struct {
		current       int
		value, target float64
		want          float64
		within        bool
	}{
		{4, 10, 10, 4, true},
		{4, 10.9, 10, 4, true},
		{4, 9.1, 10, 4, true},
		{4, 11.5, 10, 5, false},    // ceil(4.6)
		{4, 8.5, 10, 4, false},     // ceil(3.4): outside the tolerance, and still 4
		{4, 5, 10, 2, false},       // halve
		{4, 0, 10, 1, false},       // no queue: the minimum
		{10, 1000, 5, 2000, false}, // a backlog asks for thousands
	}
	for _, tt := range tests {
		got, within := hpaDesired(tt.current, tt.value, tt.target)
		if got != tt.want || within != tt.within {
			t.Errorf("%d replicas at %v against %v: %v (within %v), want %v (within %v)", tt.current, tt.value, tt.target, got, within, tt.want, tt.within)
		}
	}
}

// The HPA's scale-down stabilisation: the recommendation is the highest
// desired count of the last 300 s; scaling up is at once.
func TestHPAStabilisation(t *testing.T) {
	steps := []struct {
		at       time.Duration
		desired  float64
		want     float64
		describe string
	}{
		{0, 10, 10, "the first"},
		{60 * time.Second, 4, 10, "scale down held by the window"},
		{120 * time.Second, 6, 10, "still held"},
		{299 * time.Second, 4, 10, "the 10 is 299 s old"},
		{301 * time.Second, 4, 6, "the 10 left the window; the 6 of 120 s remains"},
		{421 * time.Second, 4, 4, "the 6 left too"},
		{430 * time.Second, 12, 12, "scale up at once"},
	}
	var window []HPARecommendation
	for _, st := range steps {
		now := t0.Add(st.at)
		window = stabilise(recentRecommendations(window, now), now, st.desired)
		if got := window[0].Desired; got != st.want {
			t.Errorf("at %v desired %v: recommendation %v, want %v (%s); window %v", st.at, st.desired, got, st.want, st.describe, window)
		}
	}
	if len(window) != 1 {
		t.Errorf("a window after scaling up keeps only what may still be highest: %v", window)
	}
	// A replay stepped back: recommendations from after now are not used.
	if back := recentRecommendations(window, t0.Add(200*time.Second)); len(back) != 0 {
		t.Errorf("recommendations from the future kept: %v", back)
	}
}

// The HPA line is carried from one evaluation to the next through the
// previous report, labelled as an autoscaler setting, and FULL panes
// state the fleet's target: one target, from one function.
func TestHPAAcrossEvaluations(t *testing.T) {
	fast, slow := fullMember, fullMember
	slow.stop = 8
	targets, now := fleetOfMembers(fast, slow, fast, slow)
	cfg := DefaultConfig()
	cfg.Hysteresis = 1
	first := Analyze(now, targets, cfg, nil)
	a := first.Fleet.Advice
	// Capacity (12+8+12+8)/4 = 10 successful req/s; target 10 × 1 s;
	// mean waiting 981 → ceil(4 × 981 ÷ 10) = 393.
	if !sameFloat(a.WaitingTargetPerReplica.Float(), 10) || a.HPADesired != 393 || a.ReplicasByQueue != 393 || a.HPAMetric != "vllm:num_requests_waiting" {
		t.Fatalf("HPA target %v desired %v recommended %v on %q", a.WaitingTargetPerReplica, a.HPADesired, a.ReplicasByQueue, a.HPAMetric)
	}
	hpaLine := ""
	for _, s := range a.Summary {
		if strings.HasPrefix(s, "autoscaler setting, not a count to act on") {
			hpaLine = s
		}
	}
	const target = "scale on vllm:num_requests_waiting with target 10 per replica (a 1s queue at the 10 successful req/s a full replica finishes)"
	if !strings.Contains(hpaLine, target) || !strings.Contains(hpaLine, "its arithmetic, ceil(4 × 981 ÷ 10) = 393, reads the backlog as load, beyond the 5 the advice counts") {
		t.Errorf("HPA line %q", hpaLine)
	}
	for _, r := range first.Replicas {
		if r.State != StateFull || !strings.Contains(r.Action, target) {
			t.Errorf("%s %v: action %q does not state the fleet's target", r.Target, r.State, r.Action)
		}
	}
	if strings.Contains(a.Recommendation, "393") {
		t.Errorf("the HPA's count is not the action: %q", a.Recommendation)
	}

	// A minute later the queue asks for fewer: the window holds 393.
	calm, later := fleetOfMembers(repeat(member{stop: 10, running: 256, waiting: 20, growth: 0}, 4)...)
	later = later.Add(time.Minute)
	for i := range calm {
		for j := range calm[i].Samples {
			calm[i].Samples[j].Time = calm[i].Samples[j].Time.Add(time.Minute)
		}
	}
	second := Analyze(later, calm, cfg, &first).Fleet.Advice
	if second.HPADesired != 8 || second.ReplicasByQueue != 393 || len(second.HPAWindow) != 2 {
		t.Errorf("desired %v, recommended %v (want 8, held at 393); window %v", second.HPADesired, second.ReplicasByQueue, second.HPAWindow)
	}
	if !strings.Contains(strings.Join(second.Summary, "\n"), "its 5 min scale-down window holds 393") {
		t.Errorf("summary %q", second.Summary)
	}
}

// A fleet of several engines has one waiting-requests family per engine:
// the HPA line names each, once.
func TestHPAMetricPerEngine(t *testing.T) {
	reps := []*ReplicaReport{
		{EngineKind: catalogue.EngineVLLM, Figures: naFigures()},
		{EngineKind: catalogue.EngineSGLang, Figures: naFigures()},
		{EngineKind: catalogue.EngineVLLM, Figures: naFigures()},
	}
	if got := advice(reps, 0, DefaultConfig(), t0, nil).HPAMetric; got != "vllm:num_requests_waiting or sglang:num_queue_reqs" {
		t.Errorf("HPA metric %q", got)
	}
}

// TestAdviceWithoutFinishCounter: a replica whose page counts no finished
// requests (llama.cpp) never shows a capacity nor its arrivals, so the
// advice says why it has no count rather than promise one, keeps a fleet
// none of which is FULL whose queue does not grow, and does not ask for a
// second scrape it has.
func TestAdviceWithoutFinishCounter(t *testing.T) {
	rep := func(state State, waiting, growth float64, uncounted bool) *ReplicaReport {
		r := &ReplicaReport{Target: "r", State: state, Samples: 30, Figures: naFigures(), finishUncounted: uncounted}
		r.Waiting, r.WaitingGrowth, r.trailQueue = Num(waiting), Num(growth), queueShowing(waiting, growth)
		if state == StateFull {
			r.AtCapacity, r.AtCapacitySeconds = true, 60
		}
		return r
	}
	tests := []struct {
		name       string
		reps       []*ReplicaReport
		want, not  string
		wantAction string
	}{
		{"FULL: no count, and why", []*ReplicaReport{rep(StateFull, 6, 0, true)},
			"add replicas: 1 replica FULL; no count: the page exports no finished-request counter, so no capacity can be read", "a count once", "add"},
		{"two FULL", []*ReplicaReport{rep(StateFull, 6, 0, true), rep(StateFull, 6, 0, true)},
			"no count: their pages export no finished-request counter", "settling", "add"},
		{"a counted one FULL settles", []*ReplicaReport{rep(StateFull, 6, 0, true), rep(StateFull, 6, 0, false)},
			"a count once a replica has shown what it carries there", "no finished-request counter", "add"},
		{"idle: keep", []*ReplicaReport{rep(StateIdle, 0, 0, true)},
			"keep 1 replica: none is FULL and the queue is not growing", "two scrapes", "keep"},
		{"a queue growing, none FULL", []*ReplicaReport{rep(StateUnjudged, 3, 0.5, true)},
			"no advice: the queue grows by 0.5/s (3 waiting) with no replica FULL yet; no count: the page exports no finished-request counter", "two scrapes", ""},
		{"a counted page one scrape in", []*ReplicaReport{rep(StateWarming, 0, math.NaN(), false)},
			"no advice yet: arrivals and the queue need two scrapes", "finished-request counter", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := advice(tt.reps, 0, DefaultConfig(), t0, nil)
			summary := strings.Join(a.Summary, "\n")
			if !strings.Contains(a.Recommendation, tt.want) || strings.Contains(summary, tt.not) || a.Action != tt.wantAction {
				t.Errorf("%s: %q\nwant %q, without %q", a.Action, summary, tt.want, tt.not)
			}
		})
	}
}
