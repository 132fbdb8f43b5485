package analysis

import (
	"math"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// window holds the good samples of one target inside the analysis window
// and the scratch space the figures are computed in, reused from one metric
// to the next so that an evaluation allocates little.
//
// The window is CLOSED, [now-window, now]: a sample exactly at now-window is
// in. This is Prometheus's rule before 3.0 (3.x leaves the start open). It is
// chosen so that two readings exactly N seconds apart, evaluated at the
// second with a window of N seconds, give the plain difference ÷ N with no
// extrapolation: what `vtop analyze before.txt after.txt --seconds N`
// promises.
type window struct {
	samples        []*catalogue.Sample // good samples in the window, oldest first
	startMs, endMs int64
	seconds        float64

	ts      []int64
	vs      []float64
	buckets []Bucket

	withBounds   []*catalogue.Buckets // a histogram's readings with the bounds it is read by
	withBoundsMs []int64              // and their times
}

// newWindow selects the good samples of samples (oldest first) with
// now-length <= Time <= now.
func newWindow(samples []catalogue.Sample, now time.Time, length time.Duration) *window {
	w := &window{
		endMs:   now.UnixMilli(),
		startMs: now.Add(-length).UnixMilli(),
		seconds: length.Seconds(),
	}
	for i := range samples {
		s := &samples[i]
		t := s.Time.UnixMilli()
		if s.OK() && t >= w.startMs && t <= w.endMs {
			w.samples = append(w.samples, s)
		}
	}
	w.startAtFirstGood(samples)
	return w
}

// startAtFirstGood shortens a window that reaches back before the first
// good scrape of the target: just after vtop starts (or a target first
// answers) rates are over the time vtop has watched, which is Prometheus's
// rate() over that shorter range, instead of being diluted by seconds
// nobody saw. A window with older history is left as it is.
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

// seriesAt returns the value of one metric at the i-th sample of the window,
// NaN when absent.
type seriesAt func(i int) float64

// collect fills the scratch slices with the known values of at, skipping
// samples where the metric is absent: in a Sample NaN means "not on the
// page", which for Prometheus is a missing sample, not a NaN value.
func (w *window) collect(at seriesAt) {
	w.ts, w.vs = w.ts[:0], w.vs[:0]
	for i, s := range w.samples {
		v := at(i)
		if math.IsNaN(v) {
			continue
		}
		w.ts = append(w.ts, s.Time.UnixMilli())
		w.vs = append(w.vs, v)
	}
}

// rate is rate() of a counter over the window; NaN when unknown.
func (w *window) rate(at seriesAt) float64 {
	w.collect(at)
	r, ok := ExtrapolatedRate(w.ts, w.vs, w.startMs, w.endMs, true, true)
	if !ok {
		return math.NaN()
	}
	return r
}

// increase is increase() of a counter over the window; NaN when unknown.
func (w *window) increase(at seriesAt) float64 {
	w.collect(at)
	r, ok := ExtrapolatedRate(w.ts, w.vs, w.startMs, w.endMs, true, false)
	if !ok {
		return math.NaN()
	}
	return r
}

// deriv is deriv() of a gauge over the window; NaN when unknown.
func (w *window) deriv(at seriesAt) float64 {
	w.collect(at)
	r, ok := Deriv(w.ts, w.vs)
	if !ok {
		return math.NaN()
	}
	return r
}

// droppedAt returns the Unix ms of the newest reading in the window that
// is below the known reading before it (a counter reset), 0 when none is.
func (w *window) droppedAt(at seriesAt) int64 {
	w.collect(at)
	for i := len(w.vs) - 1; i > 0; i-- {
		if w.vs[i] < w.vs[i-1] {
			return w.ts[i]
		}
	}
	return 0
}

// gaugeStats summarises a gauge over the window. Every field is NaN when the
// gauge is absent from every sample.
type gaugeStats struct {
	First, Last, Min, Max, Mean float64
	N                           int
}

// gauge summarises a gauge's known readings over the window.
func (w *window) gauge(at seriesAt) gaugeStats {
	w.collect(at)
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

// histogramWindow is one histogram's increase over the window.
type histogramWindow struct {
	Sum, Count float64  // increase of _sum and _count; NaN when unknown
	Buckets    []Bucket // prepared for quantiles; nil when no quantile is possible
}

// histogram computes the per-bucket increase of histogram h over the
// window (counter semantics, resets handled per bucket), using the bounds of
// the newest sample that has it. Samples with other bounds (the server
// restarted with another max_model_len) are another series and are left
// out; a bucket with fewer than two readings disappears, as in Prometheus.
// The returned buckets live in the window's scratch space and are valid
// until the next call.
func (w *window) histogram(series []*catalogue.Series, h catalogue.Histogram) histogramWindow {
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
	if cap(w.withBounds) < len(series) {
		w.withBounds, w.withBoundsMs = make([]*catalogue.Buckets, 0, len(series)), make([]int64, 0, len(series))
	}
	w.withBounds, w.withBoundsMs = w.withBounds[:0], w.withBoundsMs[:0]
	for i, s := range series {
		if s == nil {
			continue
		}
		if b := &s.Histograms[h]; sameBounds(b.Bounds, bounds) && len(b.Counts) == len(bounds) {
			w.withBounds = append(w.withBounds, b)
			w.withBoundsMs = append(w.withBoundsMs, w.samples[i].Time.UnixMilli())
		}
	}
	w.buckets = w.buckets[:0]
	for j, upper := range bounds {
		// What increase does, over those samples: a NaN count is absent.
		w.ts, w.vs = w.ts[:0], w.vs[:0]
		for k, b := range w.withBounds {
			if v := b.Counts[j]; !math.IsNaN(v) {
				w.ts = append(w.ts, w.withBoundsMs[k])
				w.vs = append(w.vs, v)
			}
		}
		if inc, ok := ExtrapolatedRate(w.ts, w.vs, w.startMs, w.endMs, true, false); ok && !math.IsNaN(inc) {
			w.buckets = append(w.buckets, Bucket{Upper: upper, Count: inc})
		}
	}
	hw.Buckets = prepareBuckets(w.buckets)
	return hw
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

// sameBounds reports whether two bound lists are equal. The page parser
// interns bounds, so the identity check almost always decides.
func sameBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}
