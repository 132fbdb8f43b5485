package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// The sentences of FULL and of the fleet's advice: the verdicts and the
// advice decide, the functions here say it.

// plural writes a count with its noun, "1 preemption", "22 preemptions".
func plural(n float64, noun string) string {
	c := count(n)
	if c == "1" {
		return c + " " + noun
	}
	return c + " " + noun + "s"
}

// isAre is the verb for a count.
func isAre(n float64) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// roughDuration writes a duration in seconds as a person would round it:
// "40 s", "6 min", "2.5 h".
func roughDuration(secs float64) string {
	switch {
	case secs < 90:
		return count(math.Max(1, math.Round(secs))) + " s"
	case secs < 90*60:
		return count(math.Round(secs/60)) + " min"
	}
	return amount(math.Round(secs/360)/10) + " h"
}

// warmingReason says how much of the least evidence the window holds.
func warmingReason(ev *evidence, cfg Config) string {
	since := ""
	if !ev.RestartedAt.IsZero() {
		since = " since the restart at " + ev.RestartedAt.Format(human.Clock)
	}
	return fmt.Sprintf("judging: %s of readings%s of the %s a verdict of health needs; no problem shown so far",
		seconds(ev.EvidenceSeconds), since, seconds(leastSpan(cfg).Seconds()))
}

// fullReasons are the sentences that prove FULL: the queue over the newest
// readings, what holds the batch, and what else the figures say of it.
func fullReasons(f *Figures, ev *evidence) []string {
	t := &ev.Trail
	waitingWord := "waiting"
	if ev.queueScalar() == catalogue.WaitingCapacity {
		waitingWord = "waiting for capacity"
	}
	poolOnly := ev.queueOnlyInPool()
	var reasons []string
	if poolOnly {
		reasons = poolQueueReasons(ev)
	} else {
		reasons = []string{fmt.Sprintf("%s %s → %s over %s, running %s (%s)", waitingWord, count(t.Queue.First), count(t.Queue.Last),
			seconds(t.Seconds), count(t.Running.Last), batchBound(ev))}
	}
	if ev.Rejections > 0 {
		reasons = append(reasons, rejectionText(f, ev))
	}
	if capText := batchCapText(ev); capText != "" {
		reasons = append(reasons, capText)
	}
	if g := queueTrend(f.WaitingGrowth, t.Queue); g < 0 && t.Queue.Last > 0 {
		shrink := float64(-g)
		reasons = append(reasons, fmt.Sprintf("the queue shrinks by %s/s: empty in about %s at that rate",
			amount(shrink), seconds(t.Queue.Last/shrink)))
	}
	if t.Queue.N < fullMinSamples && !poolOnly {
		reasons = append(reasons, fmt.Sprintf("judged on %d readings: a queue of %s and %s at the cap is full without waiting for a third",
			t.Queue.N, count(t.Queue.First), count(t.Queue.Last)))
	}
	if share := ratio(f.Queue.Mean, f.TTFT.Mean); share.Known() {
		reasons = append(reasons, fmt.Sprintf("queue time is %s of TTFT (mean %s of %s)",
			percent(share.Float()), seconds(f.Queue.Mean.Float()), seconds(f.TTFT.Mean.Float())))
	}
	if f.Efficiency.Known() {
		successful, included := abortedWords(f)
		reasons = append(reasons, fmt.Sprintf("arrivals %s req/s against %s finished/s%s (efficiency %s%s)",
			amount(f.ArrivalsPerSecond.Float()), amount(f.RequestsPerSecond.Float()), successful, percent(f.Efficiency.Float()), included))
	}
	return reasons
}

// batchBound says, short, what holds the batch of a FULL replica: the KV
// cache when it is nearly full, else the batch cap, or a limit under it.
func batchBound(ev *evidence) string {
	at := ev.BatchCap > 0 && ev.Trail.Running.Last >= atCapShare*ev.BatchCap
	switch {
	case ev.KVCacheUsage.Last >= kvBoundUsage:
		return "KV-bound, KV cache at " + percent(ev.KVCacheUsage.Last)
	case !(ev.BatchCap > 0):
		return "batch cap unknown"
	case ev.BatchCapStated && at:
		return "at the stated cap of " + count(ev.BatchCap)
	case ev.BatchCapStated:
		return "under the stated " + count(ev.BatchCap)
	case at:
		return "the most seen"
	}
	return "under the " + count(ev.BatchCap) + " seen at most"
}

// batchCapText says where the batch cap comes from, and what holds a
// batch under it.
func batchCapText(ev *evidence) string {
	if !(ev.BatchCap > 0) {
		return ""
	}
	var s string
	if ev.BatchCapStated {
		s = "batch cap " + count(ev.BatchCap) + ", as the page states it (" + strings.Join(batchCapFamilies(ev.Kind), " or ") + ")"
	} else {
		s = "batch cap " + count(ev.BatchCap) + ": the most running seen"
		if !ev.BatchCapSince.IsZero() {
			s += " since " + ev.BatchCapSince.Format(human.Clock)
		}
		s += " (the page does not give max_num_seqs)"
	}
	if ev.Trail.Running.Last < atCapShare*ev.BatchCap && !(ev.KVCacheUsage.Last >= kvBoundUsage) {
		s += "; under it, the token budget of a step or the KV blocks hold the batch"
	}
	return s
}

// rejectionText says that the server refused admissions in the window.
func rejectionText(f *Figures, ev *evidence) string {
	return fmt.Sprintf("refused %s over %s (%s/s, HTTP 503: the queue is at --max-num-queued-reqs)",
		plural(ev.Rejections, "admission"), seconds(ev.SpanSeconds), amount(f.AdmissionRejectionsPerSecond.Float()))
}

// scaleOnUncountedWords is scaleOnWords for n replicas whose pages count
// no finished requests: no capacity will ever give the target.
func scaleOnUncountedWords(head, metric string, n int) string {
	return head + "scale on " + metric + " with a target set by hand: " + noFinishCounterWords(n)
}

// scaleOnWords is head and "scale on METRIC with target T per replica
// (…)", on a FULL pane and in the fleet's HPA line.
func scaleOnWords(head, metric string, target, capacity Num, queueSeconds float64) string {
	s := head + "scale on " + metric + " with target "
	if !target.Known() {
		return s + "a full replica's successful req/s × " + seconds(queueSeconds) + ", once one is measured"
	}
	return s + fmt.Sprintf("%s per replica (a %s queue at the %s successful req/s a full replica finishes)",
		amount(target.Float()), seconds(queueSeconds), amount(capacity.Float()))
}

// addWords is the advice to add rec-up replicas, read off the capacity.
func (a *Advice) addWords(rec, demand, capacity float64, backlog Num) string {
	up := float64(a.Replicas)
	s := fmt.Sprintf("add %s: %s req/s arrive, ", count(rec-up), amount(demand))
	if a.SuccessfulPerSecond.Known() {
		s += amount(a.SuccessfulPerSecond.Float()) + " succeed, "
	}
	s += fmt.Sprintf("a full replica does %s: %d up", amount(capacity), a.Replicas)
	if a.Uncounted > 0 {
		s += fmt.Sprintf(" (%d down uncounted)", a.Uncounted)
	}
	return s + " → " + count(rec) + a.backlogWords(backlog)
}

// backlogWords is what follows an advice with a count: how soon the
// backlog clears at that count, or, beyond backlogDrainAim, how many
// would clear it within it (a drain of hours off a small spare is noise
// more than a time). Empty without a backlog to clear.
func (a *Advice) backlogWords(backlog Num) string {
	if !a.BacklogClearSeconds.Known() {
		return ""
	}
	s := "; backlog " + count(backlog.Float())
	if aim := backlogDrainAim.Seconds(); a.BacklogClearSeconds > Num(aim) {
		return s + ": " + count(a.replicasFor(backlog.Float()/aim)) + " would clear it in about " + roughDuration(aim)
	}
	return s + " clears in about " + roughDuration(a.BacklogClearSeconds.Float())
}

// roomWords is the advice when replicas are FULL but those up carry the
// demand spread evenly: spread the load (rebalance) or let the backlog
// clear (drain).
func (a *Advice) roomWords(demand, capacity float64, backlog Num) string {
	carry := fmt.Sprintf("%d up", a.Replicas)
	if a.Uncounted > 0 {
		carry += fmt.Sprintf(" (%d down uncounted)", a.Uncounted)
	}
	carry += fmt.Sprintf(" carry the %s req/s arriving at %s a full replica does", amount(demand), amount(capacity))
	n := float64(a.AtCapacity)
	if a.Action != "rebalance" {
		return fmt.Sprintf("no replica to add: %s; %d %s %s clearing a backlog", carry, a.AtCapacity, a.fullWord(), isAre(n)) +
			a.backlogWords(backlog)
	}
	s := fmt.Sprintf("spread the load: %s, but %d %s %s%s while others have room",
		carry, a.AtCapacity, isAre(n), a.fullWord(), a.queuePaceWords())
	if a.BacklogClearSeconds.Known() {
		// The fleet's spare once the load is spread, not the FULL replicas' pace.
		s += "; spread evenly, the backlog of " + count(backlog.Float()) + " clears in about " + roughDuration(a.BacklogClearSeconds.Float())
	}
	return s
}

// fullHead is what a FULL replica's action starts with under its group's
// advice action; own, the replica's own head, where the group adds.
func fullHead(action, own string) string {
	switch action {
	case "rebalance":
		return "spread the load: others have room; "
	case "drain":
		return "none to add: the backlog clears; "
	}
	return own
}

// queuePaceWords says how the fleet's queue moves while FULL replicas
// hold it; nothing when its pace is unknown.
func (a *Advice) queuePaceWords() string {
	switch g := a.QueueGrowthPerSecond; {
	case g > 0:
		return " with the queue growing by " + amount(g.Float()) + "/s"
	case g < 0:
		return " with the queue shrinking by only " + amount(-g.Float()) + "/s"
	case g == 0:
		return " with the queue not shrinking"
	}
	return ""
}

// queueGrowsWords is the advice to add replicas while none is FULL yet and
// the queue grows.
func (a *Advice) queueGrowsWords(backlog Num) string {
	return a.addWithoutCount(fmt.Sprintf("add replicas: the queue grows by %s/s (%s waiting) with no replica FULL yet",
		amount(a.QueueGrowthPerSecond.Float()), count(backlog.Float())))
}

// addWithoutCount finishes an "add replicas" said without a count: the
// queue's growth, and when the count will come.
func (a *Advice) addWithoutCount(s string) string {
	if a.AtCapacity > 0 && a.QueueGrowthPerSecond > 0 {
		s += ", the queue grows by " + amount(a.QueueGrowthPerSecond.Float()) + "/s"
	}
	if a.CapacityReplicas > 0 {
		s += "; no count: the FULL replicas finish nothing successfully"
	} else if a.AtCapacity > 0 && a.uncountedAtCapacity == a.AtCapacity {
		s += "; no count: " + noFinishCounterWords(a.AtCapacity)
	} else if a.AtCapacity > 0 {
		s += "; " + a.settlingWords() + ": a count once a replica has shown what it carries there"
	} else {
		s += fmt.Sprintf("; a count once a replica has been at capacity for %s s and shows what it carries", count(capacitySettle.Seconds()))
	}
	return s + a.downWords()
}

// downWords is "; 2 down, not counted", or "" with none down.
func (a *Advice) downWords() string {
	if a.Uncounted > 0 {
		return fmt.Sprintf("; %d down, not counted", a.Uncounted)
	}
	return ""
}

// noFinishCounterWords says why no capacity is read of n replicas whose
// pages count no finished requests (llama.cpp).
func noFinishCounterWords(n int) string {
	if n == 1 {
		return "the page exports no finished-request counter, so no capacity can be read"
	}
	return "their pages export no finished-request counter, so no capacity can be read"
}

// uncountedGrowsWords is the advice while the queue grows at replicas
// none of which is FULL yet and whose pages count no finished requests.
func (a *Advice) uncountedGrowsWords(backlog Num) string {
	return fmt.Sprintf("no advice: the queue grows by %s/s (%s waiting) with no replica FULL yet; no count: %s",
		amount(a.QueueGrowthPerSecond.Float()), count(backlog.Float()), noFinishCounterWords(a.uncounted)) + a.downWords()
}

// heldWords is the sentence of an advice held within its noise.
func heldWords(said string, n int) string {
	return fmt.Sprintf("held: the inputs now say %s (%d of %d evaluations); a count within %s of the one shown (at least %s), or another action while replicas are FULL, is shown once it holds %d",
		said, n, adviceHold, percent(adviceCountNoise), plural(adviceCountNoiseMin, "replica"), adviceHold)
}

// settlingWords says how much of capacitySettle the replicas at capacity
// have shown, or that their finish rate still climbs after it.
func (a *Advice) settlingWords() string {
	secs := 0.0
	if a.SettlingSeconds.Known() {
		secs = math.Floor(a.SettlingSeconds.Float())
	}
	if secs >= capacitySettle.Seconds() {
		return fmt.Sprintf("settling: %s s at capacity, the finish rate still rising", count(secs))
	}
	return fmt.Sprintf("settling: %s of %s s at capacity", count(secs), count(capacitySettle.Seconds()))
}

// queueStandsWords is the advice when a queue stands that no replica is
// FULL of yet: none, and why.
func queueStandsWords(backlog Num, counted []*ReplicaReport) string {
	warming := 0
	for _, r := range counted {
		if r.State == StateWarming {
			warming += max(1, r.Instances)
		}
	}
	s := "no advice yet: " + count(backlog.Float()) + " waiting and no replica FULL"
	if warming > 0 {
		return s + fmt.Sprintf(" yet: %d WARMING, judged once %s of readings are in", warming, seconds(leastEvidence.Seconds()))
	}
	return s + ": not a fleet to keep; a count once a replica is FULL and shows what it carries"
}

// keepWords is the advice with no replica FULL and no queue growing.
func (a *Advice) keepWords(backlog Num) string {
	s := "keep " + plural(float64(a.Replicas), "replica") + ": "
	if a.Uncounted > 0 {
		s = fmt.Sprintf("keep the %d up and bring back the %d down: ", a.Replicas, a.Uncounted)
	}
	s += "none is FULL and the queue "
	if backlog > 0 && a.QueueGrowthPerSecond < 0 {
		return s + fmt.Sprintf("of %s drains by %s/s", count(backlog.Float()), amount(-a.QueueGrowthPerSecond.Float()))
	}
	return s + "is not growing"
}

// demandSummary appends the sentence of the demand.
func (a *Advice) demandSummary(s []string) []string {
	if !a.ArrivalsPerSecond.Known() {
		return s
	}
	d := fmt.Sprintf("demand %s req/s: what arrives at the %s counted (finished, aborts included, plus the growth of batch and queue",
		amount(a.ArrivalsPerSecond.Float()), plural(float64(a.Replicas), "replica"))
	if a.RejectionsPerSecond > 0 {
		d += ", plus " + amount(a.RejectionsPerSecond.Float()) + " req/s refused"
	}
	d += ")"
	if a.SuccessfulPerSecond.Known() {
		d += "; they finish " + amount(a.SuccessfulPerSecond.Float()) + " req/s successfully"
		if short := a.ArrivalsPerSecond - a.SuccessfulPerSecond; short > 0 {
			d += ", " + amount(short.Float()) + " req/s short"
		}
	}
	return append(s, d)
}

// capacitySummary appends the sentence of the capacity.
func (a *Advice) capacitySummary(s []string, aborted Num) []string {
	switch {
	case a.CapacityPerReplica.Known():
		c := fmt.Sprintf("capacity %s successful req/s per replica (stop and length, read over their seconds at capacity: the mean of %s",
			amount(a.CapacityPerReplica.Float()), plural(float64(a.CapacityReplicas), "FULL replica"))
		if aborted > 0 {
			c += "; " + amount(aborted.Float()) + " req/s aborted over the window, not counted"
		}
		c += ")"
		if a.ReplicasByCapacity.Known() {
			c += fmt.Sprintf("; the demand needs %s if spread evenly (ceil(%s ÷ %s))", plural(a.ReplicasByCapacity.Float(), "replica"),
				amount(a.ArrivalsPerSecond.Float()), amount(a.CapacityPerReplica.Float()))
		}
		return append(s, c)
	case a.AtCapacity > 0 && a.uncountedAtCapacity == a.AtCapacity:
		return append(s, fmt.Sprintf("capacity not measured: %s %s, and %s", plural(float64(a.AtCapacity), "replica"), a.fullWord(),
			noFinishCounterWords(a.AtCapacity)))
	case a.uncounted > 0 && a.uncounted == a.Replicas:
		return append(s, "capacity not measured: "+noFinishCounterWords(a.Replicas)+"; fewer replicas are not advised without it")
	case a.AtCapacity > 0:
		return append(s, fmt.Sprintf("capacity not measured yet: %s %s, %s; what a batch that has just filled finishes is not what it carries",
			plural(float64(a.AtCapacity), "replica"), a.fullWord(), a.settlingWords()))
	}
	return append(s, "capacity not measured: no replica is FULL, so none shows what one carries; fewer replicas are not advised without it")
}

// backlogSummary appends the sentence of the backlog when one stands and a
// count was given.
func (a *Advice) backlogSummary(s []string, backlog Num) []string {
	if !(backlog > 0) || !a.RecommendedReplicas.Known() || a.Action == "keep" {
		return s
	}
	b := "backlog " + count(backlog.Float()) + " waiting"
	if a.BacklogClearSeconds.Known() {
		b += fmt.Sprintf(": clears in about %s at %s replicas", roughDuration(a.BacklogClearSeconds.Float()), count(a.RecommendedReplicas.Float()))
	}
	if aim := backlogDrainAim.Seconds(); a.BacklogClearSeconds > Num(aim) {
		b += fmt.Sprintf("; %s would clear it in about %s", count(a.replicasFor(backlog.Float()/aim)), roughDuration(aim))
	}
	return append(s, b)
}

// uncountedSummary appends the sentence of the replicas down.
func (a *Advice) uncountedSummary(s []string) []string {
	if a.Uncounted == 0 {
		return s
	}
	return append(s, fmt.Sprintf("%d of %s down: not counted, neither their demand nor their capacity",
		a.Uncounted, plural(float64(a.Replicas+a.Uncounted), "replica")))
}

// autoscalerWords is the HPA line: a setting, and what it would ask for now.
func (a *Advice) autoscalerWords() string {
	const head = "autoscaler setting, not a count to act on: an HPA would "
	if !a.WaitingTargetPerReplica.Known() && a.uncounted > 0 && a.uncounted == a.Replicas {
		return scaleOnUncountedWords(head, a.HPAMetric, a.uncounted)
	}
	s := scaleOnWords(head, a.HPAMetric, a.WaitingTargetPerReplica, a.CapacityPerReplica, a.TargetQueueSeconds.Float())
	if !a.HPADesired.Known() {
		return s
	}
	s += "; at a mean of " + amount(a.MeanWaitingPerReplica.Float()) + " waiting it asks for "
	switch {
	case a.HPAWithinTolerance:
		s += "no change (within its " + percent(hpaTolerance) + " tolerance)"
	case a.HPADesired == 1 && a.MeanWaitingPerReplica == 0:
		s += "1, its minimum"
	case a.RecommendedReplicas > 0 && a.HPADesired.Float() > a.RecommendedReplicas.Float()+countNoise(a.RecommendedReplicas.Float()):
		// A standing backlog read as load: the arithmetic, not a count.
		s = strings.TrimSuffix(s, "it asks for ") + fmt.Sprintf("its arithmetic, ceil(%d × %s ÷ %s) = %s, reads the backlog as load, beyond the %s the advice counts: its default policy would step to %s in its first %s and on",
			a.Replicas, amount(a.MeanWaitingPerReplica.Float()), amount(a.WaitingTargetPerReplica.Float()), count(a.HPADesired.Float()),
			count(a.RecommendedReplicas.Float()), count(hpaFirstStep(a.Replicas, a.HPADesired.Float())), roughDuration(hpaScaleUpPeriod.Seconds()))
	default:
		s += fmt.Sprintf("%s (ceil(%d × %s ÷ %s))", count(a.HPADesired.Float()), a.Replicas,
			amount(a.MeanWaitingPerReplica.Float()), amount(a.WaitingTargetPerReplica.Float()))
	}
	if a.ReplicasByQueue > a.HPADesired {
		s += fmt.Sprintf("; its %s scale-down window holds %s", roughDuration(hpaScaleDownWindow.Seconds()), count(a.ReplicasByQueue.Float()))
	}
	return s
}

// restartStalledWords is the advice's clause for n STALLED replicas.
func restartStalledWords(n int) string {
	if n == 1 {
		return "restart 1 replica STALLED: its queue waits for its engine, not for more replicas, and is not counted as demand"
	}
	return fmt.Sprintf("restart %d replicas STALLED: their queues wait for their engines, not for more replicas, and are not counted as demand", n)
}
