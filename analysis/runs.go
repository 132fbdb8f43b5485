package analysis

import (
	"math"
	"math/bits"

	"github.com/vtop-dev/vtop/catalogue"
)

// counterRun is what rate(), increase() and the reset checks read of one
// metric's known readings over the window, gathered in one walk over the
// samples: the first and last readings, how many, and what drops hide.
type counterRun struct {
	n               int
	firstMs, lastMs int64
	first, last     float64
	resets          float64 // the reading before each drop, summed oldest first
	droppedMs       int64   // Unix ms of the newest drop; 0 for none
}

// setRising makes r the run of n readings, from first at firstMs to last
// at lastMs, known to have no NaN and no drop: what add would gather.
func (r *counterRun) setRising(n int, firstMs, lastMs int64, first, last float64) {
	r.n, r.firstMs, r.lastMs, r.first, r.last, r.resets, r.droppedMs = n, firstMs, lastMs, first, last, 0, 0
}

// add takes the next reading, at ms; a NaN is a missing sample, skipped.
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

// difference is the run's last reading less its first, with what its
// drops hid added back: what increase() extrapolates.
func (r *counterRun) difference() float64 { return r.last - r.first + r.resets }

// known reports whether the metric has a reading in the window.
func (r *counterRun) known() bool { return r.n > 0 }

// rateOf is rate() of the run's counter over the window; NaN when unknown.
func (w *window) rateOf(r *counterRun) float64 { return w.extrapolateRun(r, true) }

// increaseOf is increase() of the run's counter over the window; NaN when
// unknown.
func (w *window) increaseOf(r *counterRun) float64 { return w.extrapolateRun(r, false) }

// extrapolateRun is rate() or increase() of a counter over the run.
func (w *window) extrapolateRun(r *counterRun, isRate bool) float64 {
	if r.n < 2 {
		return math.NaN()
	}
	sp := w.spanOf(r.n, r.firstMs, r.lastMs)
	v, ok := sp.extrapolate(r.first, r.difference(), true, isRate)
	if !ok {
		return math.NaN()
	}
	return v
}

// seriesRuns are the counter runs of one replica's (or engine's) series
// over the window: every scalar, finish reason and histogram total.
type seriesRuns struct {
	scalars            [catalogue.NumScalars]counterRun
	finished           [catalogue.NumFinishReasons]counterRun
	histSum, histCount [catalogue.NumHistograms]counterRun
	// rising is what rose throughout the window, read off its ends;
	// absent what no series has, never read.
	rising risingSets
	absent absentSets
}

// gatherRuns walks the series once and returns their runs, valid until
// the next call. series[i] is the series in the i-th sample of the window
// (nil when absent there).
func (w *window) gatherRuns(series []*catalogue.Series) *seriesRuns {
	r := &w.runs
	*r = seriesRuns{rising: risingThroughout(series), absent: absentThroughout(series)}
	w.risingMetricRuns(r, series)
	walkScalars := allScalars &^ r.rising.scalars &^ r.absent.scalars
	walkFinished := allFinished &^ r.rising.finished &^ r.absent.finished
	walkTotals := allHistograms &^ r.rising.totals &^ r.absent.histograms
	for i, s := range series {
		if s == nil {
			continue
		}
		ms := w.ms[i]
		for set := walkScalars; set != 0; set &= set - 1 {
			k := bits.TrailingZeros32(uint32(set))
			r.scalars[k].add(ms, s.Scalars[k])
		}
		for set := walkFinished; set != 0; set &= set - 1 {
			k := bits.TrailingZeros8(uint8(set))
			r.finished[k].add(ms, s.Finished[k])
		}
		for set := walkTotals; set != 0; set &= set - 1 {
			h := bits.TrailingZeros16(uint16(set))
			if b := &s.Histograms[h]; b.Present() {
				r.histSum[h].add(ms, b.Sum)
				r.histCount[h].add(ms, b.Count)
			}
		}
	}
	return r
}

// Every scalar, finish reason and histogram, as sets.
const (
	allScalars    = catalogue.ScalarSet(1)<<catalogue.NumScalars - 1
	allFinished   = catalogue.FinishSet(1)<<catalogue.NumFinishReasons - 1
	allHistograms = catalogue.HistogramSet(1)<<catalogue.NumHistograms - 1
)

// risingSets are what rose from every sample of a window to the next
// (catalogue's MarkRising), with no NaN and no drop.
type risingSets struct {
	buckets, totals catalogue.HistogramSet
	scalars         catalogue.ScalarSet
	finished        catalogue.FinishSet
}

// risingThroughout returns what rose throughout the series: nothing when
// there are fewer than two or one is absent.
func risingThroughout(series []*catalogue.Series) risingSets {
	if len(series) < 2 || series[0] == nil {
		return risingSets{}
	}
	all := risingSets{buckets: allHistograms, totals: allHistograms, scalars: allScalars, finished: allFinished}
	for _, s := range series[1:] {
		if s == nil {
			return risingSets{}
		}
		all.buckets &= s.Rising
		all.totals &= s.RisingTotals
		all.scalars &= s.RisingScalars
		all.finished &= s.RisingFinished
	}
	return all
}

// absentSets are what every series of a window lacks.
type absentSets struct {
	scalars    catalogue.ScalarSet
	finished   catalogue.FinishSet
	histograms catalogue.HistogramSet
}

// absentThroughout returns what no series has.
func absentThroughout(series []*catalogue.Series) absentSets {
	all := absentSets{scalars: allScalars, finished: allFinished, histograms: allHistograms}
	for _, s := range series {
		if s != nil {
			all.scalars &= s.AbsentScalars
			all.finished &= s.AbsentFinished
			all.histograms &= s.AbsentHistograms
		}
	}
	return all
}

// risingMetricRuns fills the runs of the scalars, finish counts and
// histogram totals that rise throughout the window from their first and
// last readings.
func (w *window) risingMetricRuns(r *seriesRuns, series []*catalogue.Series) {
	n := len(series)
	if n < 2 {
		return // nothing rises throughout fewer than two readings
	}
	first, last := series[0], series[n-1]
	firstMs, lastMs := w.ms[0], w.ms[n-1]
	for set := r.rising.scalars; set != 0; set &= set - 1 {
		k := bits.TrailingZeros32(uint32(set))
		r.scalars[k].setRising(n, firstMs, lastMs, first.Scalars[k], last.Scalars[k])
	}
	for set := r.rising.finished; set != 0; set &= set - 1 {
		k := bits.TrailingZeros8(uint8(set))
		r.finished[k].setRising(n, firstMs, lastMs, first.Finished[k], last.Finished[k])
	}
	for set := r.rising.totals; set != 0; set &= set - 1 {
		h := bits.TrailingZeros16(uint16(set))
		fh, lh := &first.Histograms[h], &last.Histograms[h]
		r.histSum[h].setRising(n, firstMs, lastMs, fh.Sum, lh.Sum)
		r.histCount[h].setRising(n, firstMs, lastMs, fh.Count, lh.Count)
	}
}
