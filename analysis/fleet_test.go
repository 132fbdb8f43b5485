package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// fleetOf builds targets: three servers finishing rps[i] chat requests per
// second with waiting[i] growing by growth[i] per second, and running[i].
func fleetOf(rps, running, waiting, growth []float64) ([]catalogue.Readings, time.Time) {
	var targets []catalogue.Readings
	var now time.Time
	for i := range rps {
		s := newServer()
		s.running, s.waiting, s.kv = running[i], waiting[i], 0.5
		var samples []catalogue.Sample
		samples, now = run(s, 30, time.Second, finishing(rps[i], chat), queueing(waiting[i], growth[i]))
		targets = append(targets, catalogue.Readings{Target: "gpu-" + string(rune('a'+i)) + ":8000", Samples: samples})
	}
	return targets, now
}

func TestFleet(t *testing.T) {
	targets, now := fleetOf([]float64{12, 12, 6}, []float64{256, 256, 48}, []float64{60, 90, 0}, []float64{1, 1, 0})
	// A replica that answered a second ago and is down now: the worst. (A
	// target that never answered would rank after the FULL ones.)
	down := catalogue.Readings{Target: "gpu-d:8000", Samples: []catalogue.Sample{
		newServer().scrape(now.Add(-time.Second)), {Time: now, Err: "connection refused"}}}
	targets = append(targets, down)
	cfg := DefaultConfig()
	cfg.Hysteresis = 1
	rep := Analyze(now, targets, cfg, nil)
	ff := rep.Fleet
	if ff.Replicas != 4 || ff.Up != 3 || ff.Down != 1 {
		t.Errorf("replicas %d up %d down %d", ff.Replicas, ff.Up, ff.Down)
	}
	for _, st := range states {
		if _, ok := ff.States[st.name]; !ok {
			t.Errorf("states lacks %q", st.name)
		}
	}
	if ff.States["full"] != 2 || ff.States["healthy"] != 1 || ff.States["down"] != 1 {
		t.Errorf("states %v", ff.States)
	}
	if ff.Worst != "gpu-d:8000" {
		t.Errorf("worst = %q, want the down replica", ff.Worst)
	}
	if !sameFloat(ff.RequestsPerSecond.Float(), 30) || !sameFloat(ff.Running.Float(), 560) || !sameFloat(ff.Waiting.Float(), 210) {
		t.Errorf("totals: %v req/s, running %v, waiting %v", ff.RequestsPerSecond, ff.Running, ff.Waiting)
	}
	a := ff.Advice
	// Arrivals: 13 + 13 + 6 = 32 req/s; a full replica finishes 12
	// successfully, so 3 carry them, and 2 FULL ask for one more than the
	// 3 up. The HPA target is 12 × 1 s; mean waiting (90+120+0)/3 = 70 →
	// ceil(3 × 70 ÷ 12) = 18.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"arrivals", a.ArrivalsPerSecond.Float(), 32},
		{"waiting target", a.WaitingTargetPerReplica.Float(), 12},
		{"mean waiting", a.MeanWaitingPerReplica.Float(), 70},
		{"replicas by queue", a.ReplicasByQueue.Float(), 18},
		{"capacity per replica", a.CapacityPerReplica.Float(), 12},
		{"replicas by capacity", a.ReplicasByCapacity.Float(), 3},
	}
	for _, c := range checks {
		if !sameFloat(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// 3 up carry 32 req/s at 12 each: two FULL beside one with room want
	// the load spread, not a fourth replica.
	if !sameFloat(a.RecommendedReplicas.Float(), 3) || a.Basis != "capacity" || a.Action != "rebalance" ||
		!strings.HasPrefix(a.Summary[0], "spread the load: 3 up (1 down uncounted) carry the 32 req/s arriving at 12 a full replica does, but 2 are FULL") {
		t.Errorf("recommended %v by %q: %q", a.RecommendedReplicas, a.Basis, a.Recommendation)
	}
	if a.Replicas != 3 || a.Uncounted != 1 || len(a.Summary) != 6 || !strings.Contains(a.Summary[4], "its arithmetic, ceil(3 × 70 ÷ 12) = 18, reads the backlog as load, beyond the 3 the advice counts") ||
		a.Summary[5] != "1 of 4 replicas down: not counted, neither their demand nor their capacity" {
		t.Errorf("advice %d replicas (%d uncounted), summary %q", a.Replicas, a.Uncounted, a.Summary)
	}
	var named []string
	for _, im := range ff.Imbalance {
		named = append(named, im.Target+" "+im.Metric)
	}
	if got := strings.Join(named, ","); got != "gpu-c:8000 waiting" {
		// requests/s 12,12,6: median 12, 6 is exactly half, not below it.
		t.Errorf("imbalance = %q, want gpu-c's empty queue named", got)
	}
}

func TestFleetEmptyAndUnknown(t *testing.T) {
	rep := Analyze(t0, nil, DefaultConfig(), nil)
	if rep.Fleet.Replicas != 0 || rep.Fleet.RequestsPerSecond.Known() || len(rep.Fleet.States) != len(states) {
		t.Errorf("empty fleet: %+v", rep.Fleet)
	}
	if len(rep.Fleet.Advice.Summary) == 0 {
		t.Error("advice says why there is none")
	}
}

func TestThresholdEvents(t *testing.T) {
	cfg := DefaultConfig()
	cool, now := steadyChat()
	s := newServer()
	s.running, s.kv = 48, 0.93
	hot, _ := run(s, 30, time.Second, finishing(6, request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 3, itl: 0.027, e2e: 9}))
	first := Analyze(now, []catalogue.Readings{{Target: "a", Samples: cool}}, cfg, nil)
	if len(first.Events) != 1 || first.Events[0].Text != StateText(&first.Replicas[0]) {
		t.Errorf("no previous evaluation: the first verdict's event alone, no crossing: %v", first.Events)
	}
	second := Analyze(now, []catalogue.Readings{{Target: "a", Samples: hot}}, cfg, &first)
	var texts []string
	for _, e := range second.Events {
		texts = append(texts, e.Text)
	}
	joined := strings.Join(texts, "\n")
	// The TTFT over its SLO is the SLOW it makes (shown at once: never
	// HEALTHY beside it): its event says it (TestOneEventPerStateChange),
	// with no crossing of its own; the KV cache is another fact.
	if !strings.Contains(joined, "KV cache 93% (≥ 90%)") || !strings.Contains(joined, "SLOW: p99 TTFT") {
		t.Errorf("events %q, want SLOW's and the KV cache's crossing", texts)
	}
	for _, text := range texts {
		if strings.HasPrefix(text, "p99 TTFT") {
			t.Errorf("events %q: the TTFT's crossing is SLOW's, not an event of its own", texts)
		}
	}
	third := Analyze(now, []catalogue.Readings{{Target: "a", Samples: hot}}, cfg, &second)
	for _, e := range third.Events {
		if strings.HasPrefix(e.Text, "KV cache") || strings.HasPrefix(e.Text, "p99") {
			t.Errorf("a crossing is reported once: %q", e.Text)
		}
	}
}

func TestImbalanceRule(t *testing.T) {
	byName := map[string]imbalanceMetric{}
	for _, m := range imbalanceMetrics {
		byName[m.name] = m
	}
	tests := []struct {
		metric   string
		v, med   float64
		wantFar  bool
		describe string
	}{
		{"requests_per_second", 6, 2, true, "three times the median and 4 req/s away"},
		{"requests_per_second", 0, 1, false, "one request a second apart is noise, not imbalance"},
		{"requests_per_second", 0.5, 3, true, "a sixth of the median, 2.5 req/s away"},
		{"kv_cache_usage", 0.14, 0.06, false, "14% against 6%: twice, but 8 points"},
		{"kv_cache_usage", 0.95, 0.30, true, "95% against 30%"},
		{"waiting", 12, 0, true, "a queue where the median replica has none"},
		{"waiting", 3, 0, false, "three waiting is below the minimum"},
		{"waiting", 5, 0, false, "five waiting is not more than the minimum"},
		{"waiting", 100, 80, false, "within the factor"},
	}
	for _, tt := range tests {
		if got := byName[tt.metric].farFromMedian(tt.v, tt.med); got != tt.wantFar {
			t.Errorf("%s %v vs median %v (%s): far = %v, want %v", tt.metric, tt.v, tt.med, tt.describe, got, tt.wantFar)
		}
	}
}

// The imbalance list leads with the most extreme replica, the largest
// ratio to the fleet median (each side plus the metric's minimum gap, so
// that a value near zero is not infinitely far), whatever the order of the
// targets.
func TestImbalanceMostExtremeFirst(t *testing.T) {
	up := func(rps ...float64) []*ReplicaReport {
		out := make([]*ReplicaReport, len(rps))
		for i, v := range rps {
			r := &ReplicaReport{Target: "r" + string(rune('0'+i)), Figures: naFigures()}
			r.RequestsPerSecond = Num(v)
			out[i] = r
		}
		return out
	}
	tests := []struct {
		name      string
		rps       []float64
		wantFirst string
		wantRatio float64
	}{
		{"the first in file order is the milder", []float64{6, 2, 2, 2, 12.6, 2}, "r4", 13.6 / 3},
		{"a busy one is further than one near zero", []float64{0.2, 2, 2, 2, 10, 2, 2}, "r4", 11.0 / 3},
		{"one replica only", []float64{2, 2, 2, 9}, "r3", 10.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imb := imbalances(up(tt.rps...))
			if len(imb) == 0 || imb[0].Target != tt.wantFirst || !sameFloat(imb[0].Ratio.Float(), tt.wantRatio) {
				t.Fatalf("imbalance %+v, want %s first at ×%v", imb, tt.wantFirst, tt.wantRatio)
			}
			for i := 1; i < len(imb); i++ {
				if imb[i].Ratio > imb[i-1].Ratio {
					t.Errorf("not most extreme first: %+v", imb)
				}
			}
		})
	}
	// An empty queue beside a median of 6 is named, but after a queue of
	// 1,072 beside the same median.
	var queues []*ReplicaReport
	for i, w := range []float64{0, 6, 6, 7, 1072, 6} {
		r := &ReplicaReport{Target: "q" + string(rune('0'+i)), Figures: naFigures()}
		r.Waiting = Num(w)
		queues = append(queues, r)
	}
	if imb := imbalances(queues); len(imb) != 2 || imb[0].Target != "q4" || imb[1].Target != "q0" {
		t.Errorf("imbalance %+v, want q4's queue first, then q0's empty one", imb)
	}
}

// TestFleetTotalsStayFinite: a fleet total never adds up to a number that
// is not one. Each replica's figure is finite (the sources refuse larger
// values, catalogue.Fold.Takes), yet a sum of such figures may overflow:
// the total is then n/a, never +Inf.
func TestFleetTotalsStayFinite(t *testing.T) {
	tests := []struct {
		name    string
		running []float64
		want    Num
	}{
		{"two huge figures overflow", []float64{1e308, 1e308}, NA},
		{"finite figures add up", []float64{3, 4}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sum
			for _, v := range tt.running {
				s.add(Num(v))
			}
			if got := s.value(); !(got == tt.want || !got.Known() && !tt.want.Known()) || math.IsInf(float64(got), 0) {
				t.Errorf("total %v, want %v", got, tt.want)
			}
		})
	}
}
