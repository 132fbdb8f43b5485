package analysis

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Kubernetes HPA's defaults, which the autoscaler line computes with:
// no change within hpaTolerance of the target; the highest recommendation
// of the last hpaScaleDownWindow is used; per hpaScaleUpPeriod, at most
// the larger of hpaScaleUpPods and hpaScaleUpShare more pods.
const (
	hpaTolerance       = 0.1
	hpaScaleDownWindow = 300 * time.Second
	hpaScaleUpPeriod   = 15 * time.Second
	hpaScaleUpPods     = 4
	hpaScaleUpShare    = 1.0
)

// hpaFirstStep is where the HPA's default scale-up policy takes current
// replicas in one period towards desired.
func hpaFirstStep(current int, desired float64) float64 {
	c := float64(current)
	return math.Min(desired, math.Max(c+hpaScaleUpPods, c*(1+hpaScaleUpShare)))
}

// The advice's noise: a count within adviceCountNoise of the one shown (at
// least adviceCountNoiseMin replicas), or another action while replicas
// are FULL, is shown only once said on adviceHold evaluations in a row. A
// count read off noisy rates moves by a replica at a ceil's edge, and
// rebalance or drain turns on the sign of a queue's slope: shown as read,
// the advice changed every second while nothing had.
const (
	adviceCountNoise    = 0.10
	adviceCountNoiseMin = 1
	adviceHold          = 3
)

// backlogDrainAim is the time in which the backlog sentence says how many
// replicas would clear the queue, when the recommended count takes longer.
const backlogDrainAim = 5 * time.Minute

// HPARecommendation is one evaluation's desired replica count by the HPA
// rule, kept while it may still be the highest of the scale-down window.
type HPARecommendation struct {
	Time    time.Time `json:"time"`
	Desired float64   `json:"desired"`
}

// advice is the fleet's scaling advice, from one model: demand is what
// arrives at the counted replicas, capacity what a replica at its
// capacity finishes successfully, and the count what carries the demand
// spread evenly with room to clear the backlog. Without a measured
// capacity it gives no count; it never says keep beside a FULL pane. prev
// carries the HPA's recent recommendations and what is held.
func advice(counted []*ReplicaReport, down int, cfg Config, now time.Time, prev *Advice) Advice {
	a := newAdvice(counted, down, cfg, now, prev)
	if len(counted) == 0 {
		a.Recommendation = "no replica is up: no advice"
		a.Summary = a.uncountedSummary(append(a.Summary, a.Recommendation))
		return a
	}
	var t adviceTally
	for _, r := range counted {
		t.add(&a, r)
	}
	backlog, abortedAtCapacity := a.measure(&t)
	a.autoscaler(now)
	a.recommend(t.stalled, backlog, counted)
	pending := a.hold(prev, backlog)
	a.summarize(t.stalled, pending, backlog, abortedAtCapacity)
	return a
}

// newAdvice is the advice before any replica is read: every figure n/a.
func newAdvice(counted []*ReplicaReport, down int, cfg Config, now time.Time, prev *Advice) Advice {
	a := unknownAdvice
	a.Replicas, a.Uncounted, a.TargetQueueSeconds = instances(counted), down, Num(cfg.TargetQueueTime.Seconds())
	a.HPAMetric, a.Summary = "vllm:num_requests_waiting", []string{}
	var metrics []string
	for _, r := range counted {
		if m := waitingMetric(r.EngineKind); !slices.Contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	if len(metrics) > 0 {
		a.HPAMetric = strings.Join(metrics, " or ")
	}
	var window []HPARecommendation
	if prev != nil {
		window = prev.HPAWindow
	}
	a.HPAWindow = recentRecommendations(window, now)
	return a
}

// capacityFrom is what the replicas a capacity is read from finish
// successfully and abort, and how many instances they are.
type capacityFrom struct {
	ok, aborted sum
	n           int
}

// adviceTally adds up the counted replicas' demand, queue and successes,
// and what those at capacity finish.
type adviceTally struct {
	arrivals, rejections, waiting, growth, succeeded sum
	full, preempting                                 capacityFrom
	stalled                                          int
	settling                                         float64 // the most seconds at capacity of a replica not settled
}

// add counts one replica into the tally, and its instances full, at
// capacity or uncounted into a.
func (t *adviceTally) add(a *Advice, r *ReplicaReport) {
	if r.State == StateStalled {
		// Its queue waits for its engine: more replicas would not serve it.
		t.stalled += max(1, r.Instances)
		return
	}
	t.addDemand(r)
	n := max(1, r.Instances) // a group counts its instances
	if r.finishUncounted {
		a.uncounted += n
	}
	if r.State == StateFull {
		a.Full += n
	}
	if !(r.State == StateFull || r.State == StatePreempting && r.AtCapacity) {
		return
	}
	a.AtCapacity += n
	t.addCapacity(a, r, n)
}

// addDemand counts what arrives at a replica, its queue and what it
// finishes successfully.
func (t *adviceTally) addDemand(r *ReplicaReport) {
	// A replica settled at its capacity tells its demand and queue's pace
	// from its newest seconds there; another from its window.
	if r.CapacitySettled && r.ArrivalsAtCapacity.Known() {
		t.arrivals.add(r.ArrivalsAtCapacity)
		t.growth.add(queueTrend(r.WaitingGrowthAtCapacity, r.trailQueue))
	} else {
		t.arrivals.add(r.ArrivalsPerSecond)
		t.growth.add(queueTrend(r.WaitingGrowth, r.trailQueue))
	}
	t.rejections.add(r.AdmissionRejectionsPerSecond)
	t.waiting.add(r.Waiting)
	t.succeeded.add(successfulPerSecond(&r.Figures))
}

// addCapacity counts what a replica at capacity, of n instances, finishes
// there, or, while its capacity settles, how long it has been there.
func (t *adviceTally) addCapacity(a *Advice, r *ReplicaReport, n int) {
	if r.finishUncounted {
		a.uncountedAtCapacity += n // no capacity will ever be read of it
		return
	}
	// A batch that has just filled has not shown its capacity yet.
	if !r.CapacitySettled || !r.CapacityPerSecond.Known() {
		if r.AtCapacitySeconds > t.settling || !a.SettlingSeconds.Known() {
			t.settling = r.AtCapacitySeconds
		}
		a.SettlingSeconds = Num(t.settling)
		return
	}
	m := &t.full
	if r.State != StateFull {
		m = &t.preempting
	}
	m.ok.add(r.CapacityPerSecond)
	m.aborted.add(r.FinishedPerSecond.Abort)
	m.n += n
}

// measure sets the fleet's demand, queue and capacity from the tally, and
// returns the backlog and what the replicas a capacity is read from abort.
func (a *Advice) measure(t *adviceTally) (backlog, abortedAtCapacity Num) {
	// A PREEMPTING replica shows what its short KV cache lets it carry: a
	// capacity only when no FULL replica shows one.
	measured := t.full
	if measured.n == 0 {
		measured = t.preempting
	}
	a.CapacityReplicas = measured.n
	a.ArrivalsPerSecond = t.arrivals.value()
	if a.RejectionsPerSecond = t.rejections.value(); a.RejectionsPerSecond > 0 && a.ArrivalsPerSecond.Known() {
		// A refused request is demand, not traffic that went away.
		a.ArrivalsPerSecond += a.RejectionsPerSecond
	}
	a.QueueGrowthPerSecond = t.growth.value()
	a.SuccessfulPerSecond = t.succeeded.value()
	backlog = t.waiting.value()
	a.MeanWaitingPerReplica = backlog / Num(a.Replicas)
	if a.CapacityReplicas > 0 {
		a.SettlingSeconds = NA // a capacity is read: none is settling for it
		a.CapacityPerReplica = measured.ok.value() / Num(a.CapacityReplicas)
		if a.CapacityPerReplica > 0 && a.ArrivalsPerSecond.Known() {
			a.ReplicasByCapacity = Num(math.Max(1, math.Ceil(float64(a.ArrivalsPerSecond/a.CapacityPerReplica))))
		}
	}
	return backlog, measured.aborted.value()
}

// recommend chooses the action, the count and the sentence from the
// fleet's figures.
func (a *Advice) recommend(stalled int, backlog Num, counted []*ReplicaReport) {
	switch {
	case a.AtCapacity > 0 && a.ReplicasByCapacity.Known():
		a.addByCapacity(backlog)
	case a.AtCapacity > 0:
		a.Action, a.Basis = "add", "queue"
		a.Recommendation = a.addWithoutCount("add replicas: " + plural(float64(a.AtCapacity), "replica") + " " + a.fullWord())
	case stalled == a.Replicas:
		a.keep(0)
		a.Recommendation = "keep " + plural(float64(a.RecommendedReplicas), "replica") + ": every replica up is STALLED; restart them, more replicas would not serve their queues"
	case !a.ArrivalsPerSecond.Known() && a.uncounted > 0 && a.QueueGrowthPerSecond > 0:
		// No arrivals will ever be read: the queue's growth is all there is.
		a.Recommendation = a.uncountedGrowsWords(backlog)
	case !a.ArrivalsPerSecond.Known() && a.uncounted > 0 && a.QueueGrowthPerSecond.Known():
		a.keep(backlog)
	case !a.ArrivalsPerSecond.Known():
		a.Recommendation = "no advice yet: arrivals and the queue need two scrapes"
	case a.queueGrows(backlog):
		a.Action, a.Basis = "add", "queue"
		a.Recommendation = a.queueGrowsWords(backlog)
	case a.queueStands(backlog):
		a.Recommendation = queueStandsWords(backlog, counted)
	default:
		a.keep(backlog)
	}
}

// summarize writes the advice's sentences.
func (a *Advice) summarize(stalled int, pending string, backlog, abortedAtCapacity Num) {
	if stalled > 0 && stalled < a.Replicas {
		a.Recommendation += "; " + restartStalledWords(stalled)
	}
	a.Summary = append(a.Summary, a.Recommendation)
	if pending != "" {
		a.Summary = append(a.Summary, pending)
	}
	a.Summary = a.demandSummary(a.Summary)
	a.Summary = a.capacitySummary(a.Summary, abortedAtCapacity)
	a.Summary = a.backlogSummary(a.Summary, backlog)
	a.Summary = append(a.Summary, a.autoscalerWords())
	a.Summary = a.uncountedSummary(a.Summary)
}

// heldAction reports whether the advice holds action within its noise:
// the actions while replicas are FULL. Into and out of them it moves at once.
func heldAction(action string) bool {
	return action == "add" || action == "rebalance" || action == "drain"
}

// countNoise is how far a count may move from the one shown, n, within
// the advice's noise.
func countNoise(n float64) float64 { return math.Max(adviceCountNoiseMin, adviceCountNoise*n) }

// hold keeps the previous action and count, said with today's figures,
// while the new advice differs within its noise and has not yet held
// adviceHold evaluations; it returns the sentence of what is held ("" when
// nothing is).
func (a *Advice) hold(prev *Advice, backlog Num) string {
	if !a.mayHold(prev) {
		return ""
	}
	shown, now := prev.RecommendedReplicas.Float(), a.RecommendedReplicas.Float()
	key := a.Action + " " + strconv.FormatFloat(math.Copysign(1, now-shown), 'f', 0, 64)
	n := 1
	if prev.pendingKey == key {
		n = prev.pendingCount + 1
	}
	if n >= adviceHold {
		return ""
	}
	said := a.Recommendation
	if head, _, ok := strings.Cut(said, ":"); ok {
		said = head
	}
	if a.Action == "add" && a.RecommendedReplicas.Known() {
		said += " → " + count(now)
	}
	a.pendingKey, a.pendingCount = key, n
	a.keepPrevious(prev.Action, shown, backlog)
	return heldWords(said, n)
}

// mayHold tells whether the advice differs from prev within its noise,
// over the same replicas, prev's addition not yet reached.
func (a *Advice) mayHold(prev *Advice) bool {
	if prev == nil || !heldAction(prev.Action) || !heldAction(a.Action) || prev.Replicas != a.Replicas || prev.Uncounted != a.Uncounted ||
		!prev.RecommendedReplicas.Known() || !a.RecommendedReplicas.Known() || !a.CapacityPerReplica.Known() {
		return false
	}
	shown, now := prev.RecommendedReplicas.Float(), a.RecommendedReplicas.Float()
	if math.Abs(now-shown) > countNoise(shown) || now == shown && a.Action == prev.Action {
		return false
	}
	return !(prev.Action == "add" && shown <= float64(a.Replicas))
}

// keepPrevious says the previous action, and its count shown, with
// today's figures.
func (a *Advice) keepPrevious(action string, shown float64, backlog Num) {
	capacity, demand := a.CapacityPerReplica.Float(), a.ArrivalsPerSecond.Float()
	if action == "add" {
		a.setAdd(shown, demand, capacity, backlog)
		return
	}
	a.Action = action
	a.room(backlog, capacity, demand)
}

// fullWord names the replicas at capacity as the panes do: FULL, or "at
// capacity" when some are PREEMPTING with a standing queue.
func (a *Advice) fullWord() string {
	if a.Full == a.AtCapacity {
		return "FULL"
	}
	return "at capacity"
}

// instances is how many serving processes the replicas are (--group-by).
func instances(reps []*ReplicaReport) int {
	n := 0
	for _, r := range reps {
		n += max(1, r.Instances)
	}
	return n
}

// successfulPerSecond is what a replica finishes successfully: stops and
// lengths; every finished request where the page has no finish reasons.
func successfulPerSecond(f *Figures) Num {
	if !f.FinishedPerSecond.Stop.Known() {
		return f.RequestsPerSecond
	}
	ok := f.FinishedPerSecond.Stop
	if f.FinishedPerSecond.Length.Known() {
		ok += f.FinishedPerSecond.Length
	}
	return ok
}

// queueGrows reports whether more wait than TargetQueueSeconds of
// arrivals (Little's law), and more each second.
func (a *Advice) queueGrows(backlog Num) bool {
	return a.QueueGrowthPerSecond > 0 && backlog > a.ArrivalsPerSecond*a.TargetQueueSeconds
}

// queueStands reports whether more wait than TargetQueueSeconds of
// arrivals, and an obvious queue per replica: no fleet is to be kept so.
func (a *Advice) queueStands(backlog Num) bool {
	return backlog > a.ArrivalsPerSecond*a.TargetQueueSeconds && a.MeanWaitingPerReplica >= obviousQueue
}

// addByCapacity is the advice while replicas are FULL and a capacity is
// measured: the count that carries the demand spread evenly, one more
// when it leaves no spare to clear the backlog, enough to clear it within
// backlogDrainAim when the replicas up would not. At or below the replicas
// up, the fleet has room (roomAtFull).
func (a *Advice) addByCapacity(backlog Num) {
	capacity, demand := a.CapacityPerReplica.Float(), a.ArrivalsPerSecond.Float()
	up := float64(a.Replicas)
	rec := a.replicasFor(0)
	spare := func(n float64) float64 { return n*capacity - demand }
	if backlog > 0 && spare(rec) <= 0 {
		rec++ // with no spare capacity the backlog never clears
	}
	a.Basis = "capacity"
	if rec <= up && a.QueueGrowthPerSecond > 0 && a.AtCapacity >= a.Replicas {
		// Every replica is FULL and the queue grows: no room, whatever
		// the noisy count says.
		rec = up + 1
	}
	if aim := backlogDrainAim.Seconds(); rec <= up && backlog > 0 && !(spare(up) > 0 && backlog.Float()/spare(up) <= aim) {
		// The spare of the fleet up would take longer than the aim.
		rec = math.Max(up+1, a.replicasFor(backlog.Float()/aim))
	}
	if rec <= up {
		a.roomAtFull(backlog, capacity, demand)
		return
	}
	a.setAdd(rec, demand, capacity, backlog)
}

// setAdd makes the advice to add up to rec replicas: the count, the time
// the backlog takes to clear at it, and the sentence.
func (a *Advice) setAdd(rec, demand, capacity float64, backlog Num) {
	a.Action = "add"
	a.RecommendedReplicas, a.Add = Num(rec), Num(rec-float64(a.Replicas))
	a.clearIn(rec, capacity, demand, backlog)
	a.Recommendation = a.addWords(rec, demand, capacity, backlog)
}

// roomAtFull is the advice when replicas are FULL but the replicas up
// carry the demand spread evenly: a backlog that shrinks fast enough to
// clear within backlogDrainAim at its own pace drains; otherwise (the
// queue grows, holds, or shrinks by a trickle whose slope swings about
// zero) the load is to be spread.
func (a *Advice) roomAtFull(backlog Num, capacity, demand float64) {
	a.Action = "rebalance"
	if g := a.QueueGrowthPerSecond; g < 0 && backlog.Float()/-g.Float() <= backlogDrainAim.Seconds() {
		a.Action = "drain"
	}
	a.room(backlog, capacity, demand)
}

// room is the advice, Action rebalance or drain, that the replicas up
// carry the demand.
func (a *Advice) room(backlog Num, capacity, demand float64) {
	a.RecommendedReplicas, a.Add = Num(a.Replicas), NA
	a.clearIn(float64(a.Replicas), capacity, demand, backlog)
	a.Recommendation = a.roomWords(demand, capacity, backlog)
}

// clearIn sets how long n replicas take to clear the backlog at their
// spare capacity; n/a without a backlog or a spare.
func (a *Advice) clearIn(n, capacity, demand float64, backlog Num) {
	a.BacklogClearSeconds = NA
	if spare := n*capacity - demand; backlog > 0 && spare > 0 {
		a.BacklogClearSeconds = Num(backlog.Float() / spare)
	}
}

// replicasFor is how many replicas carry the demand and extra req/s more
// spread evenly, each finishing what a full one does.
func (a *Advice) replicasFor(extra float64) float64 {
	return math.Max(1, math.Ceil((a.ArrivalsPerSecond.Float()+extra)/a.CapacityPerReplica.Float()))
}

// keep is the advice with no replica FULL and no queue growing. Fewer
// replicas are never advised: there is no measured capacity to say how
// many would do; replicas down are to be brought back.
func (a *Advice) keep(backlog Num) {
	a.Action, a.Basis = "keep", "queue"
	a.RecommendedReplicas = Num(a.Replicas + a.Uncounted)
	a.Recommendation = a.keepWords(backlog)
}

// autoscaler computes the HPA line: the target, this evaluation's desired
// count and the recommendation after the scale-down window.
func (a *Advice) autoscaler(now time.Time) {
	a.WaitingTargetPerReplica = waitingTarget(a.CapacityPerReplica, a.TargetQueueSeconds.Float())
	if !a.WaitingTargetPerReplica.Known() || !a.MeanWaitingPerReplica.Known() {
		return
	}
	desired, within := hpaDesired(a.Replicas, a.MeanWaitingPerReplica.Float(), a.WaitingTargetPerReplica.Float())
	a.HPADesired, a.HPAWithinTolerance = Num(desired), within
	a.HPAWindow = stabilise(a.HPAWindow, now, desired)
	a.ReplicasByQueue = Num(a.HPAWindow[0].Desired)
}

// waitingTarget is the autoscaling target on the waiting requests per
// replica: the queue a full replica serves in the target queue time
// (Little's law, L = λW). Unknown without a capacity.
func waitingTarget(capacity Num, queueSeconds float64) Num {
	if !(capacity > 0) || !(queueSeconds > 0) {
		return NA
	}
	return capacity * Num(queueSeconds)
}

// hpaDesired is the Kubernetes HPA's count for an AverageValue target:
// ceil(current × value ÷ target), no change while value ÷ target is within
// hpaTolerance of 1 (within is then true), and never below one replica.
func hpaDesired(current int, value, target float64) (desired float64, within bool) {
	ratio := value / target
	if math.Abs(ratio-1) <= hpaTolerance {
		return float64(current), true
	}
	return math.Max(1, math.Ceil(float64(current)*ratio)), false
}

// recentRecommendations keeps the recommendations inside the scale-down
// window that ends at now (none after now: a replay stepped back).
func recentRecommendations(window []HPARecommendation, now time.Time) []HPARecommendation {
	cutoff := now.Add(-hpaScaleDownWindow)
	var kept []HPARecommendation
	for _, r := range window {
		if r.Time.After(cutoff) && !r.Time.After(now) {
			kept = append(kept, r)
		}
	}
	return kept
}

// stabilise adds this evaluation's desired count to the window and keeps
// those that may still be its highest, highest first: an older one no
// higher than a newer one never will be again.
func stabilise(window []HPARecommendation, now time.Time, desired float64) []HPARecommendation {
	kept := make([]HPARecommendation, 0, len(window)+1)
	for _, r := range window {
		if r.Desired > desired {
			kept = append(kept, r)
		}
	}
	return append(kept, HPARecommendation{Time: now, Desired: desired})
}

// alignFullActions writes each group's advice (its action and its
// autoscaler target) into the actions of its FULL replicas, in place of
// what a replica said from its own figures: the panes and the advice say
// one thing.
func alignFullActions(reps []ReplicaReport, ff *FleetFigures) {
	index := make(map[string]*ReplicaReport, len(reps))
	for i := range reps {
		index[reps[i].Target] = &reps[i]
	}
	for i := range ff.Groups {
		a := &ff.Groups[i].Advice
		for _, t := range ff.Groups[i].Targets {
			r := index[t]
			if r == nil || r.State != StateFull {
				continue
			}
			head, _, ok := strings.Cut(r.Action, "scale on ")
			if !ok {
				continue
			}
			if r.finishUncounted && !a.WaitingTargetPerReplica.Known() {
				r.Action = scaleOnUncountedWords(fullHead(a.Action, head), waitingMetric(r.EngineKind), 1)
				continue
			}
			r.Action = scaleOnWords(fullHead(a.Action, head), waitingMetric(r.EngineKind), a.WaitingTargetPerReplica,
				a.CapacityPerReplica, a.TargetQueueSeconds.Float())
		}
	}
}
