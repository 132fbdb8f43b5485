package catalogue

import (
	"cmp"
	"math"
)

// MarkRising sets the Rising histograms (and the RisingScalars,
// RisingFinished and RisingTotals) of every series of s, a sample a
// source is about to store, against prev, the same target's previous good
// sample (nil when there is none). A series of an engine is set against
// the first engine of its name in prev, the one the analysis pairs it with.
// It also marks what each series lacks (AbsentScalars and the rest), which
// needs no prev.
//
// A bucket's increase over a window needs every reading of it, because a
// drop anywhere is a reset (Prometheus's rule). Marked once as a sample
// arrives, a window whose every pair of neighbours rises needs only its
// first and last readings: the analysis reads each bucket once per sample
// stored instead of once per sample per evaluation.
func (s *Sample) MarkRising(prev *Sample) {
	if !s.OK() {
		return
	}
	if prev == nil || !prev.OK() {
		prev = &noReading
	}
	s.Total.mark(&prev.Total)
	for i := range s.Engines {
		s.Engines[i].mark(cmp.Or(prev.EngineSeries(s.Engines[i].Name), &noReading.Total))
	}
}

// noReading is what a series is marked against when there is no reading
// before it: every figure absent, so nothing rises.
var noReading = Sample{Total: NewSeries()}

// mark marks what s lacks, and what rose in s since prev.
func (s *Series) mark(prev *Series) {
	s.Rising, s.RisingScalars, s.RisingFinished, s.RisingTotals = 0, 0, 0, 0
	s.AbsentScalars, s.AbsentFinished, s.AbsentHistograms = 0, 0, 0
	// v >= before is false when either is NaN: a reading missing or dropping does not rise.
	for k, v := range s.Scalars {
		if math.IsNaN(v) {
			s.AbsentScalars |= 1 << k
		}
		if v >= prev.Scalars[k] {
			s.RisingScalars |= 1 << k
		}
	}
	for r, v := range s.Finished {
		if math.IsNaN(v) {
			s.AbsentFinished |= 1 << r
		}
		if v >= prev.Finished[r] {
			s.RisingFinished |= 1 << r
		}
	}
	for h := range NumHistograms {
		b, p := &s.Histograms[h], &prev.Histograms[h]
		if !b.Present() {
			s.AbsentHistograms.Add(h)
		}
		if rises(p, b) {
			s.Rising.Add(h)
		}
		if b.Present() && p.Present() && b.Sum >= p.Sum && b.Count >= p.Count {
			s.RisingTotals.Add(h)
		}
	}
}

// EngineSeries returns the series of the first engine of that name in s,
// nil if none.
func (s *Sample) EngineSeries(name string) *Series {
	for i := range s.Engines {
		if s.Engines[i].Name == name {
			return &s.Engines[i].Series
		}
	}
	return nil
}

// rises reports whether no bucket of cur is below prev's, the two
// comparable and no count NaN.
func rises(prev, cur *Buckets) bool {
	if !Comparable(prev, cur) {
		return false
	}
	for j, c := range cur.Counts {
		p := prev.Counts[j]
		if math.IsNaN(c) || math.IsNaN(p) || c < p {
			return false
		}
	}
	return true
}

// Comparable reports whether two readings of a histogram can be compared
// bucket by bucket: both present, with equal bounds and a count per bound.
func Comparable(a, b *Buckets) bool {
	return a.Present() && b.Present() && SameBounds(a.Bounds, b.Bounds) &&
		len(a.Counts) == len(a.Bounds) && len(b.Counts) == len(b.Bounds)
}

// SameBounds reports whether two bound lists are equal, a NaN equal to a
// NaN: one histogram series, as against another's. The page parser
// interns bounds, so the identity check almost always decides.
func SameBounds(a, b []float64) bool {
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
