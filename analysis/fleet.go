package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Imbalance rules: with at least imbalanceMinReplicas replicas up, a
// replica whose figure is more than imbalanceFactor times the fleet median
// or less than its inverse, and a metric's minimum gap away, is named.
const (
	imbalanceMinReplicas = 3
	imbalanceFactor      = 2.0
	imbalanceMinWaiting  = 5
)

// fleetFigures totals the replicas and derives the scaling advice at now;
// prev is the same fleet's figures at the previous evaluation (nil for
// none).
func fleetFigures(reps []ReplicaReport, cfg Config, now time.Time, prev *FleetFigures) FleetFigures {
	ff := FleetFigures{Replicas: len(reps), States: make(map[string]int, len(states)), WorstTTFTP99: NA}
	for _, st := range states {
		ff.States[st.name] = 0
	}
	var up []*ReplicaReport // here, not in t: a local slice may stay on the stack
	var t fleetTotals
	worst := -1
	separate := hasOwnReplicas(reps)
	for i := range reps {
		r := &reps[i]
		ff.countState(r)
		if worst < 0 || CompareSeverity(r, &reps[worst]) < 0 {
			worst = i // the worst-first order of every screen
		}
		if r.State == StateDown {
			continue
		}
		if separate && frontsOthers(r) {
			ff.Routers++
			continue
		}
		up = append(up, r)
		t.add(&ff, r)
	}
	if worst >= 0 {
		ff.Worst = reps[worst].Target
	}
	ff.RequestsPerSecond, ff.PromptTokensPerSecond, ff.GenerationTokensPerSecond = t.rps.value(), t.prompt.value(), t.generation.value()
	ff.Running, ff.Waiting = t.running.value(), t.waiting.value()
	ff.SuccessRate = ratio(t.stop.value(), t.finished.value())
	ff.Imbalance = imbalances(up)
	var before *Advice
	if prev != nil {
		before = &prev.Advice
	}
	ff.Advice = advice(up, ff.Down, cfg, now, before)
	return ff
}

// countState counts a replica into the fleet's states.
func (ff *FleetFigures) countState(r *ReplicaReport) {
	ff.States[r.State.String()]++
	if r.Restarted {
		ff.Restarted++
	}
	if r.Late {
		ff.Late++
	}
	if r.State == StateDown {
		ff.Down++
	} else {
		ff.Up++
	}
}

// fleetTotals adds up the replicas that serve.
type fleetTotals struct {
	stop, finished                            sum
	rps, prompt, generation, running, waiting sum
}

// add counts one serving replica into the totals, and its TTFT p99 into
// the fleet's worst.
func (t *fleetTotals) add(ff *FleetFigures, r *ReplicaReport) {
	t.rps.add(r.RequestsPerSecond)
	t.prompt.add(r.PromptTokensPerSecond)
	t.generation.add(r.GenerationTokensPerSecond)
	t.running.add(r.Running)
	t.waiting.add(r.Waiting)
	if r.FinishedPerSecond.Stop.Known() {
		// An engine without finish reasons would pass its requests for failures.
		t.stop.add(r.FinishedPerSecond.Stop)
		t.finished.add(r.RequestsPerSecond)
	}
	if r.TTFT.P99.Known() && (!ff.WorstTTFTP99.Known() || r.TTFT.P99 > ff.WorstTTFTP99) {
		ff.WorstTTFTP99 = r.TTFT.P99
	}
}

// sum adds the known figures; unknown when none is known, or past what a
// float holds.
type sum struct {
	total float64
	known bool
}

func (s *sum) add(n Num) {
	if n.Known() {
		s.total += float64(n)
		s.known = true
	}
}

func (s *sum) value() Num {
	if !s.known || math.IsInf(s.total, 0) {
		return NA
	}
	return Num(s.total)
}

// imbalances names the replicas far from the fleet median in
// imbalanceMetrics, the most extreme first, so that a screen that names
// one names the worst.
func imbalances(up []*ReplicaReport) []Imbalance {
	if len(up) < imbalanceMinReplicas {
		return nil
	}
	var out []Imbalance
	values := make([]float64, 0, len(up))
	for _, m := range imbalanceMetrics {
		values = values[:0]
		for _, r := range up {
			if v := m.value(r); v.Known() {
				values = append(values, float64(v))
			}
		}
		if len(values) < imbalanceMinReplicas {
			continue
		}
		med := median(values)
		for _, r := range up {
			v := m.value(r)
			if !v.Known() || !m.farFromMedian(float64(v), med) {
				continue
			}
			out = append(out, Imbalance{
				Target: r.Target, Metric: m.name, Value: v, Median: Num(med), Ratio: Num(ratioToMedian(float64(v), med, m.minGap)),
				Text: fmt.Sprintf("%s: %s %s against a fleet median of %s",
					r.Target, m.label, m.format(float64(v)), m.format(med)),
			})
		}
	}
	slices.SortStableFunc(out, func(a, b Imbalance) int { return cmp.Compare(b.Ratio.Float(), a.Ratio.Float()) })
	return out
}

// ratioToMedian is how far v is from the median med (Imbalance.Ratio):
// a queue of 1,072 against a median of 6 is ×98, an empty one ×2.2.
func ratioToMedian(v, med, gap float64) float64 {
	hi, lo := math.Max(v, med), math.Min(v, med)
	return (hi + gap) / (lo + gap)
}

// imbalanceMetric is one figure compared across the fleet; minGap keeps
// small numbers from raising alarms.
type imbalanceMetric struct {
	name, label string
	value       func(*ReplicaReport) Num
	format      func(float64) string
	minGap      float64
}

var imbalanceMetrics = []imbalanceMetric{
	{"requests_per_second", "requests/s", func(r *ReplicaReport) Num { return r.RequestsPerSecond }, amount, 1},
	{"kv_cache_usage", "KV cache", func(r *ReplicaReport) Num { return r.KVCacheUsage }, percent, 0.25},
	{"waiting", "waiting", func(r *ReplicaReport) Num { return r.Waiting }, count, imbalanceMinWaiting},
}

// farFromMedian applies the imbalance rule to one value.
func (m imbalanceMetric) farFromMedian(v, med float64) bool {
	if math.Abs(v-med) <= m.minGap {
		return false
	}
	return med <= 0 || v > imbalanceFactor*med || v < med/imbalanceFactor
}

// median of values (sorted in place).
func median(values []float64) float64 {
	slices.Sort(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}
