package analysis

// The figures as they were computed before their counters were read off
// one walk over the series (gatherRuns): one collect of the window per
// figure, through closures. They are the reference the faster path is
// held to, figure by figure and bit by bit (TestFiguresMatchReference).

import (
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// refGauge summarises a gauge's known readings over the window.
func (w *window) refGauge(at seriesAt) gaugeStats {
	w.collect(at)
	return w.refCollectedGauge()
}

// refCollectedGauge summarises the readings collected last.
func (w *window) refCollectedGauge() gaugeStats {
	g := gaugeStats{First: math.NaN(), Last: math.NaN(), Min: math.NaN(), Max: math.NaN(), Mean: math.NaN(), N: len(w.vs)}
	if g.N == 0 {
		return g
	}
	g.First, g.Last = w.vs[0], w.vs[g.N-1]
	g.Min, g.Max = w.vs[0], w.vs[0]
	var sum float64
	for _, v := range w.vs {
		g.Min, g.Max = math.Min(g.Min, v), math.Max(g.Max, v)
		sum += v
	}
	g.Mean = sum / float64(g.N)
	return g
}

// refDeriv is deriv() of a gauge over the window; NaN when unknown.
func (w *window) refDeriv(at seriesAt) float64 {
	w.collect(at)
	r, ok := Deriv(w.ts, w.vs)
	if !ok {
		return math.NaN()
	}
	return r
}

// refFigures computes the Figures of one replica or engine over the window.
// series[i] is its Series in the i-th good sample (nil when absent there).
// kvCapacity is the KV cache size in tokens (NaN when unknown).
func (w *window) refFigures(series []*catalogue.Series, kvCapacity float64, cfg Config) (Figures, evidence) {
	var f Figures
	ev := evidence{Samples: len(w.samples)}
	if n := len(w.samples); n > 1 {
		ev.SpanSeconds = w.samples[n-1].Time.Sub(w.samples[0].Time).Seconds()
	}
	scalar := func(k catalogue.Scalar) seriesAt {
		return func(i int) float64 {
			if series[i] == nil {
				return math.NaN()
			}
			return series[i].Scalars[k]
		}
	}
	finished := func(r catalogue.FinishReason) seriesAt {
		return func(i int) float64 {
			if series[i] == nil {
				return math.NaN()
			}
			return series[i].Finished[r]
		}
	}

	ev.Running, ev.Waiting, ev.KVCacheUsage = w.refGauge(scalar(catalogue.Running)), w.refGauge(scalar(catalogue.Waiting)), w.refGauge(scalar(catalogue.KVCacheUsage))
	newest := newestSeries(series)
	f.Running, f.Waiting, f.KVCacheUsage = NA, NA, NA
	if newest != nil {
		f.Running, f.Waiting, f.KVCacheUsage = Num(newest.Scalars[catalogue.Running]), Num(newest.Scalars[catalogue.Waiting]), Num(newest.Scalars[catalogue.KVCacheUsage])
	}

	w.refFinishFigures(&f, &ev, finished)
	w.refFinishedTotal(&f, &ev, scalar)
	f.PromptTokensPerSecond = Num(w.rate(scalar(catalogue.PromptTokens)))
	f.GenerationTokensPerSecond = Num(w.rate(scalar(catalogue.GenerationTokens)))
	f.IORatio = ratio(f.PromptTokensPerSecond, f.GenerationTokensPerSecond)
	f.PreemptionsPerSecond = Num(w.rate(scalar(catalogue.Preemptions)))
	ev.Preemptions = w.increase(scalar(catalogue.Preemptions))

	w.refLittlesLaw(&f, &ev, scalar)
	f.PrefixCacheHitRate = ratio(Num(w.increase(scalar(catalogue.PrefixCacheHits))), Num(w.increase(scalar(catalogue.PrefixCacheQueries))))
	accepted := Num(w.increase(scalar(catalogue.SpecAcceptedTokens)))
	f.SpecDecodeAcceptanceRate = ratio(accepted, Num(w.increase(scalar(catalogue.SpecDraftTokens))))
	f.SpecDecodeAcceptedPerDraft = ratio(accepted, Num(w.increase(scalar(catalogue.SpecDrafts))))

	w.refLatencyFigures(&f, series, cfg)
	f.KVCapacityTokens = Num(kvCapacity)
	f.MaxSeqsKVHolds = NA
	if perRequest := f.MeanPromptTokens + f.MeanGenerationTokens; f.KVCapacityTokens.Known() && perRequest > 0 {
		f.MaxSeqsKVHolds = Num(math.Floor(float64(f.KVCapacityTokens / perRequest)))
	}
	// Recomputed tokens are an estimate: a preempted request is recomputed
	// from scratch, so it costs its prompt plus the output generated so far,
	// on average half of its final output.
	f.RecomputedTokensPerSecond = f.PreemptionsPerSecond * (f.MeanPromptTokens + f.MeanGenerationTokens/2)
	if f.PreemptionsPerSecond == 0 {
		f.RecomputedTokensPerSecond = 0
	}

	w.refSignalFigures(&f, &ev, series, scalar)
	w.refCounterMovement(&ev, series, scalar, finished)
	ev.Trail = w.refTrail(&ev, scalar)
	return f, ev
}

// refTrail is the trailing evidence, read by time: the readings within
// the span before the newest, or the newest minReadings when fewer are.
func (w *window) refTrail(ev *evidence, scalar func(catalogue.Scalar) seriesAt) trail {
	n := len(w.samples)
	if n == 0 {
		return trail{Preemptions: math.NaN()}
	}
	newest := w.samples[n-1].Time
	from := func(span time.Duration, minReadings int) int {
		first := n - 1
		for i := n - 1; i >= 0; i-- {
			if newest.Sub(w.samples[i].Time) <= span || n-i <= minReadings {
				first = i
			}
		}
		return first
	}
	since := func(at seriesAt, first int) seriesAt {
		return func(i int) float64 {
			if i < first {
				return math.NaN()
			}
			return at(i)
		}
	}
	queue := scalar(catalogue.Waiting)
	if ev.WaitingCapacity.N > 0 {
		queue = scalar(catalogue.WaitingCapacity)
	}
	first := from(fullSpan, fullMinSamples)
	t := trail{Queue: w.refGauge(since(queue, first)), Running: w.refGauge(since(scalar(catalogue.Running), first)),
		Seconds: newest.Sub(w.samples[first].Time).Seconds(), LastTwoQueue: w.refGauge(since(queue, max(n-2, 0)))}
	// The plain increase: rises summed, a drop a reset.
	t.Preemptions = math.NaN()
	last, known := math.NaN(), 0
	at := scalar(catalogue.Preemptions)
	for i := from(preemptingSpan, 2); i < n; i++ {
		v := at(i)
		if math.IsNaN(v) {
			continue
		}
		if known == 1 {
			t.Preemptions = 0
		}
		if known >= 1 {
			if v >= last {
				t.Preemptions += v - last
			} else {
				t.Preemptions += v
			}
		}
		last = v
		known++
	}
	return t
}

// refFinishFigures fills the finish-reason rates, their total and shares.
func (w *window) refFinishFigures(f *Figures, ev *evidence, finished func(catalogue.FinishReason) seriesAt) {
	var rates [catalogue.NumFinishReasons]Num
	total, known := 0.0, false
	ev.Finished = math.NaN()
	for r := range catalogue.NumFinishReasons {
		rates[r] = Num(w.rate(finished(r)))
		if rates[r].Known() {
			total += float64(rates[r])
			known = true
			inc := w.increase(finished(r))
			if math.IsNaN(ev.Finished) {
				ev.Finished = 0
			}
			ev.Finished += inc
		}
	}
	f.FinishedPerSecond = FinishRates{Stop: rates[catalogue.FinishStop], Length: rates[catalogue.FinishLength], Abort: rates[catalogue.FinishAbort], Error: rates[catalogue.FinishError], Repetition: rates[catalogue.FinishRepetition]}
	f.RequestsPerSecond = NA
	if known {
		f.RequestsPerSecond = Num(total)
	}
	f.SuccessRate = ratio(rates[catalogue.FinishStop], f.RequestsPerSecond)
	f.LengthShare = ratio(rates[catalogue.FinishLength], f.RequestsPerSecond)
	f.AbortShare = ratio(rates[catalogue.FinishAbort], f.RequestsPerSecond)
}

// refLittlesLaw fills time running, queue growth, arrivals and efficiency.
// Arrivals are what finished plus what the batch and the queue grew by; they
// cannot be negative, so noise that makes the sum negative reads 0.
func (w *window) refLittlesLaw(f *Figures, ev *evidence, scalar func(catalogue.Scalar) seriesAt) {
	f.TimeRunningSeconds = NA
	if f.RequestsPerSecond > 0 {
		f.TimeRunningSeconds = Num(ev.Running.Mean) / f.RequestsPerSecond
	}
	f.WaitingGrowth = Num(w.refDeriv(scalar(catalogue.Waiting)))
	runningGrowth := Num(w.refDeriv(scalar(catalogue.Running)))
	f.ArrivalsPerSecond = NA
	if f.RequestsPerSecond.Known() {
		growth := Num(0)
		for _, g := range []Num{runningGrowth, f.WaitingGrowth} {
			if g.Known() {
				growth += g
			}
		}
		f.ArrivalsPerSecond = max(f.RequestsPerSecond+growth, 0)
	}
	f.Efficiency = ratio(f.RequestsPerSecond, f.ArrivalsPerSecond)
}

// refLatencyFigures fills the quantiles, the request shape and the goodput.
func (w *window) refLatencyFigures(f *Figures, series []*catalogue.Series, cfg Config) {
	quantiles := func(h catalogue.Histogram) (Quantiles, histogramWindow) { return w.refQuantiles(series, h) }
	var ttft, e2e histogramWindow
	f.TTFT, ttft = quantiles(catalogue.TTFT)
	ttftShare := shareWithin(cfg.SLOTTFT.Seconds(), ttft.Buckets)
	f.E2E, e2e = quantiles(catalogue.E2E)
	f.Goodput = Num(ttftShare)
	if cfg.SLOE2E > 0 {
		// Both SLOs: the share within both is at least a + b − 1 whatever
		// the joint distribution (Fréchet's bound); buckets give no more.
		f.Goodput = Num(math.Max(ttftShare+shareWithin(cfg.SLOE2E.Seconds(), e2e.Buckets)-1, 0))
	}
	f.ITL, _ = quantiles(catalogue.ITL)
	f.Queue, _ = quantiles(catalogue.QueueTime)
	f.Prefill, _ = quantiles(catalogue.PrefillTime)
	f.Decode, _ = quantiles(catalogue.DecodeTime)
	prompt := w.refHistogram(series, catalogue.PromptLength)
	f.MeanPromptTokens = ratio(Num(prompt.Sum), Num(prompt.Count))
	generation := w.refHistogram(series, catalogue.GenerationLength)
	f.MeanGenerationTokens = ratio(Num(generation.Sum), Num(generation.Count))
}

// refCounterMovement records whether the engine counters are exported, moved,
// dropped, or are all zero together with the gauges (an empty multiprocess
// directory).
func (w *window) refCounterMovement(ev *evidence, series []*catalogue.Series, scalar func(catalogue.Scalar) seriesAt, finished func(catalogue.FinishReason) seriesAt) {
	check := func(at seriesAt) {
		inc := w.increase(at)
		ev.ResetMs = max(ev.ResetMs, w.refDroppedAt(at))
		if len(w.vs) > 0 {
			ev.CountersKnown = true
		}
		if inc > 0 {
			ev.CountersMoved = true
		}
	}
	for _, k := range engineCounters {
		check(scalar(k))
	}
	for r := range catalogue.NumFinishReasons {
		check(finished(r))
	}
	for h := range catalogue.NumHistograms {
		check(func(i int) float64 {
			if series[i] == nil || !series[i].Histograms[h].Present() {
				return math.NaN() // an absent histogram has no count, not a count of 0
			}
			return series[i].Histograms[h].Count
		})
	}
	ev.AllZero = len(w.samples) > 0
	for _, s := range series {
		if s != nil && !seriesAllZero(s) {
			ev.AllZero = false
			break
		}
	}
}

// refFinishedTotal takes the finished requests from the engine's own count of
// every finished request when the page has one. The engines that count
// only some reasons apart (SGLang its aborts, TGI its failures) would
// otherwise have their finish rate read off that one reason; vLLM's count
// is the sum of its reasons, so nothing changes for it. A total below the
// sum of the reasons is a page at odds with itself: the reasons, counted
// one by one, are kept, so that no share exceeds the whole.
func (w *window) refFinishedTotal(f *Figures, ev *evidence, scalar func(catalogue.Scalar) seriesAt) {
	total := Num(w.rate(scalar(catalogue.FinishedRequests)))
	if !total.Known() || total < f.RequestsPerSecond {
		return
	}
	f.RequestsPerSecond = total
	ev.Finished = w.increase(scalar(catalogue.FinishedRequests))
	f.SuccessRate = ratio(f.FinishedPerSecond.Stop, total)
	f.LengthShare = ratio(f.FinishedPerSecond.Length, total)
	f.AbortShare = ratio(f.FinishedPerSecond.Abort, total)
}

// refQuantiles summarises histogram h over the window (histogram_quantile
// semantics) and returns its window for further reading.
func (w *window) refQuantiles(series []*catalogue.Series, h catalogue.Histogram) (Quantiles, histogramWindow) {
	hw := w.refHistogram(series, h)
	return Quantiles{
		Mean: ratio(Num(hw.Sum), Num(hw.Count)),
		P50:  Num(refPreparedQuantile(0.5, hw.Buckets)),
		P90:  Num(refPreparedQuantile(0.9, hw.Buckets)),
		P99:  Num(refPreparedQuantile(0.99, hw.Buckets)),

		Observations: Num(hw.Count),
		P50Bucket:    refQuantileBucket(0.5, hw.Buckets),
		P90Bucket:    refQuantileBucket(0.9, hw.Buckets),
		P99Bucket:    refQuantileBucket(0.99, hw.Buckets),
	}, hw
}

// refSignalFigures fills f.Signals and the evidence they give; it runs after
// the other figures, whose estimate of recomputed tokens it replaces when
// the page counts them.
func (w *window) refSignalFigures(f *Figures, ev *evidence, series []*catalogue.Series, scalar func(catalogue.Scalar) seriesAt) {
	s := naSignals()
	if newest := newestSeries(series); newest != nil {
		s.WaitingCapacity = Num(newest.Scalars[catalogue.WaitingCapacity])
		s.WaitingDeferred = Num(newest.Scalars[catalogue.WaitingDeferred])
		s.SleepLevel = Num(newest.Scalars[catalogue.SleepLevel])
	}
	ev.WaitingCapacity = w.refGauge(scalar(catalogue.WaitingCapacity))
	ev.SleepLevel = s.SleepLevel.Float()
	s.AdmissionRejectionsPerSecond = Num(w.rate(scalar(catalogue.AdmissionRejections)))
	ev.Rejections = w.increase(scalar(catalogue.AdmissionRejections))
	s.PreemptionsPerRequest, _ = w.refQuantiles(series, catalogue.PreemptionsPerRequest)

	if recomputed := Num(w.rate(scalar(catalogue.PromptTokensRecomputed))); recomputed.Known() {
		f.RecomputedTokensPerSecond, s.RecomputedMeasured = recomputed, true
	}
	compute := Num(w.rate(scalar(catalogue.PromptTokensLocalCompute)))
	hit := Num(w.rate(scalar(catalogue.PromptTokensLocalCacheHit)))
	external := Num(w.rate(scalar(catalogue.PromptTokensExternal)))
	if compute.Known() && hit.Known() {
		notComputed := hit
		if external.Known() {
			notComputed += external
		}
		s.PromptCachedShare = ratio(notComputed, compute+notComputed)
	} else {
		s.PromptCachedShare = ratio(Num(w.rate(scalar(catalogue.PromptTokensCached))), f.PromptTokensPerSecond)
	}
	s.ExternalPrefixCacheHitRate = ratio(Num(w.increase(scalar(catalogue.ExternalPrefixHits))), Num(w.increase(scalar(catalogue.ExternalPrefixQueries))))

	var bytes histogramWindow
	s.NIXLTransfer, _ = w.refQuantiles(series, catalogue.NIXLTransferTime)
	_, bytes = w.refQuantiles(series, catalogue.NIXLTransferBytes)
	if w.seconds > 0 && !math.IsNaN(bytes.Sum) {
		s.NIXLBytesPerSecond = Num(bytes.Sum / w.seconds)
	}
	s.NIXLFailedPerSecond = Num(w.rate(scalar(catalogue.NIXLFailedTransfers)))
	ev.NIXLFailed = w.increase(scalar(catalogue.NIXLFailedTransfers))
	s.KVOffloadLoadBytesPerSecond = Num(w.rate(scalar(catalogue.KVOffloadLoadBytes)))
	s.KVOffloadStoreBytesPerSecond = Num(w.rate(scalar(catalogue.KVOffloadStoreBytes)))

	if f.SpecDecodeAcceptedPerDraft.Known() {
		s.SpecDecodeMeanAcceptanceLength = 1 + f.SpecDecodeAcceptedPerDraft
	}
	s.SpecDecodeAcceptanceByPosition = w.refAcceptanceByPosition(series, scalar)
	f.Signals = s
}

// refAcceptanceByPosition is, per draft position, the accepted tokens at that
// position ÷ the drafts over the window; nil when the page does not count
// by position or there were no drafts.
func (w *window) refAcceptanceByPosition(series []*catalogue.Series, scalar func(catalogue.Scalar) seriesAt) []Num {
	positions := 0
	for _, s := range series {
		if s != nil {
			positions = max(positions, len(s.SpecAcceptedPerPos))
		}
	}
	drafts := Num(w.increase(scalar(catalogue.SpecDrafts)))
	if positions == 0 || !(drafts > 0) {
		return nil
	}
	out := make([]Num, positions)
	for p := range positions {
		accepted := w.increase(func(i int) float64 {
			if series[i] == nil || p >= len(series[i].SpecAcceptedPerPos) {
				return math.NaN()
			}
			return series[i].SpecAcceptedPerPos[p]
		})
		out[p] = ratio(Num(accepted), drafts)
	}
	return out
}

// refHistogram computes the per-bucket increase of histogram h over the
// window (counter semantics, resets handled per bucket), using the bounds of
// the newest sample that has it. Samples with other bounds (the server
// restarted with another max_model_len) are another series and are left
// out; a bucket with fewer than two readings disappears, as in Prometheus.
// The returned buckets live in the window's scratch space and are valid
// until the next call.
func (w *window) refHistogram(series []*catalogue.Series, h catalogue.Histogram) histogramWindow {
	hw := histogramWindow{Sum: math.NaN(), Count: math.NaN()}
	bounds := newestBounds(series, h)
	if bounds == nil {
		return hw
	}
	at := func(pick func(b *catalogue.Buckets) float64) seriesAt {
		return func(i int) float64 {
			if series[i] == nil || !series[i].Histograms[h].Present() {
				return math.NaN()
			}
			return pick(&series[i].Histograms[h])
		}
	}
	hw.Sum = w.increase(at(func(b *catalogue.Buckets) float64 { return b.Sum }))
	hw.Count = w.increase(at(func(b *catalogue.Buckets) float64 { return b.Count }))

	// The samples with these bounds are found once, not once per bucket:
	// a histogram has tens of buckets, read over every sample of the
	// window.
	var withBounds []*catalogue.Buckets
	var withBoundsMs []int64
	for i, s := range series {
		if s == nil {
			continue
		}
		if b := &s.Histograms[h]; catalogue.SameBounds(b.Bounds, bounds) && len(b.Counts) == len(bounds) {
			withBounds = append(withBounds, b)
			withBoundsMs = append(withBoundsMs, w.samples[i].Time.UnixMilli())
		}
	}
	w.buckets = w.buckets[:0]
	for j, upper := range bounds {
		// What increase does, over those samples: a NaN count is absent.
		w.ts, w.vs = w.ts[:0], w.vs[:0]
		for k, b := range withBounds {
			if v := b.Counts[j]; !math.IsNaN(v) {
				w.ts = append(w.ts, withBoundsMs[k])
				w.vs = append(w.vs, v)
			}
		}
		if inc, ok := ExtrapolatedRate(w.ts, w.vs, w.startMs, w.endMs, true, false); ok && !math.IsNaN(inc) {
			w.buckets = append(w.buckets, Bucket{Upper: upper, Count: inc})
		}
	}
	hw.Buckets = refPrepareBuckets(w.buckets)
	return hw
}

// refPrepareBuckets sorts, merges and fixes the buckets in place, as
// histogram_quantile does before it looks for the rank, and returns the
// fixed slice; nil when there is none or no +Inf bucket.
func refPrepareBuckets(b []Bucket) []Bucket {
	if len(b) == 0 {
		return nil
	}
	if !slices.IsSortedFunc(b, compareUpper) {
		slices.SortFunc(b, compareUpper)
	}
	if !math.IsInf(b[len(b)-1].Upper, 1) {
		return nil
	}
	b = coalesceBuckets(b)
	ensureMonotonicAndIgnoreSmallDeltas(b, smallDeltaTolerance)
	return b
}

// refDroppedAt returns the Unix ms of the newest reading in the window that
// is below the known reading before it (a counter reset), 0 when none is.
func (w *window) refDroppedAt(at seriesAt) int64 {
	w.collect(at)
	for i := len(w.vs) - 1; i > 0; i-- {
		if w.vs[i] < w.vs[i-1] {
			return w.ts[i]
		}
	}
	return 0
}

// refPreparedQuantile is Prometheus's histogram_quantile() (promql/quantile.go,
// Prometheus 3.x) of buckets fixed by prepareBuckets: q outside [0, 1]
// gives ±Inf and NaN q gives NaN; no +Inf bucket, fewer than two buckets or
// zero observations give NaN; the rank is found with Go's sort.Search and
// interpolated linearly inside its bucket, from 0 for the lowest bucket
// when its bound is positive.
func refPreparedQuantile(q float64, b []Bucket) float64 {
	if !quantileInRange(q) {
		return outOfRangeQuantile(q)
	}
	if len(b) < 2 {
		return math.NaN()
	}
	observations := b[len(b)-1].Count
	if observations == 0 {
		return math.NaN()
	}
	rank := q * observations
	i := rankIndex(rank, b)
	if i == len(b)-1 {
		return b[len(b)-2].Upper
	}
	if i == 0 && b[0].Upper <= 0 {
		return b[0].Upper
	}
	var start float64
	end, count := b[i].Upper, b[i].Count
	if i > 0 {
		start = b[i-1].Upper
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return start + (end-start)*(rank/count)
}

// refQuantileBucket is the bucket refPreparedQuantile(q, b) reads its answer
// from, with the same rules: beyond the last finite bound the upper bound
// is +Inf, the first bucket starts at 0 (or at -Inf when its bound is not
// positive). Both bounds are n/a when the quantile is.
func refQuantileBucket(q float64, b []Bucket) QuantileBucket {
	if math.IsNaN(refPreparedQuantile(q, b)) || !quantileInRange(q) {
		return QuantileBucket{Lower: NA, Upper: NA}
	}
	i := rankIndex(q*b[len(b)-1].Count, b)
	switch {
	case i == len(b)-1:
		return QuantileBucket{Lower: Num(b[len(b)-2].Upper), Upper: Num(math.Inf(1))}
	case i == 0 && b[0].Upper <= 0:
		return QuantileBucket{Lower: Num(math.Inf(-1)), Upper: Num(b[0].Upper)}
	case i == 0:
		return QuantileBucket{Lower: 0, Upper: Num(b[0].Upper)}
	}
	return QuantileBucket{Lower: Num(b[i-1].Upper), Upper: Num(b[i].Upper)}
}

// The reference's way of reading a metric: a closure per figure, its
// readings copied out before ExtrapolatedRate reads them.

// newWindow selects the good samples of samples (oldest first) with
// now-length <= Time <= now.
func newWindow(samples []catalogue.Sample, now time.Time, length time.Duration) *window {
	w := &window{}
	w.reset(samples, now, length)
	return w
}

// seriesAt returns the value of one metric at the i-th sample of the window,
// NaN when absent.
type seriesAt func(i int) float64

// collect fills the scratch slices with the known values of at, skipping
// samples where the metric is absent: in a Sample NaN means "not on the
// page", which for Prometheus is a missing sample, not a NaN value.
func (w *window) collect(at seriesAt) {
	w.ts, w.vs = w.ts[:0], w.vs[:0]
	for i := range w.samples {
		v := at(i)
		if math.IsNaN(v) {
			continue
		}
		w.ts = append(w.ts, w.ms[i])
		w.vs = append(w.vs, v)
	}
}

// rate is rate() of a counter over the window; NaN when unknown.
func (w *window) rate(at seriesAt) float64 { return w.extrapolated(at, true) }

// increase is increase() of a counter over the window; NaN when unknown.
func (w *window) increase(at seriesAt) float64 { return w.extrapolated(at, false) }

// extrapolated is ExtrapolatedRate of the counter at over the window.
func (w *window) extrapolated(at seriesAt, isRate bool) float64 {
	w.collect(at)
	r, ok := ExtrapolatedRate(w.ts, w.vs, w.startMs, w.endMs, true, isRate)
	if !ok {
		return math.NaN()
	}
	return r
}
