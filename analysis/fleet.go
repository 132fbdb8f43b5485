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
	separate := hasOwnReplicas(reps)
	for i := range reps {
		r := &reps[i]
		ff.States[r.State.String()]++
		if r.Restarted {
			ff.Restarted++
		}
		if worse(r, reps, worst) {
			worst = i
		}
		if r.State == StateDown {
			ff.Down++
			continue
		}
		ff.Up++
		if separate && frontsOthers(r) {
			ff.Routers++
			continue
		}
		up = append(up, r)
		rps.add(r.RequestsPerSecond)
		prompt.add(r.PromptTokensPerSecond)
		generation.add(r.GenerationTokensPerSecond)
		running.add(r.Running)
		waiting.add(r.Waiting)
		if r.FinishedPerSecond.Stop.Known() {
			// Only replicas that count their stops: an engine without
			// finish reasons would pass its requests for failures.
			stop.add(r.FinishedPerSecond.Stop)
			finished.add(r.RequestsPerSecond)
		}
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
// KV cache usage or waiting requests, the most extreme first: the largest
// ratio to the median, then the largest gap in units of the metric's
// minimum gap, so that a screen that names one names the worst.
func imbalances(up []*ReplicaReport) []Imbalance {
	if len(up) < imbalanceMinReplicas {
		return nil
	}
	var out []Imbalance
	var gaps []float64 // each one's distance from the median in minimum gaps
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
				Target: r.Target, Metric: m.name, Value: v, Median: Num(med), Ratio: Num(ratioToMedian(float64(v), med)),
				Text: fmt.Sprintf("%s: %s %s against a fleet median of %s",
					r.Target, m.label, m.format(float64(v)), m.format(med)),
			})
			gaps = append(gaps, math.Abs(float64(v)-med)/m.minGap)
		}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(out[b].Ratio.Float(), out[a].Ratio.Float()); c != 0 {
			return c
		}
		return cmp.Compare(gaps[b], gaps[a])
	})
	sorted := make([]Imbalance, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	return sorted
}

// ratioToMedian is how many times v is above or below the median: the
// larger of v ÷ med and med ÷ v, +Inf when either is 0.
func ratioToMedian(v, med float64) float64 {
	if v <= 0 || med <= 0 {
		return math.Inf(1)
	}
	return math.Max(v/med, med/v)
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

// advice is the scaling advice: the queue rule (the HPA rule on
// vllm:num_requests_waiting with a Little's-law target), the capacity rule
// (what a FULL replica sustains), and the one count to act on.
func advice(up []*ReplicaReport, cfg Config) Advice {
	a := Advice{
		Replicas: len(up), TargetQueueSeconds: Num(cfg.TargetQueueTime.Seconds()),
		ArrivalsPerSecond: NA, WaitingTargetPerReplica: NA, MeanWaitingPerReplica: NA,
		ReplicasByQueue: NA, CapacityPerReplica: NA, ReplicasByCapacity: NA,
		RecommendedReplicas: NA, BacklogClearSeconds: NA, RejectionsPerSecond: NA,
		Summary: []string{},
	}
	if len(up) == 0 {
		a.Recommendation = "no replica is up: no advice"
		a.Summary = append(a.Summary, a.Recommendation)
		return a
	}
	var arrivals, waiting, growth, fullRate, rejections sum
	fullCount := 0
	for _, r := range up {
		arrivals.add(r.ArrivalsPerSecond)
		rejections.add(r.AdmissionRejectionsPerSecond)
		waiting.add(r.Waiting)
		growth.add(r.WaitingGrowth)
		// A capacity is a sustained rate: a replica FULL on its first two
		// readings has not shown one yet.
		if r.State == StateFull && r.RequestsPerSecond.Known() && r.Samples >= fullMinSamples {
			fullRate.add(r.RequestsPerSecond)
			fullCount++
		}
	}
	replicas := Num(len(up))
	a.ArrivalsPerSecond = arrivals.value()
	if a.RejectionsPerSecond = rejections.value(); a.RejectionsPerSecond > 0 && a.ArrivalsPerSecond.Known() {
		// A refused request was asked for: it is demand the fleet must
		// serve, not traffic that went away.
		a.ArrivalsPerSecond += a.RejectionsPerSecond
	}
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
	if a.ReplicasByCapacity.Known() {
		a.recommendByCapacity(waiting.value())
	} else {
		a.recommendByQueue(waiting.value(), growth.value())
	}
	a.Summary = adviceSummary(&a, append(make([]string, 0, 5), a.Recommendation))
	if a.RejectionsPerSecond > 0 {
		a.Summary = append(a.Summary, fmt.Sprintf("the fleet is refusing work: %s of admissions rejected (HTTP 503), counted in the arrivals as demand",
			perSecond(a.RejectionsPerSecond.Float())))
	}
	return a
}

// recommendByCapacity sizes the fleet by what a full replica sustains:
// enough replicas for the arrivals, one more when they would leave no
// spare to clear the backlog, and never fewer than are up while a backlog
// over the target drains. The queue rule is named for what it is.
func (a *Advice) recommendByCapacity(backlog Num) {
	capacity, arrivals := a.CapacityPerReplica.Float(), a.ArrivalsPerSecond.Float()
	need := a.ReplicasByCapacity.Float()
	if backlog > 0 && need*capacity-arrivals <= 0 {
		need++ // with no spare capacity the backlog never clears
	}
	rec := need
	keep := need < float64(a.Replicas) && a.MeanWaitingPerReplica > a.WaitingTargetPerReplica
	if keep {
		rec = float64(a.Replicas)
	}
	a.RecommendedReplicas, a.Basis = Num(rec), "capacity"
	if spare := rec*capacity - arrivals; backlog > 0 && spare > 0 {
		a.BacklogClearSeconds = Num(backlog.Float() / spare)
	}
	a.Recommendation = a.capacityWords(rec, keep, backlog)
}

// capacityWords says the recommendation of the capacity rule: the count,
// how it compares with the replicas up, the arithmetic behind it, how
// soon it clears the backlog and what the queue rule's count is.
func (a *Advice) capacityWords(rec float64, keep bool, backlog Num) string {
	var p prose
	switch {
	case keep:
		p = sentence("keep ").plural(rec, "replica").text(" (capacity): ").count(a.ReplicasByCapacity.Float()).
			text(" carry the ").perSecond(a.ArrivalsPerSecond.Float()).text(" arriving, but do not scale down while the backlog drains")
	case rec == float64(a.Replicas):
		p = a.carryWords(sentence("keep ").plural(rec, "replica").text(" (capacity): "))
	default:
		p = sentence("act on ").plural(rec, "replica").text(" (capacity), ").text(changeWords(rec, a.Replicas)).
			text(" the ").int(a.Replicas).text(" up: ")
		p = a.carryWords(p)
	}
	if a.BacklogClearSeconds.Known() {
		p = p.text("; ").count(rec).text(" clears the backlog of ").count(backlog.Float()).text(" in about ").
			text(duration(time.Duration(a.BacklogClearSeconds.Float() * float64(time.Second))))
	}
	if a.ReplicasByQueue.Known() && a.ReplicasByQueue.Float() > rec {
		p = p.text("; the queue rule's ").count(a.ReplicasByQueue.Float()).
			text(" is an HPA target, not a count to act on: the queue is a backlog to drain, not a rate to provision for")
	}
	return p.String()
}

// carryWords appends the arithmetic of the capacity rule: the arrivals
// over what a full replica finishes.
func (a *Advice) carryWords(p prose) prose {
	return p.perSecond(a.ArrivalsPerSecond.Float()).text(" arriving ÷ ").perSecond(a.CapacityPerReplica.Float()).
		text(" a full replica finishes")
}

// recommendByQueue is the advice without a capacity figure (no replica
// has been FULL long enough to show what one sustains): keep the fleet when
// the queue is within its target or drains by itself, otherwise the queue
// rule, said as what it is.
func (a *Advice) recommendByQueue(backlog, growth Num) {
	if !a.ReplicasByQueue.Known() {
		a.Recommendation = "no advice yet: arrivals and the queue need two scrapes"
		return
	}
	n := float64(a.Replicas)
	a.Basis = "queue"
	switch {
	case !(a.MeanWaitingPerReplica > a.WaitingTargetPerReplica):
		a.RecommendedReplicas = Num(n)
		a.Recommendation = fmt.Sprintf("keep %s (queue): no queue beyond the target of %s waiting per replica (%s of queue at %s each)",
			plural(n, "replica"), amount(a.WaitingTargetPerReplica.Float()), seconds(a.TargetQueueSeconds.Float()),
			perSecond(a.ArrivalsPerSecond.Float()/n))
	case growth < 0:
		a.RecommendedReplicas = Num(n)
		a.Recommendation = fmt.Sprintf("keep %s (queue): the queue of %s drains by %s/s without help, and no replica is full, so there is no capacity to size by",
			plural(n, "replica"), count(backlog.Float()), amount(-growth.Float()))
	default:
		a.RecommendedReplicas = a.ReplicasByQueue
		a.Recommendation = fmt.Sprintf("%s (queue): no replica is full, so there is no sustained rate to size by; this is the HPA rule on vllm:num_requests_waiting (ceil(%d × %s ÷ %s)), which overshoots a backlog: add replicas in steps and size by capacity once one is FULL",
			plural(a.ReplicasByQueue.Float(), "replica"), a.Replicas, amount(a.MeanWaitingPerReplica.Float()), amount(a.WaitingTargetPerReplica.Float()))
	}
}

// changeWords says how a recommended count compares with the replicas up:
// "1 more than", "as many as", "2 fewer than".
func changeWords(rec float64, up int) string {
	switch d := rec - float64(up); {
	case d > 0:
		return count(d) + " more than"
	case d < 0:
		return count(-d) + " fewer than"
	}
	return "as many as"
}

// perSecond writes a request rate: "12 req/s".
func perSecond(x float64) string {
	var buf [32]byte
	return prose(buf[:0]).perSecond(x).String()
}

// adviceSummary appends to s the sentences that state the figures behind
// the advice.
func adviceSummary(a *Advice, s []string) []string {
	if a.ArrivalsPerSecond.Known() {
		s = append(s, sentence("arrivals ").perSecond(a.ArrivalsPerSecond.Float()).text(" across ").
			plural(float64(a.Replicas), "replica").text("; a ").seconds(a.TargetQueueSeconds.Float()).
			text(" queue allows ").amount(a.WaitingTargetPerReplica.Float()).text(" waiting per replica (Little's law)").String())
	}
	if a.ReplicasByQueue.Known() {
		s = append(s, sentence("mean waiting ").amount(a.MeanWaitingPerReplica.Float()).text(" per replica → ").
			plural(a.ReplicasByQueue.Float(), "replica").text(" by the queue (HPA rule: ceil(").int(a.Replicas).
			text(" × ").amount(a.MeanWaitingPerReplica.Float()).text(" ÷ ").amount(a.WaitingTargetPerReplica.Float()).
			text("), an autoscaler's target)").String())
	}
	if a.ReplicasByCapacity.Known() {
		s = append(s, sentence("a full replica finishes ").perSecond(a.CapacityPerReplica.Float()).text(" → ").
			plural(a.ReplicasByCapacity.Float(), "replica").text(" by capacity (ceil(").amount(a.ArrivalsPerSecond.Float()).
			text(" ÷ ").amount(a.CapacityPerReplica.Float()).text("))").String())
	}
	return s
}
