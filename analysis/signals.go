package analysis

import (
	"fmt"
	"math"

	"github.com/vtop-dev/vtop/catalogue"
)

// Signals are the figures read from vLLM's newest families, each n/a when
// the page lacks its family, never 0.
type Signals struct {
	// WaitingCapacity and WaitingDeferred split the waiting requests by
	// reason: capacity waits for the scheduler (the queue that makes a
	// replica FULL); deferred for the LoRA budget, a KV transfer or a
	// blocked status.
	WaitingCapacity Num `json:"waiting_capacity"`
	WaitingDeferred Num `json:"waiting_deferred"`
	// SleepLevel is vllm:engine_sleep_state: 0 awake, 1 weights offloaded,
	// 2 weights and KV cache discarded.
	SleepLevel Num `json:"sleep_level"`
	// AdmissionRejectionsPerSecond are arrivals refused with HTTP 503.
	AdmissionRejectionsPerSecond Num `json:"admission_rejections_per_second"`
	// PreemptionsPerRequest is vllm:request_num_preemptions over the window.
	PreemptionsPerRequest Quantiles `json:"preemptions_per_request"`
	// RecomputedMeasured is true when RecomputedTokensPerSecond is read
	// from vllm:prompt_tokens_recomputed rather than estimated.
	RecomputedMeasured bool `json:"recomputed_measured"`
	// PromptCachedShare is the share of prompt tokens not computed here:
	// local prefix-cache hits and KV received from elsewhere.
	PromptCachedShare Num `json:"prompt_cached_share"`
	// ExternalPrefixCacheHitRate is the KV connector's external prefix
	// cache hit rate, in tokens.
	ExternalPrefixCacheHitRate Num `json:"external_prefix_cache_hit_rate"`
	// NIXLTransfer is the time of one KV transfer between disaggregated
	// servers; NIXLBytesPerSecond the bytes moved; NIXLFailedPerSecond the
	// transfers that failed.
	NIXLTransfer        Quantiles `json:"nixl_transfer_seconds"`
	NIXLBytesPerSecond  Num       `json:"nixl_bytes_per_second"`
	NIXLFailedPerSecond Num       `json:"nixl_failed_transfers_per_second"`
	// KVOffloadLoadBytesPerSecond and KVOffloadStoreBytesPerSecond are KV
	// moved from offload storage to the GPU and back.
	KVOffloadLoadBytesPerSecond  Num `json:"kv_offload_load_bytes_per_second"`
	KVOffloadStoreBytesPerSecond Num `json:"kv_offload_store_bytes_per_second"`
	// SpecDecodeMeanAcceptanceLength is 1 + accepted tokens per draft.
	SpecDecodeMeanAcceptanceLength Num `json:"spec_decode_mean_acceptance_length"`
	// SpecDecodeAcceptanceByPosition is, per draft position, the share of
	// drafts whose token there was accepted; nil when not counted.
	SpecDecodeAcceptanceByPosition []Num `json:"spec_decode_acceptance_by_position,omitempty"`
}

// quantiles summarises histogram h over the window (histogram_quantile
// semantics) and returns its window for further reading.
func (w *window) quantiles(series []*catalogue.Series, runs *seriesRuns, h catalogue.Histogram) (Quantiles, histogramWindow) {
	hw := w.histogram(series, runs, h)
	q := Quantiles{Mean: ratio(Num(hw.Sum), Num(hw.Count)), Observations: Num(hw.Count)}
	q.P50, q.P50Bucket = quantileWithBucket(0.5, hw.Buckets)
	q.P90, q.P90Bucket = quantileWithBucket(0.9, hw.Buckets)
	q.P99, q.P99Bucket = quantileWithBucket(0.99, hw.Buckets)
	return q, hw
}

// signalFigures fills f.Signals and their evidence, after the other
// figures, whose estimate of recomputed tokens it replaces when counted.
func (w *window) signalFigures(f *Figures, ev *evidence, series []*catalogue.Series, runs *seriesRuns) {
	scalar := func(k catalogue.Scalar) *counterRun { return &runs.scalars[k] }
	s := unknownFigures.Signals
	if newest := newestSeries(series); newest != nil {
		s.WaitingCapacity = Num(newest.Scalars[catalogue.WaitingCapacity])
		s.WaitingDeferred = Num(newest.Scalars[catalogue.WaitingDeferred])
		s.SleepLevel = Num(newest.Scalars[catalogue.SleepLevel])
	}
	ev.WaitingCapacity = w.scalarGauge(series, catalogue.WaitingCapacity)
	ev.SleepLevel = s.SleepLevel.Float()
	s.AdmissionRejectionsPerSecond = Num(w.rateOf(scalar(catalogue.AdmissionRejections)))
	ev.Rejections = w.increaseOf(scalar(catalogue.AdmissionRejections))
	s.PreemptionsPerRequest, _ = w.quantiles(series, runs, catalogue.PreemptionsPerRequest)

	if recomputed := Num(w.rateOf(scalar(catalogue.PromptTokensRecomputed))); recomputed.Known() {
		f.RecomputedTokensPerSecond, s.RecomputedMeasured = recomputed, true
	}
	compute := Num(w.rateOf(scalar(catalogue.PromptTokensLocalCompute)))
	hit := Num(w.rateOf(scalar(catalogue.PromptTokensLocalCacheHit)))
	external := Num(w.rateOf(scalar(catalogue.PromptTokensExternal)))
	if compute.Known() && hit.Known() {
		notComputed := hit
		if external.Known() {
			notComputed += external
		}
		s.PromptCachedShare = ratio(notComputed, compute+notComputed)
	} else {
		s.PromptCachedShare = ratio(Num(w.rateOf(scalar(catalogue.PromptTokensCached))), f.PromptTokensPerSecond)
	}
	s.ExternalPrefixCacheHitRate = ratio(Num(w.increaseOf(scalar(catalogue.ExternalPrefixHits))), Num(w.increaseOf(scalar(catalogue.ExternalPrefixQueries))))

	s.NIXLTransfer, _ = w.quantiles(series, runs, catalogue.NIXLTransferTime)
	// Only the bytes' _sum is read: no quantile of them is shown.
	if bytes := w.increaseOf(&runs.histSum[catalogue.NIXLTransferBytes]); w.seconds > 0 && !math.IsNaN(bytes) {
		s.NIXLBytesPerSecond = Num(bytes / w.seconds)
	}
	s.NIXLFailedPerSecond = Num(w.rateOf(scalar(catalogue.NIXLFailedTransfers)))
	ev.NIXLFailed = w.increaseOf(scalar(catalogue.NIXLFailedTransfers))
	s.KVOffloadLoadBytesPerSecond = Num(w.rateOf(scalar(catalogue.KVOffloadLoadBytes)))
	s.KVOffloadStoreBytesPerSecond = Num(w.rateOf(scalar(catalogue.KVOffloadStoreBytes)))

	if f.SpecDecodeAcceptedPerDraft.Known() {
		s.SpecDecodeMeanAcceptanceLength = 1 + f.SpecDecodeAcceptedPerDraft
	}
	s.SpecDecodeAcceptanceByPosition = w.acceptanceByPosition(series, runs)
	f.Signals = s
}

// acceptanceByPosition is, per draft position, the accepted tokens there
// ÷ the drafts over the window; nil when not counted or no drafts.
func (w *window) acceptanceByPosition(series []*catalogue.Series, runs *seriesRuns) []Num {
	positions := 0
	for _, s := range series {
		if s != nil {
			positions = max(positions, len(s.SpecAcceptedPerPos))
		}
	}
	drafts := Num(w.increaseOf(&runs.scalars[catalogue.SpecDrafts]))
	if positions == 0 || !(drafts > 0) {
		return nil
	}
	out := make([]Num, positions)
	for p := range positions {
		var accepted counterRun
		for i, s := range series {
			if s != nil && p < len(s.SpecAcceptedPerPos) {
				accepted.add(w.ms[i], s.SpecAcceptedPerPos[p])
			}
		}
		out[p] = ratio(Num(w.increaseOf(&accepted)), drafts)
	}
	return out
}

// lowAcceptance is the speculative-decoding acceptance rate below which
// drafting costs more than it saves: each draft token costs a forward
// pass of the draft model.
const lowAcceptance = 0.5

// signalNotes are the reasons the newest signals add to any state.
func signalNotes(f *Figures, ev *evidence) []string {
	var notes []string
	if d := f.WaitingDeferred; d > 0 {
		notes = append(notes, fmt.Sprintf("%s waiting %s deferred (LoRA budget, KV transfer or blocked), not waiting for capacity",
			count(d.Float()), isAre(d.Float())))
	}
	if ev.NIXLFailed > 0 {
		notes = append(notes, nixlFailureText(f, ev))
	}
	if a := f.SpecDecodeAcceptanceRate; a.Known() && a < lowAcceptance {
		notes = append(notes, fmt.Sprintf("speculative decoding accepts %s of draft tokens (mean acceptance length %s), below %s: drafting costs more than it saves; lower num_speculative_tokens or turn it off",
			percent(a.Float()), amount(f.SpecDecodeMeanAcceptanceLength.Float()), percent(lowAcceptance)))
	}
	return notes
}

// nixlFailureText says that KV transfers failed in the window.
func nixlFailureText(f *Figures, ev *evidence) string {
	return fmt.Sprintf("%s over %s (%s/s): their prompts are recomputed here or the requests fail; check the NIXL link to the prefill servers",
		plural(ev.NIXLFailed, "failed NIXL KV transfer"), seconds(ev.SpanSeconds), amount(f.NIXLFailedPerSecond.Float()))
}

// sleepingVerdict: the engine says it sleeps (vLLM's /sleep): neither
// down (it answers) nor idle (it could not serve if asked).
func sleepingVerdict(f *Figures, ev *evidence) (verdict, bool) {
	if !(ev.SleepLevel > 0) {
		return verdict{}, false
	}
	what := "weights offloaded to CPU memory"
	if ev.SleepLevel >= 2 {
		what = "weights and KV cache discarded"
	}
	reasons := []string{fmt.Sprintf("engine asleep at level %s (%s): it serves nothing until woken", count(ev.SleepLevel), what)}
	action := "wake it (POST /wake_up), or it is meant to sleep"
	if f.Waiting > 0 {
		reasons = append(reasons, fmt.Sprintf("%s waiting at a sleeping engine", count(f.Waiting.Float())))
		action = fmt.Sprintf("wake it (POST /wake_up): %s requests wait", count(f.Waiting.Float()))
	}
	return verdict{State: StateSleeping, Reasons: reasons, Action: action}, true
}

// queueStats is the queue FULL is judged on (queueScalar): deferred
// requests wait for something more replicas would not give.
func (ev *evidence) queueStats() gaugeStats {
	if ev.queueScalar() == catalogue.WaitingCapacity {
		return ev.WaitingCapacity
	}
	return ev.Waiting
}

// rejectingVerdict: the server refuses work while it runs requests: FULL
// whatever the capped queue shows.
func rejectingVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	if !(ev.Rejections > 0) || !(ev.Running.Mean > 0) || ev.Samples < 2 {
		return verdict{}, false
	}
	capacity := successfulPerSecond(f)
	target := cfg.TargetQueueTime.Seconds()
	return verdict{State: StateFull, Reasons: []string{rejectionText(f, ev)},
		Action: scaleOnWords("add replicas: the server turns work away; ", waitingMetric(ev.Kind),
			waitingTarget(capacity, target), capacity, target)}, true
}

// preemptionsPerRequestText is PREEMPTING's evidence from
// vllm:request_num_preemptions; "" without it.
func preemptionsPerRequestText(f *Figures) string {
	q := f.PreemptionsPerRequest
	if !q.P50.Known() {
		return ""
	}
	return fmt.Sprintf("preemptions per finished request: p50 %s, p99 %s, mean %s",
		q.P50Bucket.Count(q.P50), q.P99Bucket.Count(q.P99), amount(q.Mean.Float()))
}

// Count writes the quantile v of a histogram of whole numbers that fell in
// b as the bucket proves it, since 0.5 preemptions is no request's count:
// "≤1", "3", "6–10", ">20" or "n/a".
func (b QuantileBucket) Count(v Num) string {
	lower, upper := b.Lower.Float(), b.Upper.Float()
	switch {
	case !b.known() || !v.Known():
		return "n/a"
	case math.IsInf(upper, 1):
		return ">" + count(lower)
	case lower <= 0:
		return "≤" + count(upper)
	case upper-lower <= 1:
		return count(upper)
	}
	return count(math.Floor(lower)+1) + "–" + count(upper)
}

// deferredAction is the action when requests wait but none for capacity:
// more replicas would not shorten a wait for a KV transfer or a LoRA slot.
func deferredAction(f *Figures) string {
	check := "the KV connector"
	if f.NIXLTransfer.P99.Known() {
		check = "the NIXL link to the prefill servers (p99 transfer " + f.NIXLTransfer.P99Bucket.Seconds(f.NIXLTransfer.P99) + ")"
	}
	return fmt.Sprintf("requests wait for their KV transfer or a LoRA slot, not a batch slot (%s deferred, none waiting for capacity): check %s and max_loras",
		count(f.WaitingDeferred.Float()), check)
}
