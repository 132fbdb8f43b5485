package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Imbalance rules: with at least imbalanceMinReplicas replicas up, a
// replica whose figure is more than imbalanceFactor times the fleet median
// (and a metric's minimum gap away from it),
// or less than its inverse, is named. A queue where the median replica has
// none is named above imbalanceMinWaiting requests.
const (
	imbalanceMinReplicas = 3
	imbalanceFactor      = 2.0
	imbalanceMinWaiting  = 5
)

// fleetFigures totals the replicas and derives the scaling advice.
func fleetFigures(reps []ReplicaReport, cfg Config) FleetFigures {
	ff := FleetFigures{Replicas: len(reps), States: make(map[string]int, len(stateNames)), WorstTTFTP99: NA}
	for _, name := range stateNames {
		ff.States[name] = 0
	}
	var up []*ReplicaReport
	var stop, finished sum
	var rps, prompt, generation, running, waiting sum
	worst := -1
	for i := range reps {
		r := &reps[i]
		ff.States[r.State.String()]++
		if worse(r, reps, worst) {
			worst = i
		}
		if r.State == StateDown {
			ff.Down++
			continue
		}
		ff.Up++
		up = append(up, r)
		rps.add(r.RequestsPerSecond)
		prompt.add(r.PromptTokensPerSecond)
		generation.add(r.GenerationTokensPerSecond)
		running.add(r.Running)
		waiting.add(r.Waiting)
		stop.add(r.FinishedPerSecond.Stop)
		finished.add(r.RequestsPerSecond)
		if r.TTFT.P99.Known() && (!ff.WorstTTFTP99.Known() || r.TTFT.P99 > ff.WorstTTFTP99) {
			ff.WorstTTFTP99 = r.TTFT.P99
		}
	}
	if worst >= 0 {
		ff.Worst = reps[worst].Target
	}
	ff.RequestsPerSecond, ff.PromptTokensPerSecond, ff.GenerationTokensPerSecond = rps.value(), prompt.value(), generation.value()
	ff.Running, ff.Waiting = running.value(), waiting.value()
	ff.SuccessRate = ratio(stop.value(), finished.value())
	ff.Imbalance = imbalances(up)
	ff.Advice = advice(up, cfg)
	return ff
}

// worse reports whether reps[i] is worse than reps[worst] (-1 for none):
// a higher state, then a higher p99 TTFT.
func worse(r *ReplicaReport, reps []ReplicaReport, worst int) bool {
	if worst < 0 {
		return true
	}
	w := &reps[worst]
	if r.State != w.State {
		return r.State > w.State
	}
	return r.TTFT.P99.Known() && (!w.TTFT.P99.Known() || r.TTFT.P99 > w.TTFT.P99)
}

// sum adds the known figures; unknown when none is known.
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
	if !s.known {
		return NA
	}
	return Num(s.total)
}

// imbalances names the replicas far from the fleet median in requests/s,
// KV cache usage or waiting requests.
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
				Target: r.Target, Metric: m.name, Value: v, Median: Num(med),
				Text: fmt.Sprintf("%s: %s %s against a fleet median of %s",
					r.Target, m.label, m.format(float64(v)), m.format(med)),
			})
		}
	}
	return out
}

// imbalanceMetric is one figure compared across the fleet. A replica is far
// from the median when it is more than imbalanceFactor times above or below
// it and, so that small numbers do not raise alarms, more than minGap away.
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

// advice is the scaling advice from the queue (the HPA rule on
// vllm:num_requests_waiting with a Little's-law target) and from capacity
// (what a FULL replica sustains).
func advice(up []*ReplicaReport, cfg Config) Advice {
	a := Advice{
		Replicas: len(up), TargetQueueSeconds: Num(cfg.TargetQueueTime.Seconds()),
		ArrivalsPerSecond: NA, WaitingTargetPerReplica: NA, MeanWaitingPerReplica: NA,
		ReplicasByQueue: NA, CapacityPerReplica: NA, ReplicasByCapacity: NA,
		Summary: []string{},
	}
	if len(up) == 0 {
		a.Summary = append(a.Summary, "no replica is up: no advice")
		return a
	}
	var arrivals, waiting, fullRate sum
	fullCount := 0
	for _, r := range up {
		arrivals.add(r.ArrivalsPerSecond)
		waiting.add(r.Waiting)
		if r.State == StateFull && r.RequestsPerSecond.Known() {
			fullRate.add(r.RequestsPerSecond)
			fullCount++
		}
	}
	replicas := Num(len(up))
	a.ArrivalsPerSecond = arrivals.value()
	a.WaitingTargetPerReplica = a.ArrivalsPerSecond / replicas * a.TargetQueueSeconds
	a.MeanWaitingPerReplica = waiting.value() / replicas
	if a.WaitingTargetPerReplica > 0 && a.MeanWaitingPerReplica.Known() {
		a.ReplicasByQueue = Num(math.Max(1, math.Ceil(float64(replicas*a.MeanWaitingPerReplica/a.WaitingTargetPerReplica))))
	}
	if fullCount > 0 {
		a.CapacityPerReplica = fullRate.value() / Num(fullCount)
		if a.CapacityPerReplica > 0 && a.ArrivalsPerSecond.Known() {
			a.ReplicasByCapacity = Num(math.Max(1, math.Ceil(float64(a.ArrivalsPerSecond/a.CapacityPerReplica))))
		}
	}
	a.Summary = adviceSummary(&a)
	return a
}

// adviceSummary states the advice with its numbers.
func adviceSummary(a *Advice) []string {
	var s []string
	if a.ArrivalsPerSecond.Known() {
		s = append(s, fmt.Sprintf("arrivals %s req/s across %d replicas; a %s queue allows %s waiting per replica (Little's law)",
			amount(a.ArrivalsPerSecond.Float()), a.Replicas, seconds(a.TargetQueueSeconds.Float()), amount(a.WaitingTargetPerReplica.Float())))
	}
	if a.ReplicasByQueue.Known() {
		s = append(s, fmt.Sprintf("mean waiting %s per replica → %s replicas by the queue (HPA rule: ceil(%d × %s ÷ %s))",
			amount(a.MeanWaitingPerReplica.Float()), count(a.ReplicasByQueue.Float()), a.Replicas,
			amount(a.MeanWaitingPerReplica.Float()), amount(a.WaitingTargetPerReplica.Float())))
	}
	if a.ReplicasByCapacity.Known() {
		s = append(s, fmt.Sprintf("a full replica finishes %s req/s → %s replicas by capacity (ceil(%s ÷ %s))",
			amount(a.CapacityPerReplica.Float()), count(a.ReplicasByCapacity.Float()),
			amount(a.ArrivalsPerSecond.Float()), amount(a.CapacityPerReplica.Float())))
	}
	if len(s) == 0 {
		s = append(s, "not enough data yet for advice (rates need two scrapes)")
	}
	return s
}
