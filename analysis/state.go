package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
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

// Thresholds of the state rules.
const (
	// flatRunningFraction and flatRunningAbsolute bound how much running
	// may vary over the window and still be "flat" (at a cap): 10 % of its
	// mean, or 2 requests, whichever is larger.
	flatRunningFraction = 0.10
	flatRunningAbsolute = 2
	// kvBoundUsage is the KV cache usage from which a full batch is
	// KV-bound rather than at the max_num_seqs cap, and the threshold of
	// the KV event.
	kvBoundUsage = 0.9
	// longPromptTokens is the mean prompt length from which a slow TTFT is
	// blamed on long prompts.
	longPromptTokens = 2000
	// staleMinSamples is how many good scrapes (two intervals) must show
	// no counter movement before a replica is STALE.
	staleMinSamples = 3
	// fullMinSamples is how many good scrapes must show a persistent
	// queue before a replica is FULL.
	fullMinSamples = 3
	// obviousQueue is a queue long enough to call a replica full on two
	// readings, so that a server full at start is not first called SLOW.
	obviousQueue = 10
)

// downVerdict reports whether the target is DOWN: the newest sample
// failed, or the newest page has no inference-engine metrics. samples are all the
// target's samples up to now, oldest first, and must not be empty.
func downVerdict(samples []catalogue.Sample, target string, now time.Time) (verdict, bool) {
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
	first := len(samples) - 1
	for first > 0 && !samples[first-1].OK() {
		first--
	}
	failures := len(samples) - first
	errText := newest.Err
	reasons := []string{fmt.Sprintf("scrape failing since %s (%d failed in a row): %s",
		samples[first].Time.Format("15:04:05"), failures, errText)}
	if first > 0 {
		lastGood := samples[first-1].Time
		reasons = append(reasons, fmt.Sprintf("last good scrape at %s, %s",
			lastGood.Format("15:04:05"), sinceText(now, lastGood)))
	} else {
		reasons = append(reasons, "no successful scrape yet")
	}
	action := fmt.Sprintf("check the inference server process / pod behind %s: %s", target, errText)
	if newest.ErrSource != "" {
		// The source vtop reads through failed, not the replica: the
		// replica may well be serving.
		action = fmt.Sprintf("check %s, which vtop reads this replica through; the replica itself may be fine", newest.ErrSource)
	}
	return verdict{State: StateDown, Reasons: reasons, Action: action}, true
}

// classify picks the candidate state of an up replica from its figures, in
// priority order: sleeping (the engine says so), warming (one reading
// proves nothing else), preempting, full, slow, stale, idle, healthy. A
// state the engine's page cannot show is not judged, and the reasons say
// so (see engineNotes).
func classify(f *Figures, ev *evidence, httpIncrease float64, cfg Config) verdict {
	v := classifyRules(f, ev, httpIncrease, cfg)
	v.Reasons = append(v.Reasons, signalNotes(f, ev)...)
	v.Reasons = append(v.Reasons, engineNotes(v.State, ev)...)
	return v
}

// stateRule is one rule of classify and the judgement it makes.
type stateRule struct {
	judgement catalogue.Judgement
	judge     func(*Figures, *evidence, float64, Config) (verdict, bool)
}

// stateRules are classify's rules in priority order.
var stateRules = []stateRule{
	{catalogue.JudgePreempting, preemptingVerdict},
	{catalogue.JudgeFull, fullVerdict},
	{catalogue.JudgeFull, rejectingVerdict},
	{catalogue.JudgeSlow, slowVerdict},
	{catalogue.JudgeStale, staleVerdict},
	{catalogue.JudgeIdle, idleVerdict},
}

func classifyRules(f *Figures, ev *evidence, httpIncrease float64, cfg Config) verdict {
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
		if v, ok := rule.judge(f, ev, httpIncrease, cfg); ok {
			return v
		}
	}
	return verdict{State: StateHealthy, Reasons: append([]string{healthySummary(f)}, tooFewNotes(f, ev, cfg)...)}
}

// warmingUpVerdict is the state while the window holds one good scrape:
// only gauges are known, so no state of health can be proven, not even
// idle (requests may have come and gone between the scrapes). A long queue
// is named: it is FULL on the next reading if it persists.
func warmingUpVerdict(f *Figures, ev *evidence) verdict {
	reason := fmt.Sprintf("warming up: %d good scrape in the window, rates need two; running %s, waiting %s",
		ev.Samples, count(f.Running.Float()), count(f.Waiting.Float()))
	reasons := []string{reason}
	if f.Waiting >= obviousQueue && f.Running > 0 {
		reasons = append(reasons, fmt.Sprintf("a queue of %s at running %s: FULL if the next reading shows it too",
			count(f.Waiting.Float()), count(f.Running.Float())))
	}
	return verdict{State: StateWarming, Reasons: reasons}
}

// preemptingVerdict: the preemption counter rose in the window.
func preemptingVerdict(f *Figures, ev *evidence, _ float64, _ Config) (verdict, bool) {
	if !(ev.Preemptions > 0) {
		return verdict{}, false
	}
	reasons := []string{fmt.Sprintf("%s over %s (%s/s), KV cache at %s",
		plural(ev.Preemptions, "preemption"), seconds(ev.SpanSeconds), amount(f.PreemptionsPerSecond.Float()), percent(f.KVCacheUsage.Float()))}
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
	action := "lower max_num_seqs (or raise gpu_memory_utilization), or add VRAM / replicas"
	if f.MaxSeqsKVHolds.Known() {
		action = fmt.Sprintf("cap max_num_seqs at %s (what the KV cache holds: %s tokens ÷ %s tokens per request), or add VRAM / replicas",
			count(f.MaxSeqsKVHolds.Float()), count(f.KVCapacityTokens.Float()), count(float64(f.MeanPromptTokens+f.MeanGenerationTokens)))
	}
	if f.RecomputedTokensPerSecond.Known() {
		action += fmt.Sprintf("; preemption is recomputing %s tokens/s", count(f.RecomputedTokensPerSecond.Float()))
	}
	return verdict{State: StatePreempting, Reasons: reasons, Action: action}, true
}

// fullVerdict: requests wait, the queue is not draining and the batch is
// flat at its cap.
func fullVerdict(f *Figures, ev *evidence, _ float64, cfg Config) (verdict, bool) {
	run, wait := ev.Running, ev.queueStats()
	// A queue that persists through every reading, not requests that wait
	// a step for the scheduler: a healthy server shows those too.
	if !(wait.Min > 0) || !(run.Mean > 0) || ev.Samples < 2 {
		return verdict{}, false
	}
	// Two readings suffice when the queue is long in both; a short one
	// must persist for fullMinSamples before it is called full.
	if ev.Samples < fullMinSamples && wait.Min < obviousQueue {
		return verdict{}, false
	}
	// A queue at a flat batch that does not grow is still a capacity
	// problem: every finished request is replaced from the queue, so every
	// arrival waits, and only capacity shortens the wait. A shrinking queue
	// is a spike being cleared only if it empties within a window.
	draining := f.WaitingGrowth < 0 && wait.Last < wait.First && wait.Last/float64(-f.WaitingGrowth) <= cfg.Window.Seconds()
	flat := run.Max-run.Min <= math.Max(flatRunningAbsolute, flatRunningFraction*run.Mean)
	if draining || !flat {
		return verdict{}, false
	}
	return verdict{State: StateFull, Reasons: fullReasons(f, ev, run, wait), Action: fullAction(f, ev, cfg)}, true
}

// fullReasons are the sentences that prove FULL: the queue that persists
// at a flat batch, and what else the figures say of it.
func fullReasons(f *Figures, ev *evidence, run, wait gaugeStats) []string {
	bound := "max_num_seqs cap"
	if ev.KVCacheUsage.Last >= kvBoundUsage {
		bound = "KV-bound, KV cache at " + percent(ev.KVCacheUsage.Last)
	}
	waitingWord := "waiting"
	if ev.WaitingCapacity.N > 0 {
		waitingWord = "waiting for capacity"
	}
	// Room for the reasons that follow, which a FULL replica mostly has.
	reasons := make([]string, 1, 4)
	reasons[0] = sentence(waitingWord).text(" ").count(wait.First).text(" → ").count(wait.Last).
		text(" over ").seconds(ev.SpanSeconds).text(" while running stays at ").count(run.Last).
		text(" (").text(bound).text(")").String()
	if ev.Rejections > 0 {
		reasons = append(reasons, rejectionText(f, ev))
	}
	if f.WaitingGrowth < 0 && wait.Last < wait.First {
		reasons = append(reasons, sentence("the queue shrinks by ").amount(float64(-f.WaitingGrowth)).
			text("/s: empty in about ").seconds(wait.Last/float64(-f.WaitingGrowth)).text(" at that rate").String())
	}
	if ev.Samples < fullMinSamples {
		// Said, because one more reading is the usual standard of proof.
		reasons = append(reasons, sentence("judged on ").int(ev.Samples).text(" readings: a queue of ").count(wait.First).
			text(" and ").count(wait.Last).text(" at the cap is full without waiting for a third").String())
	}
	if share := ratio(f.Queue.Mean, f.TTFT.Mean); share.Known() {
		reasons = append(reasons, sentence("queue time is ").percent(share.Float()).text(" of TTFT (mean ").
			seconds(f.Queue.Mean.Float()).text(" of ").seconds(f.TTFT.Mean.Float()).text(")").String())
	}
	if f.Efficiency.Known() {
		reasons = append(reasons, sentence("arrivals ").amount(f.ArrivalsPerSecond.Float()).text(" req/s against ").
			amount(f.RequestsPerSecond.Float()).text(" finished/s (efficiency ").percent(f.Efficiency.Float()).text(")").String())
	}
	return reasons
}

// fullAction is FULL's first action: more replicas, and the autoscaling
// target that would have added them, from what this replica finishes
// successfully; the fleet then writes its own target in its place
// (alignScaleTargets), so that every pane states the fleet's.
func fullAction(f *Figures, ev *evidence, cfg Config) string {
	capacity := successfulPerSecond(f)
	target := cfg.TargetQueueTime.Seconds()
	return scaleOnWords(sentence("add replicas; "), waitingMetric(ev.Kind), waitingTarget(capacity, target), capacity, target).String()
}

// dominantShare is the share of mean TTFT from which one phase, queue or
// prefill, is named as its cause.
const dominantShare = 0.5

// slowVerdict: not full, but p99 TTFT or ITL is over its SLO. The cause
// named follows the histograms: see ttftCause and itlCause.
func slowVerdict(f *Figures, ev *evidence, _ float64, cfg Config) (verdict, bool) {
	ttftOver, ttftFew := overSLO(f.TTFT, cfg.SLOTTFT, ev.WasSlow, cfg)
	itlOver, itlFew := overSLO(f.ITL, cfg.SLOITL, ev.WasSlow, cfg)
	ttftOver, itlOver = ttftOver && !ttftFew, itlOver && !itlFew
	if !ttftOver && !itlOver {
		return verdict{}, false
	}
	var reasons, actions []string
	if ttftOver {
		r, a := ttftCause(f, ev.Kind, cfg)
		reasons, actions = append(reasons, r...), append(actions, a)
	}
	if itlOver {
		r, a := itlCause(f, cfg)
		reasons, actions = append(reasons, r...), append(actions, a)
	}
	return verdict{State: StateSlow, Reasons: reasons, Action: strings.Join(actions, "; ")}, true
}

// overSLO reports whether the p99 of q is over its SLO, with hysteresis on
// the threshold: a replica that was SLOW stays over until the p99 is below
// the SLO less cfg.SLOExitMargin. tooFew is true when it is over but read
// from fewer than cfg.MinObservations observations, too few to judge by.
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

// sloHead is the start of the reason a p99 makes a replica SLOW: over the
// SLO, or held between the exit and the SLO by the threshold hysteresis.
func sloHead(name string, q Quantiles, slo time.Duration, cfg Config) string {
	if q.P99.Float() > slo.Seconds() {
		return fmt.Sprintf("p99 %s %s over the %s SLO", name, q.P99Bucket.Seconds(q.P99), seconds(slo.Seconds()))
	}
	return fmt.Sprintf("p99 %s %s, not yet below %s (%s under the %s SLO)", name, q.P99Bucket.Seconds(q.P99),
		seconds(slo.Seconds()*(1-cfg.SLOExitMargin)), percent(cfg.SLOExitMargin), seconds(slo.Seconds()))
}

// fewButMedian is the reason a p99 from too few observations still counts:
// their median is over the SLO too. Empty when there are enough.
func fewButMedian(unit string, q Quantiles, cfg Config) []string {
	if q.Observations.Float() >= float64(cfg.MinObservations) {
		return nil
	}
	return []string{fmt.Sprintf("only %s %s in the window, but their p50, %s, is over the SLO too",
		count(q.Observations.Float()), unit, q.P50Bucket.Seconds(q.P50))}
}

// tooFewNotes are the reasons of a replica whose p99 is over an SLO but
// read from too few observations to make it SLOW.
func tooFewNotes(f *Figures, ev *evidence, cfg Config) []string {
	var notes []string
	for _, l := range []struct {
		name, unit string
		q          Quantiles
		slo        time.Duration
	}{{"TTFT", "requests", f.TTFT, cfg.SLOTTFT}, {"ITL", "tokens", f.ITL, cfg.SLOITL}} {
		if _, few := overSLO(l.q, l.slo, ev.WasSlow, cfg); few {
			notes = append(notes, fmt.Sprintf("too few %s to judge p99 %s %s against the %s SLO: %s in the window, fewer than %d",
				l.unit, l.name, l.q.P99Bucket.Seconds(l.q.P99), seconds(l.slo.Seconds()), count(l.q.Observations.Float()), cfg.MinObservations))
		}
	}
	return notes
}

// ttftCause splits mean TTFT into its queue and prefill phases (means are
// exact, from _sum and _count; quantiles do not add up) and names the phase
// that dominates: waiting for a batch slot, or prefill.
func ttftCause(f *Figures, kind catalogue.EngineKind, cfg Config) ([]string, string) {
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
	switch {
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

// prefillAction is the action when prefill dominates TTFT: long prompts
// when they are long, otherwise a prefill that is slow for its length.
func prefillAction(f *Figures) string {
	if f.MeanPromptTokens >= longPromptTokens {
		return fmt.Sprintf("long prompts (mean %s tokens): shorten them, enable prefix caching (hit rate %s), or chunked prefill",
			count(f.MeanPromptTokens.Float()), percent(f.PrefixCacheHitRate.Float()))
	}
	return fmt.Sprintf("prefill is slow for its length (%s): enable prefix caching (hit rate %s) and chunked prefill, and check what shares the GPU",
		promptWords(f), percent(f.PrefixCacheHitRate.Float()))
}

// itlCause tells ITL spikes from slow steps: when the median token is
// within the SLO the tail is spikes, which prefill chunks in the batch
// cause; when the median is over it too, every decode step is slow, which
// the batch size causes (a decode step reads the whole batch's KV cache).
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

// promptWords is the mean prompt length in words: "mean prompt 6,000
// tokens", or "prompt length n/a" when the histogram is not exported.
func promptWords(f *Figures) string {
	if !f.MeanPromptTokens.Known() {
		return "prompt length n/a"
	}
	return "mean prompt " + count(f.MeanPromptTokens.Float()) + " tokens"
}

// staleAction is the first action for a replica whose metrics do not move.
const staleAction = "check PROMETHEUS_MULTIPROC_DIR (one shared, emptied directory for every API server process) and the metrics exporter"

// staleVerdict: the server answers, reports running requests, but no
// counter moved over the window; or every engine value is zero while the
// HTTP request counter rose (an empty multiprocess directory).
func staleVerdict(f *Figures, ev *evidence, httpIncrease float64, cfg Config) (verdict, bool) {
	if ev.Samples >= staleMinSamples && ev.Running.Min > 0 && ev.CountersKnown && !ev.CountersMoved && ev.longEnoughForStale(cfg) {
		return verdict{State: StateStale, Action: staleAction, Reasons: []string{fmt.Sprintf(
			"running %s but no counter moved over %s (%d scrapes)", count(ev.Running.Last), seconds(ev.SpanSeconds), ev.Samples)}}, true
	}
	if ev.AllZero && httpIncrease > 0 {
		return verdict{State: StateStale, Action: staleAction, Reasons: []string{fmt.Sprintf(
			"every engine value is 0 while http_requests_total rose by %s over %s", count(httpIncrease), seconds(ev.SpanSeconds))}}, true
	}
	return verdict{}, false
}

// idleVerdict: nothing finished, ran or waited in the window.
func idleVerdict(_ *Figures, ev *evidence, _ float64, _ Config) (verdict, bool) {
	if ev.Finished > 0 || ev.Running.Max > 0 || ev.Waiting.Max > 0 {
		return verdict{}, false
	}
	return verdict{State: StateIdle, Reasons: []string{
		fmt.Sprintf("no request finished, ran or waited over %s", seconds(ev.SpanSeconds))}}, true
}

// healthySummary is the one line of evidence of a healthy replica.
func healthySummary(f *Figures) string {
	return fmt.Sprintf("running %s, waiting %s, %s req/s, p99 TTFT %s, KV cache %s",
		count(f.Running.Float()), count(f.Waiting.Float()), amount(f.RequestsPerSecond.Float()),
		f.TTFT.P99Bucket.Seconds(f.TTFT.P99), percent(f.KVCacheUsage.Float()))
}

// holdNote marks the reason that says a new state is pending.
const holdNote = "pending: "

// hysteresis decides the state shown given the candidate and the previous
// evaluation of the same target. DOWN and WARMING show at once and so does
// leaving them (a server that answers again is not down); any other new
// state must be the candidate on cfg.Hysteresis consecutive evaluations.
func hysteresis(c verdict, prev *ReplicaReport, n int) (shown verdict, pending State, pendingCount int) {
	// The first evaluations after a target appears only gather evidence:
	// holding their provisional state back would delay the first real one.
	// DOWN and WARMING are facts about the scrapes, and SLEEPING one the
	// engine states, not judgments of the figures: they show at once, and
	// so does leaving them.
	settling := prev != nil && prev.Samples < fullMinSamples
	immediate := func(s State) bool { return s == StateDown || s == StateWarming || s == StateSleeping }
	if prev == nil || n <= 1 || settling || c.State == prev.State || immediate(c.State) || immediate(prev.State) {
		return c, c.State, 0
	}
	count := 1
	if prev.Pending == c.State && prev.PendingCount > 0 {
		count = prev.PendingCount + 1
	}
	if count >= n {
		return c, c.State, 0
	}
	held := verdict{State: prev.State, Action: prev.Action}
	for _, r := range prev.Reasons {
		// The pending note and the restart reason are this evaluation's
		// to give, not the held state's.
		if !strings.HasPrefix(r, holdNote) && !strings.HasPrefix(r, restartPrefix) {
			held.Reasons = append(held.Reasons, r)
		}
	}
	held.Reasons = append(held.Reasons, fmt.Sprintf("%s%s (%d of %d readings): %s",
		holdNote, c.State, count, n, firstOr(c.Reasons, "")))
	return held, c.State, count
}

// firstOr returns the first string, or def when there is none.
func firstOr(ss []string, def string) string {
	if len(ss) == 0 {
		return def
	}
	return ss[0]
}

// sinceText formats how long ago t was, relative to now.
func sinceText(now, t time.Time) string { return duration(now.Sub(t)) + " ago" }

// plural writes a count with its noun, "1 preemption", "22 preemptions".
func plural(n float64, noun string) string {
	var buf [64]byte
	return prose(buf[:0]).plural(n, noun).String()
}
