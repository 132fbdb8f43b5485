package analysis

import "math"

// ExtrapolatedRate is Prometheus's rate(), increase() and delta() over the
// raw samples of one series (ts in milliseconds, oldest first), for the range
// [rangeStartMs, rangeEndMs]: rate is (isCounter, isRate) = (true, true),
// increase is (true, false), delta is (false, false). The analysis reads
// counters through counterRun and span; this is the same rule over a
// series whose NaN values stay in, as in Prometheus (a comparison with
// NaN is false, so NaN never counts as a drop), and the reference the
// other sources' rates are tested against.
//
// ok is false when there is no value: fewer than two samples, or (unlike
// Prometheus, whose storage cannot hold them) samples that span no time.
func ExtrapolatedRate(ts []int64, vs []float64, rangeStartMs, rangeEndMs int64, isCounter, isRate bool) (float64, bool) {
	n := len(vs)
	if n < 2 || len(ts) != n {
		return 0, false
	}
	result, resets := vs[n-1]-vs[0], 0.0
	for i := 1; i < n; i++ {
		if vs[i] < vs[i-1] {
			resets += vs[i-1] // a reset: the value just before the drop
		}
	}
	if isCounter {
		result += resets
	}
	s := newSpan(ts[0], ts[n-1], n, rangeStartMs, rangeEndMs)
	return s.extrapolate(vs[0], result, isCounter, isRate)
}

// span is what extrapolation reads of the times of a series' readings,
// apart from their values: counters read at the same times (a histogram's
// buckets) share one, its divisions done once.
type span struct {
	sampled          float64 // seconds from the first reading to the last
	toStart, toEnd   float64 // seconds extrapolated before and after, before the zero-point clamp
	rangeSeconds     float64
	unclampedFactor  float64 // (sampled + toStart + toEnd) / sampled
	readingsSpanTime bool    // false for fewer than two readings or none apart: no value
}

// newSpan is the span of n readings from firstMs to lastMs in the range
// [rangeStartMs, rangeEndMs], as Prometheus ≥ 2.51's extrapolatedRate:
// extrapolated to the edges when the first or last reading is closer to
// them than 1.1 average intervals, else by half an interval.
func newSpan(firstMs, lastMs int64, n int, rangeStartMs, rangeEndMs int64) span {
	sampledInterval := float64(lastMs-firstMs) / 1000
	if sampledInterval <= 0 {
		return span{}
	}
	durationToStart := float64(firstMs-rangeStartMs) / 1000
	durationToEnd := float64(rangeEndMs-lastMs) / 1000
	avg := sampledInterval / float64(n-1)
	threshold := avg * 1.1
	if durationToStart >= threshold {
		durationToStart = avg / 2
	}
	if durationToEnd >= threshold {
		durationToEnd = avg / 2
	}
	return span{sampled: sampledInterval, toStart: durationToStart, toEnd: durationToEnd,
		rangeSeconds:     float64(rangeEndMs-rangeStartMs) / 1000,
		unclampedFactor:  (sampledInterval + durationToStart + durationToEnd) / sampledInterval,
		readingsSpanTime: true}
}

// extrapolate is the extrapolated difference result of readings over the
// span, the first of them first; a counter is never extrapolated below
// zero (the zero-point clamp, applied after the half-interval rule).
func (s *span) extrapolate(first, result float64, isCounter, isRate bool) (float64, bool) {
	if !s.readingsSpanTime {
		return 0, false
	}
	factor := s.unclampedFactor
	if isCounter && result > 0 && first >= 0 {
		// A counter starts at zero: do not extrapolate back beyond that.
		if durationToZero := s.sampled * (first / result); durationToZero < s.toStart {
			factor = (s.sampled + durationToZero + s.toEnd) / s.sampled
		}
	}
	if isRate {
		factor /= s.rangeSeconds
	}
	return result * factor, true
}

// Deriv is Prometheus's deriv(): the least-squares slope per second of the
// samples (ts in milliseconds), with Kahan–Neumaier compensated sums. All
// values equal give 0 (NaN if that value is infinite). ok is false with
// fewer than two samples.
func Deriv(ts []int64, vs []float64) (float64, bool) {
	n := len(vs)
	if n < 2 || len(ts) != n {
		return 0, false
	}
	var (
		constY                 = true
		sumX, cX, sumY, cY     float64
		sumXY, cXY, sumX2, cX2 float64
	)
	for i, y := range vs {
		if i > 0 && y != vs[0] {
			constY = false
		}
		x := float64(ts[i]-ts[0]) / 1000
		sumX, cX = kahanSumInc(x, sumX, cX)
		sumY, cY = kahanSumInc(y, sumY, cY)
		sumXY, cXY = kahanSumInc(x*y, sumXY, cXY)
		sumX2, cX2 = kahanSumInc(x*x, sumX2, cX2)
	}
	if constY {
		if math.IsInf(vs[0], 0) {
			return math.NaN(), true
		}
		return 0, true
	}
	sumX += cX
	sumY += cY
	sumXY += cXY
	sumX2 += cX2
	fn := float64(n)
	covXY := sumXY - sumX*sumY/fn
	varX := sumX2 - sumX*sumX/fn
	return covXY / varX, true
}

// kahanSumInc adds inc to sum with Neumaier compensation c, as Prometheus
// does.
func kahanSumInc(inc, sum, c float64) (newSum, newC float64) {
	t := sum + inc
	switch {
	case math.IsInf(t, 0):
		c = 0
	case math.Abs(sum) >= math.Abs(inc):
		c += (sum - t) + inc
	default:
		c += (inc - t) + sum
	}
	return t, c
}
