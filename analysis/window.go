package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// window holds the good samples of one target inside the analysis window
// and the scratch space the figures are computed in, reused from one
// target to the next so that an evaluation allocates little.
//
// The window is CLOSED, [now-window, now], as in Prometheus before 3.0: two
// readings exactly N seconds apart, evaluated at the second with a window
// of N seconds, give the plain difference ÷ N, as `vtop analyze before.txt
// after.txt --seconds N` promises.
type window struct {
	samples        []*catalogue.Sample // good samples in the window, oldest first
	ms             []int64             // their times in Unix ms, read once for every metric
	startMs, endMs int64
	seconds        float64

	ts      []int64
	vs      []float64
	buckets []Bucket

	series     []*catalogue.Series // the series being read, one per sample
	bucketRuns []counterRun        // the run of each bucket of a histogram
	runs       seriesRuns          // the counters of the series being read
	inOrder    []bool              // whether a sample's engines are the newest page's, in its order

	// everySample is the extrapolation span of a counter read in every
	// sample, as most are: worked out once per window, not per counter.
	everySample span

	// stored are the target's buckets as the store evaluated them (nil
	// for none; storedIncreases).
	stored *catalogue.WindowBuckets
}

// reset makes w the window of the good samples of samples (oldest first)
// with now-length <= Time <= now, keeping its scratch space.
func (w *window) reset(samples []catalogue.Sample, now time.Time, length time.Duration) {
	w.endMs, w.startMs, w.seconds = now.UnixMilli(), now.Add(-length).UnixMilli(), length.Seconds()
	if cap(w.samples) < len(samples) {
		w.samples, w.ms = make([]*catalogue.Sample, 0, len(samples)), make([]int64, 0, len(samples))
	}
	w.samples, w.ms = w.samples[:0], w.ms[:0]
	for i := range samples {
		s := &samples[i]
		t := s.Time.UnixMilli()
		if s.OK() && t >= w.startMs && t <= w.endMs {
			w.samples = append(w.samples, s)
			w.ms = append(w.ms, t)
		}
	}
	w.startAtFirstGood(samples)
	w.everySample = w.newSpanOver(w.ms)
}

// newSpanOver is the span of readings at the times ms over the window.
func (w *window) newSpanOver(ms []int64) span {
	if len(ms) < 2 {
		return span{}
	}
	return newSpan(ms[0], ms[len(ms)-1], len(ms), w.startMs, w.endMs)
}

// spanOf is the span of n readings from firstMs to lastMs in the window.
func (w *window) spanOf(n int, firstMs, lastMs int64) span {
	if n == len(w.ms) {
		return w.everySample
	}
	return newSpan(firstMs, lastMs, n, w.startMs, w.endMs)
}

// seriesScratch returns the window's slice of one series per sample, all
// nil, valid until the next call.
func (w *window) seriesScratch() []*catalogue.Series {
	if cap(w.series) < len(w.samples) {
		w.series = make([]*catalogue.Series, len(w.samples))
	}
	w.series = w.series[:len(w.samples)]
	clear(w.series)
	return w.series
}

// onlySample makes s the window's one sample: the newest good one, older
// than the window, whose gauges are still shown.
func (w *window) onlySample(s *catalogue.Sample) {
	w.samples, w.ms = append(w.samples[:0], s), append(w.ms[:0], s.Time.UnixMilli())
	w.everySample = w.newSpanOver(w.ms)
}

// startAtFirstGood shortens a window that reaches back before the first
// good scrape of the target: just after vtop starts, rates are over the
// time vtop has watched, not diluted by seconds nobody saw.
func (w *window) startAtFirstGood(samples []catalogue.Sample) {
	for i := range samples {
		if !samples[i].OK() {
			continue
		}
		if first := samples[i].Time.UnixMilli(); first > w.startMs && first < w.endMs {
			w.startMs = first
			w.seconds = float64(w.endMs-first) / 1000
		}
		return
	}
}

// gaugeDeriv is deriv() of gauge k of the series over the window, whose
// summary is g; NaN when unknown. A gauge that never moved (an empty
// queue) has no slope to work out: deriv() gives 0 for readings all equal
// (NaN when infinite). A NaN reading is a missing sample, not a value.
func (w *window) gaugeDeriv(series []*catalogue.Series, k catalogue.Scalar, g gaugeStats) float64 {
	switch {
	case g.N < 2:
		return math.NaN()
	case g.Min == g.Max && math.IsInf(g.Min, 0):
		return math.NaN()
	case g.Min == g.Max:
		return 0
	}
	w.ts, w.vs = w.ts[:0], w.vs[:0]
	for i, s := range series {
		if s != nil && !math.IsNaN(s.Scalars[k]) {
			w.ts = append(w.ts, w.ms[i])
			w.vs = append(w.vs, s.Scalars[k])
		}
	}
	r, _ := Deriv(w.ts, w.vs) // ok: g holds the same g.N ≥ 2 readings
	return r
}

// gaugeStats summarises a gauge over the window; NaN when it is absent.
type gaugeStats struct {
	First, Last, Min, Max, Mean float64
	N                           int
}

// scalarGauge summarises gauge k of the series over the window. The
// built-in min and max treat -0 and the infinities as math.Min and
// math.Max do, without a call per reading.
func (w *window) scalarGauge(series []*catalogue.Series, k catalogue.Scalar) gaugeStats {
	g := gaugeStats{First: math.NaN(), Last: math.NaN(), Min: math.NaN(), Max: math.NaN(), Mean: math.NaN()}
	// Kept apart from g until the end, so that they stay in registers.
	var first, last, lo, hi, sum float64
	n := 0
	for _, s := range series {
		if s == nil {
			continue
		}
		v := s.Scalars[k]
		if math.IsNaN(v) {
			continue
		}
		if n == 0 {
			first, lo, hi = v, v, v
		}
		lo, hi, last = min(lo, v), max(hi, v), v
		sum += v
		n++
	}
	if n == 0 {
		return g
	}
	g.First, g.Last, g.Min, g.Max, g.N = first, last, lo, hi, n
	g.Mean = sum / float64(n)
	return g
}

// histogramWindow is one histogram's increase over the window.
type histogramWindow struct {
	Sum, Count float64  // increase of _sum and _count; NaN when unknown
	Buckets    []Bucket // prepared for quantiles; nil when no quantile is possible
}

// histogram computes the per-bucket increase of histogram h over the
// window, using the bounds of the newest sample that has it: samples with
// other bounds (another max_model_len) are another series, left out. runs
// hold _sum and _count. The buckets are valid until the next call.
func (w *window) histogram(series []*catalogue.Series, runs *seriesRuns, h catalogue.Histogram) histogramWindow {
	hw := histogramWindow{Sum: math.NaN(), Count: math.NaN()}
	if runs.absent.histograms.Has(h) {
		return hw
	}
	bounds := newestBounds(series, h)
	if bounds == nil {
		return hw
	}
	hw.Sum = w.increaseOf(&runs.histSum[h])
	hw.Count = w.increaseOf(&runs.histCount[h])

	w.buckets = slices.Grow(w.buckets[:0], len(bounds)) // one bucket per bound at most
	switch {
	case len(bounds) == 0:
		w.storedIncreases(h)
	case runs.rising.buckets.Has(h):
		w.risingIncreases(series, h, bounds)
	default:
		w.walkedIncreases(series, h, bounds)
	}
	hw.Buckets = prepareBuckets(w.buckets)
	return hw
}

// storedIncreases appends to w.buckets the store's increase of each
// bucket of histogram h, where the samples hold _sum and _count but no
// buckets: only for the very window the store evaluated ([At−Window, At],
// not shortened by startAtFirstGood), over which its increases are those
// walkedIncreases would find (docs/prometheus.md). Otherwise the
// histogram has no buckets, and its quantiles are n/a, never a guess.
func (w *window) storedIncreases(h catalogue.Histogram) {
	st := w.stored
	if st == nil || st.At.UnixMilli() != w.endMs || st.At.Add(-st.Window).UnixMilli() != w.startMs {
		return
	}
	for _, b := range st.Histograms[h] {
		if !math.IsNaN(b.Increase) {
			w.buckets = append(w.buckets, Bucket{Upper: b.Upper, Count: b.Increase})
		}
	}
}

// risingIncreases appends to w.buckets the increase of each bucket of a
// histogram that rises throughout the window: a bucket's run is its first
// and last readings, all read at the same times, so one span serves all.
func (w *window) risingIncreases(series []*catalogue.Series, h catalogue.Histogram, bounds []float64) {
	n := len(series)
	first, last := series[0].Histograms[h].Counts, series[n-1].Histograms[h].Counts
	sp := w.spanOf(n, w.ms[0], w.ms[n-1])
	for j, upper := range bounds {
		// Resets of zero added, as difference does, so that -0 less +0 reads +0.
		const noResets = 0.0
		if inc, ok := sp.extrapolate(first[j], last[j]-first[j]+noResets, true, false); ok && !math.IsNaN(inc) {
			w.buckets = append(w.buckets, Bucket{Upper: upper, Count: inc})
		}
	}
}

// walkedIncreases appends to w.buckets the increase of each bucket of a
// histogram; a bucket with fewer than two readings has none.
func (w *window) walkedIncreases(series []*catalogue.Series, h catalogue.Histogram, bounds []float64) {
	if cap(w.bucketRuns) < len(bounds) {
		w.bucketRuns = make([]counterRun, len(bounds))
	}
	bucketRuns := w.bucketRuns[:len(bounds)]
	w.walkRuns(bucketRuns, series, h, bounds)
	for j, upper := range bounds {
		if inc := w.increaseOf(&bucketRuns[j]); !math.IsNaN(inc) {
			w.buckets = append(w.buckets, Bucket{Upper: upper, Count: inc})
		}
	}
}

// walkRuns gathers every bucket's run in one walk over the samples with
// these bounds.
func (w *window) walkRuns(bucketRuns []counterRun, series []*catalogue.Series, h catalogue.Histogram, bounds []float64) {
	clear(bucketRuns)
	for i, s := range series {
		if s == nil {
			continue
		}
		b := &s.Histograms[h]
		if !catalogue.SameBounds(b.Bounds, bounds) || len(b.Counts) != len(bounds) {
			continue
		}
		ms := w.ms[i]
		for j, v := range b.Counts {
			bucketRuns[j].add(ms, v)
		}
	}
}

// newestBounds returns the bounds of histogram h in the newest series that
// has it; nil when none does.
func newestBounds(series []*catalogue.Series, h catalogue.Histogram) []float64 {
	for i := len(series) - 1; i >= 0; i-- {
		if series[i] != nil && series[i].Histograms[h].Present() {
			return series[i].Histograms[h].Bounds
		}
	}
	return nil
}
