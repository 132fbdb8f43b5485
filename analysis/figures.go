package analysis

import (
	"math"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// evidence is what the state rules read besides the Figures: the shape of
// the gauges over the window and which counters moved.
type evidence struct {
	Samples     int     // good samples in the window
	SpanSeconds float64 // time between the oldest and newest of them
	// EvidenceSeconds is the span of the newest process's readings, since
	// RestartedAt when the window holds a restart: health is judged on it.
	EvidenceSeconds float64
	RestartedAt     time.Time
	Running         gaugeStats
	Waiting         gaugeStats
	KVCacheUsage    gaugeStats
	Finished        float64 // increase of finished requests (NaN when unknown)
	WasSlow         bool    // the replica was shown SLOW by the previous evaluation
	Preemptions     float64 // increase of preemptions (NaN when unknown)
	CountersKnown   bool    // some engine counter has a value in the window
	CountersMoved   bool    // some engine counter increased in the window
	AllZero         bool    // every engine value is zero in every sample
	ResetMs         int64   // Unix ms of the newest scrape where an engine counter dropped; 0 for none
	// Refused are the health figures every value of which was refused
	// (refusedUnknown): no health is proven on them.
	Refused catalogue.FigureSet

	// vLLM's newest families; NaN (or no readings) when the page lacks them.
	WaitingCapacity gaugeStats // requests waiting for scheduler capacity
	Rejections      float64    // increase of admission rejections
	NIXLFailed      float64    // increase of failed NIXL KV transfers
	SleepLevel      float64    // the newest sleep level

	// Kind is the engine whose page it is; Router is set for a router's
	// page, judged on its summed figures.
	Kind   catalogue.EngineKind
	Router bool
	// Derived are the figures the newest page's parser derived: a state
	// judged on one may be judged on partial evidence.
	Derived catalogue.FigureSet
	// Trail is the evidence of the newest readings, over which FULL and
	// PREEMPTING are judged so that older readings do not hide a spike.
	Trail trail
	// WasFull, WasSlow and WasRecovering say the previous evaluation's
	// state, which is left only once its evidence is gone.
	WasFull bool
	// BatchCap, BatchCapSince and BatchCapStated are the replica's
	// (ReplicaReport.BatchCap); 0 when unknown.
	BatchCap       float64
	BatchCapSince  time.Time
	BatchCapStated bool
	// NoLatency is set when the page has none of the latency histograms,
	// whatever its engine can export (Triton's TensorRT-LLM backend).
	NoLatency     bool
	WasRecovering bool
	// Cleared is the evidence of a backlog that drained (see cleared).
	Cleared backlogCleared
	// Quiet is the evidence of a stall (quietSpan); GCMoved is set when
	// the API server's own process counters rose in the window, and
	// HTTPIncrease is the increase of its HTTP requests.
	Quiet        quiet
	GCMoved      bool
	HTTPIncrease float64
	// PoolQueue is the evidence of requests queued in the server's HTTP
	// pool, where no metric counts them.
	PoolQueue poolQueue
}

// backlogCleared is the evidence RECOVERING names: when the window's
// queue was last seen (zero when it still stands or never did), and the
// mean TTFT over the Seconds since, at most the trailing fullSpan.
type backlogCleared struct {
	At       time.Time
	TTFTMean Num
	Seconds  float64
}

// engineCounters are the scalars whose movement tells a live engine.
var engineCounters = []catalogue.Scalar{catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.Preemptions, catalogue.PrefixCacheQueries, catalogue.PrefixCacheHits, catalogue.SpecDrafts, catalogue.SpecDraftTokens, catalogue.SpecAcceptedTokens}

// figures computes into f the Figures of one replica or engine over the
// window, and returns the evidence. series[i] is its Series in the i-th
// good sample (nil when absent there); kvCapacity is in tokens (NaN when
// unknown). f is filled in place: a Figures is a kilobyte.
func (w *window) figures(f *Figures, series []*catalogue.Series, kvCapacity float64, cfg Config) evidence {
	*f = Figures{}
	ev := evidence{Samples: len(w.samples)}
	if n := len(w.samples); n > 1 {
		ev.SpanSeconds = w.samples[n-1].Time.Sub(w.samples[0].Time).Seconds()
	}
	runs := w.gatherRuns(series)
	scalar := func(k catalogue.Scalar) *counterRun { return &runs.scalars[k] }

	ev.Running, ev.Waiting, ev.KVCacheUsage = w.scalarGauge(series, catalogue.Running), w.scalarGauge(series, catalogue.Waiting), w.scalarGauge(series, catalogue.KVCacheUsage)
	newest := newestSeries(series)
	f.Running, f.Waiting, f.KVCacheUsage = NA, NA, NA
	if newest != nil {
		f.Running, f.Waiting, f.KVCacheUsage = Num(newest.Scalars[catalogue.Running]), Num(newest.Scalars[catalogue.Waiting]), Num(newest.Scalars[catalogue.KVCacheUsage])
	}

	w.finishFigures(f, &ev, runs)
	w.finishedTotal(f, &ev, runs)
	f.PromptTokensPerSecond = Num(w.rateOf(scalar(catalogue.PromptTokens)))
	f.GenerationTokensPerSecond = Num(w.rateOf(scalar(catalogue.GenerationTokens)))
	f.IORatio = ratio(f.PromptTokensPerSecond, f.GenerationTokensPerSecond)
	f.PreemptionsPerSecond = Num(w.rateOf(scalar(catalogue.Preemptions)))
	ev.Preemptions = w.increaseOf(scalar(catalogue.Preemptions))

	w.littlesLaw(f, &ev, series)
	f.PrefixCacheHitRate = ratio(Num(w.increaseOf(scalar(catalogue.PrefixCacheHits))), Num(w.increaseOf(scalar(catalogue.PrefixCacheQueries))))
	accepted := Num(w.increaseOf(scalar(catalogue.SpecAcceptedTokens)))
	f.SpecDecodeAcceptanceRate = ratio(accepted, Num(w.increaseOf(scalar(catalogue.SpecDraftTokens))))
	f.SpecDecodeAcceptedPerDraft = ratio(accepted, Num(w.increaseOf(scalar(catalogue.SpecDrafts))))

	w.latencyFigures(f, series, runs, cfg)
	f.KVCapacityTokens = Num(kvCapacity)
	f.MaxSeqsKVHolds = NA
	if perRequest := f.MeanPromptTokens + f.MeanGenerationTokens; f.KVCapacityTokens.Known() && perRequest > 0 {
		f.MaxSeqsKVHolds = Num(math.Floor(float64(f.KVCapacityTokens / perRequest)))
	}
	// A preempted request is recomputed from scratch: its prompt plus, on
	// average, half of its final output.
	f.RecomputedTokensPerSecond = f.PreemptionsPerSecond * (f.MeanPromptTokens + f.MeanGenerationTokens/2)
	if f.PreemptionsPerSecond == 0 {
		f.RecomputedTokensPerSecond = 0
	}

	w.signalFigures(f, &ev, series, runs)
	w.counterMovement(&ev, series, runs)
	w.trailing(&ev, series)
	w.cleared(&ev, series)
	return ev
}

// cleared fills ev.Cleared from the series.
func (w *window) cleared(ev *evidence, series []*catalogue.Series) {
	ev.Cleared = backlogCleared{TTFTMean: NA}
	queue := ev.queueScalar()
	n := len(series)
	last := -1
	for i := n - 1; i >= 0; i-- {
		if series[i] != nil && series[i].Scalars[queue] > 0 {
			last = i
			break
		}
	}
	if last < 0 || last >= n-2 {
		return
	}
	ev.Cleared.At = w.samples[last+1].Time
	from := max(last+1, w.trailStart(fullSpan, fullMinSamples))
	a, b := series[from], series[n-1]
	if a == nil || b == nil || from == n-1 {
		return
	}
	ha, hb := &a.Histograms[catalogue.TTFT], &b.Histograms[catalogue.TTFT]
	if !ha.Present() || !hb.Present() || !(hb.Count > ha.Count) || hb.Sum < ha.Sum {
		return
	}
	ev.Cleared.TTFTMean = Num((hb.Sum - ha.Sum) / (hb.Count - ha.Count))
	ev.Cleared.Seconds = w.samples[n-1].Time.Sub(w.samples[from].Time).Seconds()
}

// trail is the evidence of the newest readings of a window.
type trail struct {
	// Queue (queueScalar) and Running summarise the readings of the last
	// fullSpan (at least fullMinSamples), which span Seconds.
	Queue, Running gaugeStats
	Seconds        float64
	// LastTwoQueue summarises the queue of the two newest readings.
	LastTwoQueue gaugeStats
	// Preemptions is the plain increase of the preemption counter over
	// the last preemptingSpan; NaN when unknown.
	Preemptions float64
}

// queueScalar is the gauge FULL's queue is read from: the requests
// waiting for capacity where the page splits the waiting by reason.
func (ev *evidence) queueScalar() catalogue.Scalar {
	if ev.WaitingCapacity.N > 0 {
		return catalogue.WaitingCapacity
	}
	return catalogue.Waiting
}

// queueTrend is the one rule of when a queue's slope is a trend: the
// slope where the newest readings (q) show the queue moving its way, else
// 0. The window's slope alone is a trend of one dip or one jump: a queue
// held at 6 after one jump from 0 "grows by 0.2/s" for a window.
func queueTrend(growth Num, q gaugeStats) Num {
	switch {
	case !growth.Known():
		return NA
	case growth > 0 && q.Last > q.First, growth < 0 && q.Last < q.First:
		return growth
	}
	return 0
}

// trailing fills ev.Trail from the newest readings of the series.
func (w *window) trailing(ev *evidence, series []*catalogue.Series) {
	queue := ev.queueScalar()
	n := len(series)
	if n == 0 {
		ev.Trail = trail{Preemptions: math.NaN()}
		return
	}
	i := w.trailStart(fullSpan, fullMinSamples)
	ev.Trail.Queue, ev.Trail.Running = w.scalarGauge(series[i:], queue), w.scalarGauge(series[i:], catalogue.Running)
	ev.Trail.Seconds = w.samples[n-1].Time.Sub(w.samples[i].Time).Seconds()
	ev.Trail.LastTwoQueue = w.scalarGauge(series[max(n-2, 0):], queue)
	ev.Trail.Preemptions = counterIncrease(series[w.trailStart(preemptingSpan, 2):], catalogue.Preemptions)
}

// trailStart is the index of the first of the window's readings that
// cover the last span, or of the last minReadings when fewer do.
func (w *window) trailStart(span time.Duration, minReadings int) int {
	n := len(w.ms)
	if n == 0 {
		return 0
	}
	cutoff := w.ms[n-1] - span.Milliseconds()
	i := n - 1
	for i > 0 && (w.ms[i-1] >= cutoff || n-i < minReadings) {
		i--
	}
	return i
}

// counterIncrease is the plain increase of counter k over the series
// (plainIncrease): the trailing evidence asks whether it moved, not at
// what rate.
func counterIncrease(series []*catalogue.Series, k catalogue.Scalar) float64 {
	return plainIncrease(len(series), func(i int) float64 {
		if series[i] == nil {
			return math.NaN()
		}
		return series[i].Scalars[k]
	})
}

// finishFigures fills the finish-reason rates, their total and shares.
func (w *window) finishFigures(f *Figures, ev *evidence, runs *seriesRuns) {
	var rates [catalogue.NumFinishReasons]Num
	total, known := 0.0, false
	ev.Finished = math.NaN()
	for r := range catalogue.NumFinishReasons {
		rates[r] = Num(w.rateOf(&runs.finished[r]))
		if rates[r].Known() {
			total += float64(rates[r])
			known = true
			inc := w.increaseOf(&runs.finished[r])
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

// littlesLaw fills time running, queue growth, arrivals and efficiency.
// Arrivals are what finished plus what the batch and the queue grew by,
// never negative.
func (w *window) littlesLaw(f *Figures, ev *evidence, series []*catalogue.Series) {
	f.TimeRunningSeconds = NA
	if f.RequestsPerSecond > 0 {
		f.TimeRunningSeconds = Num(ev.Running.Mean) / f.RequestsPerSecond
	}
	f.WaitingGrowth = Num(w.gaugeDeriv(series, catalogue.Waiting, ev.Waiting))
	runningGrowth := Num(w.gaugeDeriv(series, catalogue.Running, ev.Running))
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

// latencyFigures fills the quantiles, the request shape and the goodput.
func (w *window) latencyFigures(f *Figures, series []*catalogue.Series, runs *seriesRuns, cfg Config) {
	quantiles := func(h catalogue.Histogram) (Quantiles, histogramWindow) { return w.quantiles(series, runs, h) }
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
	f.MeanPromptTokens = w.histogramMean(runs, catalogue.PromptLength)
	f.MeanGenerationTokens = w.histogramMean(runs, catalogue.GenerationLength)
}

// histogramMean is the mean observation of histogram h over the window,
// from its _sum and _count.
func (w *window) histogramMean(runs *seriesRuns, h catalogue.Histogram) Num {
	return ratio(Num(w.increaseOf(&runs.histSum[h])), Num(w.increaseOf(&runs.histCount[h])))
}

// counterMovement records whether the engine counters are exported, moved,
// dropped, or are all zero together with the gauges (an empty multiprocess
// directory).
func (w *window) counterMovement(ev *evidence, series []*catalogue.Series, runs *seriesRuns) {
	check := func(r *counterRun) {
		ev.ResetMs = max(ev.ResetMs, r.droppedMs)
		if r.known() {
			ev.CountersKnown = true
		}
		if w.increaseOf(r) > 0 {
			ev.CountersMoved = true
		}
	}
	for _, k := range engineCounters {
		check(&runs.scalars[k])
	}
	for r := range catalogue.NumFinishReasons {
		check(&runs.finished[r])
	}
	for h := range catalogue.NumHistograms {
		check(&runs.histCount[h]) // an absent histogram's run holds no reading
	}
	ev.AllZero = len(w.samples) > 0
	for _, s := range series {
		if s != nil && !seriesAllZero(s) {
			ev.AllZero = false
			break
		}
	}
}

// seriesAllZero reports whether every known scalar, finish count and
// histogram count of s is zero.
func seriesAllZero(s *catalogue.Series) bool {
	for _, v := range s.Scalars {
		if v != 0 && !math.IsNaN(v) {
			return false
		}
	}
	for _, v := range s.Finished {
		if v != 0 && !math.IsNaN(v) {
			return false
		}
	}
	for _, h := range s.Histograms {
		if h.Count != 0 && !math.IsNaN(h.Count) {
			return false
		}
	}
	return true
}

// newestSeries is the series of the newest sample that has one.
func newestSeries(series []*catalogue.Series) *catalogue.Series {
	for i := len(series) - 1; i >= 0; i-- {
		if series[i] != nil {
			return series[i]
		}
	}
	return nil
}

// ratio is a ÷ b, n/a when either is unknown or b is not positive (no
// queries is no hit rate, not 0 %).
func ratio(a, b Num) Num {
	if !a.Known() || !b.Known() || b <= 0 {
		return NA
	}
	return a / b
}
