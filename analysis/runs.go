package analysis

import (
	"math"

	"github.com/vtop-dev/vtop/catalogue"
)

// counterRun is what rate(), increase() and the reset checks read of one
// metric's known readings over the window, gathered in one pass: the first
// and last readings, how many there are, and what the drops hide. It is
// what collecting the readings and handing them to ExtrapolatedRate reads
// of them, without the copy: every figure of a counter, and its reset,
// comes from one walk over the samples instead of one walk per figure.
type counterRun struct {
	n               int
	firstMs, lastMs int64
	first, last     float64
	resets          float64 // the reading before each drop, summed oldest first (resetCompensation)
	droppedMs       int64   // Unix ms of the newest drop; 0 for none
}

// risingRun is the run of n readings, from first at firstMs to last at
// lastMs, known to have no NaN and no drop: what add would gather from
// them, without reading those in between.
func risingRun(n int, firstMs, lastMs int64, first, last float64) counterRun {
	return counterRun{n: n, firstMs: firstMs, lastMs: lastMs, first: first, last: last}
}

// add takes the next reading, at ms; a NaN is a missing sample, skipped
// as collect skips it.
func (r *counterRun) add(ms int64, v float64) {
	switch {
	case math.IsNaN(v):
		return
	case r.n == 0:
		r.first, r.firstMs = v, ms
	case v < r.last:
		r.resets += r.last
		r.droppedMs = ms
	}
	r.last, r.lastMs = v, ms
	r.n++
}

// known reports whether the metric has a reading in the window.
func (r *counterRun) known() bool { return r.n > 0 }

// rateOf is rate() of the run's counter over the window; NaN when unknown.
func (w *window) rateOf(r *counterRun) float64 { return w.extrapolateRun(r, true) }

// increaseOf is increase() of the run's counter over the window; NaN when
// unknown.
func (w *window) increaseOf(r *counterRun) float64 { return w.extrapolateRun(r, false) }

// extrapolateRun is ExtrapolatedRate of a counter over the run's readings.
func (w *window) extrapolateRun(r *counterRun, isRate bool) float64 {
	if r.n < 2 {
		return math.NaN()
	}
	v, ok := extrapolate(r.firstMs, r.lastMs, r.n, r.first, r.last-r.first+r.resets, w.startMs, w.endMs, true, isRate)
	if !ok {
		return math.NaN()
	}
	return v
}

// seriesRuns are the counter runs of one replica's (or engine's) series
// over the window, every scalar, finish reason and histogram total at once.
type seriesRuns struct {
	scalars  [catalogue.NumScalars]counterRun
	finished [catalogue.NumFinishReasons]counterRun
	// histSum and histCount are _sum and _count of each histogram where
	// the page has the histogram.
	histSum, histCount [catalogue.NumHistograms]counterRun
}

// gatherRuns walks the series once and returns their runs, held in the
// window's scratch space until the next call. series[i] is the series in
// the i-th sample of the window (nil when absent there).
func (w *window) gatherRuns(series []*catalogue.Series) *seriesRuns {
	r := &w.runs
	*r = seriesRuns{}
	for i, s := range series {
		if s == nil {
			continue
		}
		ms := w.ms[i]
		for k, v := range s.Scalars {
			r.scalars[k].add(ms, v)
		}
		for k, v := range s.Finished {
			r.finished[k].add(ms, v)
		}
		for h := range s.Histograms {
			b := &s.Histograms[h]
			if b.Present() {
				r.histSum[h].add(ms, b.Sum)
				r.histCount[h].add(ms, b.Count)
			}
		}
	}
	return r
}
