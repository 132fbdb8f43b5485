package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// verdict is a state with the sentences that prove it and the first action.
type verdict struct {
	State   State
	Reasons []string
	Action  string
}

// noEngineReason is the evidence for a page that answers without the
// metrics of any inference engine vtop reads.
const noEngineReason = "no inference-engine metrics on this page that vtop reads (vLLM, SGLang, trtllm-serve, TGI, llama.cpp, Dynamo): wrong port or path, or vLLM's --disable-log-stats?"

// Thresholds of the state rules. docs/verdicts.md writes the judgement
// down; TestVerdictsDocument holds it to these numbers.
const (
	// kvBoundUsage is the KV cache usage from which a full batch is
	// KV-bound rather than at the max_num_seqs cap, and the KV event's.
	kvBoundUsage = 0.9
	// atCapShare is how close to the batch cap running must be to sit at it.
	atCapShare = 0.9
	// longPromptTokens is the mean prompt length from which a slow TTFT is
	// blamed on long prompts.
	longPromptTokens = 2000
	// staleMinSamples is how many good scrapes must show no counter
	// movement before a replica is STALE.
	staleMinSamples = 3
	// fullMinSamples is how many readings, over at least fullSpan, must
	// each show a queue for a replica to be FULL: a queue that persists,
	// not requests that wait a step for the scheduler.
	fullMinSamples = 3
	fullSpan       = 5 * time.Second
	// obviousQueue, or obviousQueueBatches times the batch (llama.cpp's 2
	// slots with 6 waiting), is a queue that makes a replica FULL on two
	// readings, so that a server full at start is not first called SLOW:
	// three batches' worth, two readings apart, are still there.
	obviousQueue        = 10
	obviousQueueBatches = 3
	// preemptingSpan is the trailing time over which a material
	// preemption makes a replica PREEMPTING.
	preemptingSpan = 15 * time.Second
	// materialRecomputed is the share of generated tokens preemption must
	// recompute for a replica to be PREEMPTING: below a tenth of the work
	// redone, capping max_num_seqs takes away more throughput for good
	// than the rare preemptions cost. One preemption of a chat request
	// (1,000 prompt and 200 output tokens) over 30 s at 9 requests/s is 2 %.
	materialRecomputed = 0.10
	// materialPreempted is the share of finished requests preempted that
	// makes a replica PREEMPTING whatever it recomputes: at one in twenty
	// the p95 of the e2e latency is a preempted request's.
	materialPreempted = 0.05
	// leastEvidence is the span of readings a verdict of health needs
	// (at most the window): one second of data may hide a problem. States
	// that prove a problem are shown as soon as their evidence is in.
	leastEvidence = 10 * time.Second
)

// downVerdict reports whether the target is DOWN: the newest sample
// failed, or the newest page has no inference-engine metrics. samples
// must not be empty; run is the run of failures the newest sample ends.
func downVerdict(samples []catalogue.Sample, run failures, target string, now time.Time) (verdict, bool) {
	newest := &samples[len(samples)-1]
	if newest.OK() {
		if newest.HasEngineMetrics() {
			return verdict{}, false
		}
		return verdict{
			State:   StateDown,
			Reasons: []string{noEngineReason},
			Action:  "point vtop at the inference server's metrics (vLLM: port 8000, without --disable-log-stats; trtllm-serve: " + catalogue.TRTLLMPath + ")",
		}, true
	}
	errText := newest.Err
	reasons := []string{fmt.Sprintf("scrape failing since %s (%d failed in a row): %s",
		run.since.Format(human.Clock), run.count, errText)}
	if !run.lastGood.IsZero() {
		reasons = append(reasons, fmt.Sprintf("last good scrape at %s, %s",
			run.lastGood.Format(human.Clock), duration(now.Sub(run.lastGood))+" ago"))
	} else {
		reasons = append(reasons, noGoodScrapeYet)
	}
	action := fmt.Sprintf("check the inference server process / pod behind %s: %s", target, errText)
	return verdict{State: StateDown, Reasons: reasons, Action: action}, true
}

// failures is the run of failed scrapes that ends with the newest sample.
type failures struct {
	since    time.Time // the first failed scrape of the run
	count    int       // how many scrapes of the run failed
	lastGood time.Time // the good scrape before the run; zero if none is known
	timedOut bool      // every failure of the run was a timeout (catalogue.Sample.TimedOut)
}

// failureRun is the run of failed scrapes the newest sample ends; the zero
// run when the newest succeeded. When every sample in hand failed, the
// run may have begun before the oldest, and the previous report
// (evaluated at prevTime) carries its start and count.
func failureRun(samples []catalogue.Sample, prev *ReplicaReport, prevTime time.Time) failures {
	n := len(samples)
	if n == 0 || samples[n-1].OK() {
		return failures{}
	}
	first := n - 1
	for first > 0 && !samples[first-1].OK() {
		first--
	}
	run := failures{since: samples[first].Time, count: n - first, timedOut: true}
	for i := first; i < n; i++ {
		run.timedOut = run.timedOut && samples[i].TimedOut
	}
	if first > 0 {
		run.lastGood = samples[first-1].Time
		return run
	}
	if prev == nil || prev.DownSince.IsZero() || !prev.DownSince.Before(run.since) {
		// The run begins in hand.
		if prev != nil {
			run.lastGood = prev.LastGood
		}
		return run
	}
	return continuedRun(run, samples, prev, prevTime)
}

// continuedRun is the run in hand, every sample of which failed, carried
// on from the run the previous report had begun before the oldest.
func continuedRun(run failures, samples []catalogue.Sample, prev *ReplicaReport, prevTime time.Time) failures {
	// The failures newer than the newest sample the previous report held,
	// not than its evaluation: a scrape that waits out its timeout is
	// stamped before the evaluation that first holds it.
	seen := prevTime
	if !prev.newestSample.IsZero() {
		seen = prev.newestSample
	}
	newer := 0
	for i := range samples {
		if samples[i].Time.After(seen) {
			newer++
		}
	}
	return failures{since: prev.DownSince, count: prev.FailedScrapes + newer, lastGood: prev.LastGood,
		timedOut: run.timedOut && prev.Late}
}

// classify picks the candidate state of an up replica from its figures, in
// priority order (classifyRules), with the notes every state carries.
func classify(f *Figures, ev *evidence, cfg Config) verdict {
	v := classifyRules(f, ev, cfg)
	if note := preemptionNote(v.State, f, ev); note != "" {
		v.Reasons = append(v.Reasons, note)
	}
	v.Reasons = append(v.Reasons, signalNotes(f, ev)...)
	v.Reasons = append(v.Reasons, engineNotes(v.State, ev)...)
	return v
}

// stateRule is one rule of classify and the judgement it makes.
type stateRule struct {
	judgement catalogue.Judgement
	judge     func(*Figures, *evidence, Config) (verdict, bool)
}

// stateRules are classify's rules in priority order, after sleeping and
// warming; a state the engine's page cannot show is not judged.
var stateRules = []stateRule{
	{catalogue.JudgeStale, stalledVerdict},
	{catalogue.JudgePreempting, preemptingVerdict},
	{catalogue.JudgeFull, fullVerdict},
	{catalogue.JudgeFull, rejectingVerdict},
	{catalogue.JudgeSlow, slowVerdict},
	{catalogue.JudgeStale, staleVerdict},
	{catalogue.JudgeIdle, idleVerdict},
}

func classifyRules(f *Figures, ev *evidence, cfg Config) verdict {
	if v, ok := sleepingVerdict(f, ev); ok {
		return v
	}
	if ev.Samples < 2 {
		return warmingUpVerdict(f, ev)
	}
	for _, rule := range stateRules {
		if !ev.canJudge(rule.judgement) {
			continue
		}
		if v, ok := rule.judge(f, ev, cfg); ok {
			return v
		}
	}
	if v, ok := unprovenVerdict(f, ev, cfg); ok {
		return v
	}
	if v, ok := recoveringVerdict(f, ev, cfg); ok {
		return v
	}
	return verdict{State: StateHealthy, Reasons: []string{healthySummary(f)}}
}

// sloFigure is a window figure the states judge against an SLO, and the
// unit its histogram counts.
type sloFigure struct {
	name, unit string
	q          Quantiles
	slo        time.Duration
}

// overSLOFigures are the window's p99 TTFT, ITL and e2e over their SLOs;
// with exiting, over the SLO less cfg.SLOExitMargin. A replica is never
// HEALTHY beside one of them.
func overSLOFigures(f *Figures, cfg Config, exiting bool) []sloFigure {
	var over []sloFigure
	for _, l := range []sloFigure{{"TTFT", "requests", f.TTFT, cfg.SLOTTFT}, {"ITL", "tokens", f.ITL, cfg.SLOITL}, {"e2e", "requests", f.E2E, cfg.SLOE2E}} {
		limit := l.slo.Seconds()
		if exiting {
			limit *= 1 - cfg.SLOExitMargin
		}
		if l.slo > 0 && l.q.P99.Float() > limit {
			over = append(over, l)
		}
	}
	return over
}

// recoveringVerdict: no other state holds, but a window figure is over
// its SLO, held there by a backlog that is gone (queueGone) or by an e2e
// no other state judges. The reasons say when the backlog cleared and
// when its requests leave the window.
func recoveringVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	over := overSLOFigures(f, cfg, ev.WasRecovering)
	if len(over) == 0 {
		return verdict{}, false
	}
	heads := make([]string, len(over))
	for i, o := range over {
		heads[i] = sloHead(o.name, o.q, o.slo, cfg)
	}
	figures := strings.Join(heads, ", ")
	c := ev.Cleared
	if c.At.IsZero() {
		return verdict{State: StateRecovering, Action: recoveringAction, Reasons: []string{
			fmt.Sprintf("the window's %s, while no other state holds (no queue stands, no preemption)", figures),
			healthySummary(f)}}, true
	}
	until := c.At.Add(cfg.Window)
	reasons := []string{fmt.Sprintf("the backlog cleared at %s: no request has waited since (the window's queue peaked at %s)",
		c.At.Format(human.Clock), count(ev.queueStats().Max))}
	if c.TTFTMean.Known() {
		recent := fmt.Sprintf("first tokens of the last %s came in %s on average (mean TTFT)", seconds(c.Seconds), c.TTFTMean.Seconds())
		if f.Prefill.P99.Known() {
			recent += ", prefill p99 " + f.Prefill.P99Bucket.Seconds(f.Prefill.P99)
		}
		reasons = append(reasons, recent)
	}
	reasons = append(reasons, fmt.Sprintf("the window's %s still holds the backlog's requests, until about %s (%s after it cleared)",
		figures, until.Format(human.Clock), seconds(cfg.Window.Seconds())))
	return verdict{State: StateRecovering, Reasons: reasons,
		Action: fmt.Sprintf("%s; the window clears by about %s", recoveringAction, until.Format(human.Clock))}, true
}

// leastSpan is the span of readings a verdict of health needs under cfg:
// leastEvidence, or the whole window when it is shorter.
func leastSpan(cfg Config) time.Duration { return min(leastEvidence, cfg.Window) }

// enoughForHealth reports whether the window holds the least evidence a
// verdict of health (or idleness) needs, allowing for scrape jitter.
func (ev *evidence) enoughForHealth(cfg Config) bool {
	return ev.EvidenceSeconds >= leastSpan(cfg).Seconds()-0.05
}

// unprovenVerdict is the state of a replica with no problem found whose
// health is not proven: too little evidence (WARMING), figures refused,
// or no way to judge SLOW (UNJUDGED).
func unprovenVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	if !ev.enoughForHealth(cfg) {
		return verdict{State: StateWarming, Reasons: append([]string{warmingReason(ev, cfg), healthySummary(f)}, tooFewNotes(f, ev, cfg)...)}, true
	}
	if v, ok := refusedVerdict(f, ev, cfg); ok {
		return v, true
	}
	if !ev.Router && (!ev.Kind.CanJudge(catalogue.JudgeSlow) || ev.NoLatency) {
		why := "this page exports no latency histograms"
		if c := ev.Kind; c < catalogue.NumEngineKinds && catalogue.Capabilities[c].Cannot[catalogue.JudgeSlow] != "" {
			why = catalogue.Capabilities[c].Cannot[catalogue.JudgeSlow]
		}
		return verdict{State: StateUnjudged, Reasons: []string{
			cannotText(catalogue.JudgeSlow, why) + "; no other problem shown", healthySummary(f)}}, true
	}
	if notes := tooFewNotes(f, ev, cfg); len(notes) > 0 {
		return verdict{State: StateUnjudged, Reasons: append(notes, healthySummary(f))}, true
	}
	return verdict{}, false
}

// warmingUpVerdict is the state while the window holds one good scrape:
// only gauges are known, so nothing is proven, not even idle. A long queue
// is named: it is FULL on the next reading if it persists.
func warmingUpVerdict(f *Figures, ev *evidence) verdict {
	reason := fmt.Sprintf("warming up: %d good scrape in the window, rates need two; running %s, waiting %s",
		ev.Samples, count(f.Running.Float()), count(f.Waiting.Float()))
	reasons := []string{reason}
	if obviousQueueAt(f.Waiting.Float(), f.Running.Float()) {
		reasons = append(reasons, fmt.Sprintf("a queue of %s at running %s: FULL if the next reading shows it too",
			count(f.Waiting.Float()), count(f.Running.Float())))
	}
	return verdict{State: StateWarming, Reasons: reasons}
}

// preemptionCost is what preemption cost over the window.
type preemptionCost struct {
	// Recomputed is the tokens preemption recomputes over the tokens
	// generated; Preempted the share of finished requests preempted.
	Recomputed, Preempted Num
}

// costOf prices the window's preemption.
func costOf(f *Figures) preemptionCost {
	c := preemptionCost{Recomputed: ratio(f.RecomputedTokensPerSecond, f.GenerationTokensPerSecond),
		Preempted: ratio(f.PreemptionsPerSecond, f.RequestsPerSecond)}
	if m := f.PreemptionsPerRequest.Mean; m.Known() {
		c.Preempted = m
	}
	return c
}

// priced reports whether either measure of the cost is known.
func (c preemptionCost) priced() bool { return c.Recomputed.Known() || c.Preempted.Known() }

// material reports whether the cost is material: either measure at its
// threshold, or neither known (a preemption that cannot be priced is
// judged as a preemption).
func (c preemptionCost) material() bool {
	return !c.priced() || c.Recomputed >= materialRecomputed || c.Preempted >= materialPreempted
}

// text is the cost in words: "recomputing 2% of generated tokens, 0.4% of
// requests", the unknown measures left out.
func (c preemptionCost) text() string {
	var parts []string
	if c.Recomputed.Known() {
		parts = append(parts, "recomputing "+percent(c.Recomputed.Float())+" of generated tokens")
	}
	if c.Preempted.Known() {
		parts = append(parts, percent(c.Preempted.Float())+" of requests")
	}
	return strings.Join(parts, ", ")
}

// preemptingVerdict: the preemption counter rose in the last
// preemptingSpan, and preemption's cost over the window is material. A
// rare preemption is a reason on the state the replica is in
// (preemptionNote).
func preemptingVerdict(f *Figures, ev *evidence, _ Config) (verdict, bool) {
	cost := costOf(f)
	if !(ev.Trail.Preemptions > 0) || !cost.material() {
		return verdict{}, false
	}
	reasons := []string{fmt.Sprintf("%s over %s (%s/s), KV cache at %s",
		plural(ev.Preemptions, "preemption"), seconds(ev.SpanSeconds), amount(f.PreemptionsPerSecond.Float()), percent(f.KVCacheUsage.Float()))}
	if cost.priced() {
		reasons = append(reasons, fmt.Sprintf("preemption is %s preempted (material from %s of generated tokens recomputed or %s of requests preempted)",
			cost.text(), percent(materialRecomputed), percent(materialPreempted)))
	} else {
		reasons = append(reasons, "its cost cannot be priced: the page counts neither the tokens generated nor the requests finished")
	}
	if perRequest := preemptionsPerRequestText(f); perRequest != "" {
		reasons = append(reasons, perRequest)
	}
	switch {
	case f.RecomputedMeasured:
		reasons = append(reasons, fmt.Sprintf("recomputing %s prompt tokens/s (vllm:prompt_tokens_recomputed)",
			count(f.RecomputedTokensPerSecond.Float())))
	case f.RecomputedTokensPerSecond.Known():
		reasons = append(reasons, fmt.Sprintf("recomputing about %s tokens/s (preemptions/s × (mean prompt + half the mean output))",
			count(f.RecomputedTokensPerSecond.Float())))
	}
	action := preemptingAction
	if f.MaxSeqsKVHolds.Known() {
		action = fmt.Sprintf("cap max_num_seqs at %s (what the KV cache holds: %s tokens ÷ %s tokens per request), or add VRAM / replicas",
			count(f.MaxSeqsKVHolds.Float()), count(f.KVCapacityTokens.Float()), count(float64(f.MeanPromptTokens+f.MeanGenerationTokens)))
	}
	if f.RecomputedTokensPerSecond.Known() {
		action += fmt.Sprintf("; preemption is recomputing %s tokens/s", count(f.RecomputedTokensPerSecond.Float()))
	}
	return verdict{State: StatePreempting, Reasons: reasons, Action: action}, true
}

// preemptionNote is the reason a replica not PREEMPTING gives for the
// preemptions of its window: their price, and why they are not the
// state ("" when the window holds none, or the page cannot show them).
func preemptionNote(state State, f *Figures, ev *evidence) string {
	if state == StatePreempting || !(ev.Preemptions > 0) || !ev.canJudge(catalogue.JudgePreempting) {
		return ""
	}
	cost := costOf(f)
	why := "not material"
	if cost.material() && !(ev.Trail.Preemptions > 0) {
		why = "none in the last " + seconds(preemptingSpan.Seconds())
	}
	price := amount(f.PreemptionsPerSecond.Float()) + "/s"
	if cost.priced() {
		price += ", " + cost.text()
	}
	return fmt.Sprintf("%s over %s (%s): %s", plural(ev.Preemptions, "preemption"), seconds(ev.SpanSeconds), price, why)
}

// fullVerdict: requests wait at the batch in the newest readings
// (fullEvidence): a batch at its capacity, whatever holds it there; the
// reasons say which. A queue that shrinks is FULL until it is gone.
func fullVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	if !fullEvidence(f, ev, cfg) {
		return verdict{}, false
	}
	return verdict{State: StateFull, Reasons: fullReasons(f, ev), Action: fullAction(f, ev, cfg)}, true
}

// fullEvidence reports whether the newest readings prove a replica FULL:
// a queue in each of the last fullMinSamples readings with requests
// running; an obvious queue in the two newest; a queue the page cannot
// count (poolQueue); or a p99 TTFT over the SLO that is mostly queue time
// while the two newest hold a queue. A replica FULL stays so until its
// two newest readings hold no queue.
func fullEvidence(f *Figures, ev *evidence, cfg Config) bool {
	t := &ev.Trail
	if !(t.Running.Max > 0) || ev.Samples < 2 {
		return false
	}
	switch {
	case t.Queue.N >= fullMinSamples && t.Queue.Min > 0:
		return true
	case t.LastTwoQueue.N == 2 && obviousQueueAt(t.LastTwoQueue.Min, t.Running.Max):
		return true
	case ev.WasFull && t.LastTwoQueue.Max > 0:
		return true
	case ev.PoolQueue.proves(ev):
		return true
	}
	queueShare := ratio(f.Queue.Mean, f.TTFT.Mean)
	return t.LastTwoQueue.N == 2 && t.LastTwoQueue.Min > 0 && queueShare >= dominantShare &&
		cfg.SLOTTFT > 0 && f.TTFT.P99.Float() > cfg.SLOTTFT.Seconds()
}

// obviousQueueAt reports whether waiting beside running requests is an
// obvious queue (obviousQueue, obviousQueueBatches).
func obviousQueueAt(waiting, running float64) bool {
	return running > 0 && (waiting >= obviousQueue || waiting >= obviousQueueBatches*running)
}

// fullAction is FULL's first action: more replicas, and the autoscaling
// target from what this replica finishes; the fleet writes its own in
// their place (alignFullActions).
func fullAction(f *Figures, ev *evidence, cfg Config) string {
	if ev.queueOnlyInPool() {
		return poolQueueAction
	}
	capacity := successfulPerSecond(f)
	target := cfg.TargetQueueTime.Seconds()
	return scaleOnWords("add replicas; ", waitingMetric(ev.Kind), waitingTarget(capacity, target), capacity, target)
}

// dominantShare is the share of mean TTFT from which one phase, queue or
// prefill, is named as its cause.
const dominantShare = 0.5

// slowVerdict: not full, but p99 TTFT or ITL is over its SLO. The cause
// named follows the histograms: see ttftCause and itlCause.
func slowVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	ttftOver, ttftFew := overSLO(f.TTFT, cfg.SLOTTFT, ev.WasSlow, cfg)
	itlOver, itlFew := overSLO(f.ITL, cfg.SLOITL, ev.WasSlow, cfg)
	ttftOver, itlOver = ttftOver && !ttftFew && !queueGone(f, ev, cfg), itlOver && !itlFew
	if !ttftOver && !itlOver {
		return verdict{}, false
	}
	var reasons, actions []string
	if ttftOver {
		r, a := ttftCause(f, ev, cfg)
		reasons, actions = append(reasons, r...), append(actions, a)
	}
	if itlOver {
		r, a := itlCause(f, cfg)
		reasons, actions = append(reasons, r...), append(actions, a)
	}
	return verdict{State: StateSlow, Reasons: reasons, Action: strings.Join(actions, "; ")}, true
}

// queueGone reports whether the window's slow TTFT is a queue's that is
// gone: the window held a queue, the newest readings hold none, and the
// time besides the wait is within the SLO (the prefill's p99, or else
// most of the mean TTFT was the queue's). A replica is not SLOW for a
// queue it no longer has.
func queueGone(f *Figures, ev *evidence, cfg Config) bool {
	if !(ev.Trail.LastTwoQueue.N == 2 && ev.Trail.LastTwoQueue.Max == 0 && ev.queueStats().Max > 0 && f.Waiting == 0) {
		return false
	}
	if f.Prefill.P99.Known() {
		return f.Prefill.P99.Float() <= cfg.SLOTTFT.Seconds()
	}
	return ratio(f.Queue.Mean, f.TTFT.Mean) >= dominantShare
}

// overSLO reports whether the p99 of q is over its SLO, less
// cfg.SLOExitMargin for a replica that was SLOW. tooFew is true when it
// is over but read from fewer than cfg.MinObservations observations.
func overSLO(q Quantiles, slo time.Duration, wasSlow bool, cfg Config) (over, tooFew bool) {
	if slo <= 0 || !q.P99.Known() {
		return false, false
	}
	limit := slo.Seconds()
	if wasSlow {
		limit *= 1 - cfg.SLOExitMargin
	}
	over = q.P99.Float() > limit
	few := !(q.Observations.Float() >= float64(cfg.MinObservations))
	if over && few && q.P50.Float() > limit {
		// The p99 of a handful is their maximum, which one request sets;
		// their median over the SLO says most of them missed it.
		return true, false
	}
	return over, over && few
}

// sloHead is the start of the reason a p99 makes a replica SLOW.
func sloHead(name string, q Quantiles, slo time.Duration, cfg Config) string {
	if q.P99.Float() > slo.Seconds() {
		return fmt.Sprintf("p99 %s %s over the %s SLO", name, q.P99Bucket.Seconds(q.P99), seconds(slo.Seconds()))
	}
	return fmt.Sprintf("p99 %s %s, not yet below %s (%s under the %s SLO)", name, q.P99Bucket.Seconds(q.P99),
		seconds(slo.Seconds()*(1-cfg.SLOExitMargin)), percent(cfg.SLOExitMargin), seconds(slo.Seconds()))
}

// fewButMedian is the reason a p99 from too few observations still counts.
func fewButMedian(unit string, q Quantiles, cfg Config) []string {
	if q.Observations.Float() >= float64(cfg.MinObservations) {
		return nil
	}
	return []string{fmt.Sprintf("only %s %s in the window, but their p50, %s, is over the SLO too",
		countBelow(q.Observations.Float(), cfg.MinObservations), unit, q.P50Bucket.Seconds(q.P50))}
}

// tooFewNotes are the reasons of a replica whose p99 is over an SLO but
// read from too few observations to make it SLOW.
func tooFewNotes(f *Figures, ev *evidence, cfg Config) []string {
	var notes []string
	for _, l := range []sloFigure{{"TTFT", "requests", f.TTFT, cfg.SLOTTFT}, {"ITL", "tokens", f.ITL, cfg.SLOITL}} {
		if _, few := overSLO(l.q, l.slo, ev.WasSlow, cfg); few {
			notes = append(notes, fmt.Sprintf("too few %s to judge p99 %s %s against the %s SLO: %s in the window, fewer than %d",
				l.unit, l.name, l.q.P99Bucket.Seconds(l.q.P99), seconds(l.slo.Seconds()), countBelow(l.q.Observations.Float(), cfg.MinObservations), cfg.MinObservations))
		}
	}
	return notes
}

// ttftCause splits mean TTFT into its queue and prefill phases (means add
// up, quantiles do not) and names the phase that dominates.
func ttftCause(f *Figures, ev *evidence, cfg Config) ([]string, string) {
	reasons := append([]string{sloHead("TTFT", f.TTFT, cfg.SLOTTFT, cfg)}, fewButMedian("requests", f.TTFT, cfg)...)
	queue, prefill := ratio(f.Queue.Mean, f.TTFT.Mean), ratio(f.Prefill.Mean, f.TTFT.Mean)
	if !queue.Known() && !prefill.Known() {
		reasons = append(reasons, "queue and prefill times n/a: the server does not export their histograms")
		return reasons, fmt.Sprintf("TTFT cannot be split into waiting and prefill here: check the queue (waiting %s) and the %s",
			count(f.Waiting.Float()), promptWords(f))
	}
	reasons = append(reasons, fmt.Sprintf("mean TTFT %s: queue %s (%s), prefill %s (%s)",
		seconds(f.TTFT.Mean.Float()), seconds(f.Queue.Mean.Float()), percent(queue.Float()),
		seconds(f.Prefill.Mean.Float()), percent(prefill.Float())))
	kind := ev.Kind
	switch {
	case ev.Trail.LastTwoQueue.N == 2 && ev.Trail.LastTwoQueue.Min > 0 && !(f.WaitingDeferred > 0 && !(f.WaitingCapacity > 0)):
		// A queue stands now: the split, counted as requests finish, lags it.
		return reasons, fmt.Sprintf("a queue stands (running %s, waiting %s): requests wait for a batch slot; add replicas, and scale on %s",
			count(f.Running.Float()), count(f.Waiting.Float()), waitingMetric(kind))
	case queue >= dominantShare && f.WaitingDeferred > 0 && !(f.WaitingCapacity > 0):
		return reasons, deferredAction(f)
	case queue >= dominantShare:
		return reasons, fmt.Sprintf("requests wait for a batch slot (running %s, waiting %s): add replicas, and scale on %s",
			count(f.Running.Float()), count(f.Waiting.Float()), waitingMetric(kind))
	case prefill >= dominantShare:
		return reasons, prefillAction(f)
	case queue.Known() && prefill.Known():
		return reasons, fmt.Sprintf("TTFT is mostly outside queue and prefill (%s of it): check the API server (tokenization, a busy event loop) and the network",
			percent(float64(1-queue-prefill)))
	}
	return reasons, "TTFT cannot be split: one of the queue and prefill histograms is missing"
}

// prefillAction is the action when prefill dominates TTFT.
func prefillAction(f *Figures) string {
	if f.MeanPromptTokens >= longPromptTokens {
		return fmt.Sprintf("long prompts (mean %s tokens): shorten them, enable prefix caching (hit rate %s), or chunked prefill",
			count(f.MeanPromptTokens.Float()), percent(f.PrefixCacheHitRate.Float()))
	}
	return fmt.Sprintf("prefill is slow for its length (%s): enable prefix caching (hit rate %s) and chunked prefill, and check what shares the GPU",
		promptWords(f), percent(f.PrefixCacheHitRate.Float()))
}

// itlCause tells ITL spikes (median within the SLO: prefill chunks in the
// batch) from slow steps (median over it: the batch size).
func itlCause(f *Figures, cfg Config) ([]string, string) {
	slo := cfg.SLOITL.Seconds()
	if f.ITL.P50.Float() > slo {
		return []string{
				sloHead("ITL", f.ITL, cfg.SLOITL, cfg),
				fmt.Sprintf("p50 ITL %s over the %s SLO too: every decode step is slow", f.ITL.P50Bucket.Seconds(f.ITL.P50), seconds(slo)),
			}, fmt.Sprintf("every decode step is slow at running %s: lower max_num_seqs to trade throughput for ITL, or add replicas",
				count(f.Running.Float()))
	}
	reason := fmt.Sprintf("%s, p50 %s within it, while prefilling %s prompt tokens/s",
		sloHead("ITL", f.ITL, cfg.SLOITL, cfg), f.ITL.P50Bucket.Seconds(f.ITL.P50), count(f.PromptTokensPerSecond.Float()))
	if f.PromptTokensPerSecond > 0 {
		return []string{reason}, "ITL spikes with prefill: prefill interference; enable chunked prefill with a smaller max_num_batched_tokens, or split prefill and decode"
	}
	return []string{reason}, "ITL spikes with no prefill in the window: not prefill interference; check preemptions and the host CPU"
}

// promptWords is "mean prompt 6,000 tokens", or "prompt length n/a".
func promptWords(f *Figures) string {
	if !f.MeanPromptTokens.Known() {
		return "prompt length n/a"
	}
	return "mean prompt " + count(f.MeanPromptTokens.Float()) + " tokens"
}

// staleAction is the first action for a replica whose metrics do not move.
const staleAction = "check PROMETHEUS_MULTIPROC_DIR (one shared, emptied directory for every API server process) and the metrics exporter"

// frozenStaleNote is STALE's reason that the frozen picture has another
// cause vtop cannot tell apart from it.
const frozenStaleNote = "an engine that stopped stepping while no request arrives looks the same: if the exporter is sound, restart the engine"

// staleVerdict: the server reports running requests, but nothing on its
// page moved over the window, gauges and HTTP requests included; or every
// engine value is zero while the HTTP request counter rose (an empty
// multiprocess directory).
func staleVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	frozen := still(ev.Running) && still(ev.Waiting) && still(ev.KVCacheUsage) && !(ev.HTTPIncrease > 0) && !ev.GCMoved
	if ev.Samples >= staleMinSamples && ev.Running.Min > 0 && ev.CountersKnown && !ev.CountersMoved && frozen && ev.longEnoughForStale(cfg) {
		return verdict{State: StateStale, Action: staleAction, Reasons: []string{fmt.Sprintf(
			"running %s but nothing on the page moved over %s (%d scrapes), gauges included", count(ev.Running.Last), seconds(ev.SpanSeconds), ev.Samples),
			frozenStaleNote}}, true
	}
	if ev.AllZero && ev.HTTPIncrease > 0 {
		return verdict{State: StateStale, Action: staleAction, Reasons: []string{fmt.Sprintf(
			"every engine value is 0 while http_requests_total rose by %s over %s", count(ev.HTTPIncrease), seconds(ev.SpanSeconds))}}, true
	}
	return verdict{}, false
}

// idleVerdict: nothing ran or waited, and no request finished, over at
// least the least evidence: the newest stretch with no work counted
// (quietSpan) where the page counts work, else the window. Never on
// figures refused: a refused value is no zero.
func idleVerdict(_ *Figures, ev *evidence, cfg Config) (verdict, bool) {
	if ev.Refused != 0 {
		return verdict{}, false
	}
	if q := &ev.Quiet; q.Known {
		if q.Seconds < leastSpan(cfg).Seconds()-0.05 || q.Running.Max > 0 || q.Waiting.Max > 0 {
			return verdict{}, false
		}
		if q.Found {
			return verdict{State: StateIdle, Reasons: []string{fmt.Sprintf(idleSinceText,
				q.Since.Format(human.Clock), seconds(q.Seconds))}}, true
		}
		return verdict{State: StateIdle, Reasons: []string{fmt.Sprintf(idleText, seconds(q.Seconds))}}, true
	}
	if ev.Finished > 0 || ev.Running.Max > 0 || ev.Waiting.Max > 0 || !ev.enoughForHealth(cfg) {
		return verdict{}, false
	}
	return verdict{State: StateIdle, Reasons: []string{fmt.Sprintf(idleText, seconds(ev.SpanSeconds))}}, true
}

// IDLE's reasons: over a window with no work, and since the last work
// in it.
const (
	idleText      = "no request finished, ran or waited over %s"
	idleSinceText = "no request finished, ran or waited and no token was counted since %s (%s)"
)

// healthySummary is the one line of evidence of a healthy replica.
func healthySummary(f *Figures) string {
	reqs := amount(f.RequestsPerSecond.Float()) + " req/s"
	if f.MaterialAborts() {
		// The aborts are counted in the req/s: what succeeded beside it.
		reqs += " (" + amount(successfulPerSecond(f).Float()) + " successful)"
	}
	return fmt.Sprintf("running %s, waiting %s, %s, p99 TTFT %s, KV cache %s",
		count(f.Running.Float()), count(f.Waiting.Float()), reqs,
		f.TTFT.P99Bucket.Seconds(f.TTFT.P99), percent(f.KVCacheUsage.Float()))
}

// holdNote marks the reason that says a new state is pending.
const holdNote = "pending: "

// hysteresis decides the state shown given the candidate and the previous
// evaluation, as Prometheus's for: moves an alert from pending to firing.
// A fact or a proof shows at once (showsAtOnce); any other change must be
// the candidate on n consecutive evaluations, while the state shown keeps
// its action and its reasons are today's figures with the pending note.
func hysteresis(c verdict, prev *ReplicaReport, n int, f *Figures) (shown verdict, pending State, pendingCount int) {
	if showsAtOnce(c, prev, n) {
		return c, c.State, 0
	}
	count := 1
	if prev.Pending == c.State && prev.PendingCount > 0 {
		count = prev.PendingCount + 1
	}
	if count >= n {
		return c, c.State, 0
	}
	first := ""
	if len(c.Reasons) > 0 {
		first = c.Reasons[0]
	}
	held := verdict{State: prev.State, Action: prev.Action, Reasons: []string{
		healthySummary(f),
		fmt.Sprintf("%s%s (%d of %d readings): %s", holdNote, c.State, count, n, first),
	}}
	return held, c.State, count
}

// showsAtOnce tells whether the candidate c is shown without being held
// for n evaluations (see hysteresis).
func showsAtOnce(c verdict, prev *ReplicaReport, n int) bool {
	if prev == nil || n <= 1 {
		return true
	}
	// Holding the first evaluations' provisional state back would delay
	// the first real one.
	settling := prev.Samples < fullMinSamples
	// FULL and PREEMPTING are proof when they end a state that asks
	// nothing; a move between urgent states is held like any other.
	proven := (c.State == StateFull || c.State == StatePreempting) && !urgent(prev.State) ||
		c.State == StateStalled
	return settling || c.State == prev.State || proven || factState(c.State) || factState(prev.State)
}

// factState reports whether s is a fact of the scrapes or the page (DOWN,
// WARMING, UNJUDGED, SLEEPING), shown at once and left at once.
func factState(s State) bool {
	return s == StateDown || s == StateWarming || s == StateUnjudged || s == StateSleeping
}

// urgent reports whether s asks for action on the replica's load.
func urgent(s State) bool {
	return s == StateFull || s == StatePreempting || s == StateSlow
}

// Late answers: a scrape that got no answer within its timeout proves
// less than a refused connection, since the host that scrapes may be
// loaded.
const (
	// lateScrapes is how many scrapes in a row must time out before a
	// replica is DOWN: one slow round on a loaded host is not an outage.
	lateScrapes = 3
	// lateRoundMinTargets is the fewest targets from which most of them
	// timing out at once is read as vtop's failure rather than theirs.
	lateRoundMinTargets = 4
)

// isLate reports whether a run of failures leaves the replica late rather
// than DOWN: every failure timed out, and it has not repeated lateScrapes
// times or most of the fleet timed out at once.
func isLate(run failures, lateRound bool) bool {
	return run.count > 0 && run.timedOut && (run.count < lateScrapes || lateRound)
}

// lateReport is the report of a late replica: its previous evaluation,
// marked late with the newest failure; the history has a gap here.
func lateReport(prev *ReplicaReport, run failures, newest *catalogue.Sample, now time.Time) ReplicaReport {
	rep := *prev
	rep.Late = true
	rep.Error = newest.Err
	rep.DownSince, rep.FailedScrapes = run.since, run.count
	rep.newestSample = newest.Time
	rep.Point = gapPoint(now, rep.State)
	return rep
}

// lateVerdict is the state of a late replica with no earlier verdict to
// keep: nothing is proven, neither down nor healthy.
func lateVerdict(newest *catalogue.Sample) verdict {
	return verdict{State: StateWarming, Reasons: []string{
		"late: " + newest.Err + ", and no earlier verdict to keep; DOWN if it repeats " + plural(lateScrapes, "time") + " in a row"}}
}

// LateNote is the sentence a late replica is marked with: "late: no
// answer within 800ms (1 in a row); figures of 14:03:09"; empty when r is
// not late.
func LateNote(r *ReplicaReport) string {
	if !r.Late {
		return ""
	}
	note := fmt.Sprintf("late: %s (%d in a row)", r.Error, r.FailedScrapes)
	if r.LastGood.IsZero() {
		return note + "; " + noGoodScrapeYet
	}
	return note + "; figures of " + r.LastGood.Format(human.Clock)
}

// noGoodScrapeYet is said of a target with no good scrape: not "never
// answered", since a server that answers with an error status did answer.
const noGoodScrapeYet = "no successful scrape yet"

// lateRound is the fleet's notice when more than half of at least
// lateRoundMinTargets targets timed out in the same evaluation, having
// answered before; empty otherwise. befores are their previous reports.
func lateRound(targets []catalogue.Readings, befores []*ReplicaReport, now time.Time) string {
	if len(targets) < lateRoundMinTargets {
		return ""
	}
	n, problem := 0, ""
	for i := range targets {
		samples := upTo(targets[i].Samples, now)
		if len(samples) == 0 {
			continue
		}
		newest, prev := &samples[len(samples)-1], befores[i]
		if newest.TimedOut && prev != nil && prev.State != StateDown && !prev.LastGood.IsZero() {
			n, problem = n+1, newest.Err
		}
	}
	if 2*n <= len(targets) {
		return ""
	}
	return fmt.Sprintf("%d of %d targets at once: %s; likely this host or its network, not the replicas", n, len(targets), problem)
}
