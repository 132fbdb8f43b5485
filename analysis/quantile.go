package analysis

import (
	"math"
	"slices"
	"sort"
)

// Bucket is one classic histogram bucket: its upper bound (le) and its
// cumulative count, usually an increase over a window.
type Bucket struct{ Upper, Count float64 }

// smallDeltaTolerance is the relative difference below which two adjacent
// bucket counts are taken as equal (float noise), as in Prometheus ≥ 2.49.
const smallDeltaTolerance = 1e-12

// quantileInRange reports whether q is a quantile in [0, 1].
func quantileInRange(q float64) bool { return q >= 0 && q <= 1 }

// prepareBuckets sorts, merges and fixes the buckets in place, as
// histogram_quantile does before it looks for the rank, and returns the
// fixed slice; nil when there is none or no +Inf bucket. Quantiles and
// SLO shares are then read off the same prepared slice.
func prepareBuckets(b []Bucket) []Bucket {
	if len(b) == 0 {
		return nil
	}
	// A page's bounds come in order, each once: nothing to sort or merge.
	ascending := strictlyAscending(b)
	if !ascending && !slices.IsSortedFunc(b, compareUpper) {
		slices.SortFunc(b, compareUpper)
	}
	if !math.IsInf(b[len(b)-1].Upper, 1) {
		return nil
	}
	if !ascending {
		b = coalesceBuckets(b)
	}
	ensureMonotonicAndIgnoreSmallDeltas(b, smallDeltaTolerance)
	return b
}

// strictlyAscending reports whether every bucket's bound is above the one
// before it (a NaN bound is not).
func strictlyAscending(b []Bucket) bool {
	for i := 1; i < len(b); i++ {
		if !(b[i].Upper > b[i-1].Upper) {
			return false
		}
	}
	return true
}

// HistogramQuantile is Prometheus's histogram_quantile(q) of buckets b,
// which it prepares in place (prepareBuckets); NaN where Prometheus gives
// no number.
func HistogramQuantile(q float64, b []Bucket) Num {
	v, _ := rankedQuantile(q, prepareBuckets(b))
	return Num(v)
}

// rankedQuantile is Prometheus 3.x's histogram_quantile() of buckets fixed
// by prepareBuckets, and the index of the bucket it was read from (-1 when
// none): q outside [0, 1] gives ±Inf, NaN q, fewer than two buckets or
// zero observations NaN; the rank is interpolated linearly inside its
// bucket, from 0 for the lowest bucket when its bound is positive.
func rankedQuantile(q float64, b []Bucket) (float64, int) {
	switch {
	case q < 0:
		return math.Inf(-1), -1
	case q > 1:
		return math.Inf(1), -1
	case math.IsNaN(q) || len(b) < 2 || b[len(b)-1].Count == 0:
		return math.NaN(), -1
	}
	rank := q * b[len(b)-1].Count // of the observations
	// Go's binary search over all but the +Inf bucket, as Prometheus's.
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	if i == len(b)-1 {
		return b[len(b)-2].Upper, i
	}
	if i == 0 && b[0].Upper <= 0 {
		return b[0].Upper, i
	}
	var start float64
	end, count := b[i].Upper, b[i].Count
	if i > 0 {
		start = b[i-1].Upper
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return start + (end-start)*(rank/count), i
}

// quantileWithBucket is the quantile q of the prepared buckets b and the
// bucket it reads its answer from: beyond the last finite bound the upper
// bound is +Inf, the first bucket starts at 0 (or at -Inf when its bound
// is not positive). Both bounds are n/a when the quantile is.
func quantileWithBucket(q float64, b []Bucket) (Num, QuantileBucket) {
	v, i := rankedQuantile(q, b)
	if math.IsNaN(v) || !quantileInRange(q) {
		return Num(v), QuantileBucket{Lower: NA, Upper: NA}
	}
	switch {
	case i == len(b)-1:
		return Num(v), QuantileBucket{Lower: Num(b[len(b)-2].Upper), Upper: Num(math.Inf(1))}
	case i == 0 && b[0].Upper <= 0:
		return Num(v), QuantileBucket{Lower: Num(math.Inf(-1)), Upper: Num(b[0].Upper)}
	case i == 0:
		return Num(v), QuantileBucket{Lower: 0, Upper: Num(b[0].Upper)}
	}
	return Num(v), QuantileBucket{Lower: Num(b[i-1].Upper), Upper: Num(b[i].Upper)}
}

// shareWithin is the fraction of observations at or below limit, read off
// buckets fixed by prepareBuckets: a lower bound when limit falls inside a
// bucket, which is left out. NaN without observations.
func shareWithin(limit float64, b []Bucket) float64 {
	if len(b) < 2 {
		return math.NaN()
	}
	total := b[len(b)-1].Count
	if !(total > 0) {
		return math.NaN()
	}
	var within float64
	for _, x := range b {
		if x.Upper > limit {
			break
		}
		within = x.Count
	}
	return math.Min(math.Max(within/total, 0), 1)
}

// compareUpper orders buckets by upper bound, as Prometheus's sort does.
func compareUpper(a, b Bucket) int {
	switch {
	case a.Upper < b.Upper:
		return -1
	case a.Upper > b.Upper:
		return 1
	}
	return 0
}

// coalesceBuckets merges adjacent buckets with equal bounds (le="1" and
// le="1.0") by summing their counts, in place.
func coalesceBuckets(b []Bucket) []Bucket {
	last := b[0]
	i := 0
	for _, x := range b[1:] {
		if x.Upper == last.Upper {
			last.Count += x.Count
			continue
		}
		b[i] = last
		last = x
		i++
	}
	b[i] = last
	return b[:i+1]
}

// ensureMonotonicAndIgnoreSmallDeltas raises any count below its
// predecessor to it and flattens differences within the relative tolerance.
// A NaN count becomes the new reference, exactly as in Prometheus 3.x.
func ensureMonotonicAndIgnoreSmallDeltas(b []Bucket, tolerance float64) {
	prev := b[0].Count
	for i := 1; i < len(b); i++ {
		curr := b[i].Count
		if curr == prev {
			continue
		}
		if almostEqual(prev, curr, tolerance) || curr < prev {
			b[i].Count = prev
			continue
		}
		prev = curr
	}
}

// minNormal is the smallest normal float64.
var minNormal = math.Float64frombits(0x0010000000000000)

// almostEqual is Prometheus's util/almost.Equal: a relative comparison that
// treats two NaNs as equal.
func almostEqual(a, b, epsilon float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	absSum := math.Abs(a) + math.Abs(b)
	diff := math.Abs(a - b)
	if a == 0 || b == 0 || absSum < minNormal {
		return diff < epsilon*minNormal
	}
	// For the absSum that reaches here the built-in min is math.Min.
	return diff/min(absSum, math.MaxFloat64) < epsilon
}
