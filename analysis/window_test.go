package analysis

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestRisingIncreasesMatchWalk holds the increases of a histogram that
// rose throughout its window, read off its first and last readings with
// one shared span, to those of the walk over every reading, bit for bit:
// in the corners random windows seldom reach (a count of -0, +Inf counts,
// the zero-point clamp, a window whose readings span no time).
func TestRisingIncreasesMatchWalk(t *testing.T) {
	negZero := math.Copysign(0, -1)
	bounds := []float64{0.1, 1, inf}
	tests := []struct {
		name   string
		offset []time.Duration // of each reading from the first
		counts [][]float64     // each reading's counts
		length time.Duration
	}{
		{"plain rise", []time.Duration{0, time.Second, 2 * time.Second}, [][]float64{{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}, 10 * time.Second},
		{"from zero, clamped", []time.Duration{0, time.Second}, [][]float64{{0, 0, 1}, {5, 5, 9}}, 30 * time.Second},
		{"no change", []time.Duration{0, time.Second}, [][]float64{{4, 4, 4}, {4, 4, 4}}, 5 * time.Second},
		{"-0 after +0", []time.Duration{0, time.Second}, [][]float64{{0, 0, 0}, {negZero, negZero, 1}}, 5 * time.Second},
		{"+Inf counts", []time.Duration{0, time.Second}, [][]float64{{1, inf, inf}, {2, inf, inf}}, 5 * time.Second},
		{"edges exactly on the window", []time.Duration{0, 2 * time.Second}, [][]float64{{1, 1, 1}, {3, 5, 7}}, 2 * time.Second},
		{"readings at one time", []time.Duration{0, 0}, [][]float64{{1, 1, 1}, {2, 2, 2}}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := make([]catalogue.Sample, len(tt.counts))
			for i := range samples {
				samples[i].Time = t0.Add(tt.offset[i])
				samples[i].Total = catalogue.NewSeries()
				samples[i].Total.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: bounds, Counts: tt.counts[i], Sum: 1, Count: 1}
			}
			now := samples[len(samples)-1].Time
			w := newWindow(samples, now, tt.length)
			series := make([]*catalogue.Series, len(w.samples))
			for i, s := range w.samples {
				series[i] = &s.Total
			}
			w.buckets = w.buckets[:0]
			w.risingIncreases(series, catalogue.TTFT, bounds)
			got := bucketBits(w.buckets)
			w.buckets = w.buckets[:0]
			w.walkedIncreases(series, catalogue.TTFT, bounds)
			if want := bucketBits(w.buckets); got != want {
				t.Errorf("rising increases %s, the walk's %s", got, want)
			}
		})
	}
}

// bucketBits spells buckets with the bits of their counts, so that -0 and
// +0, or two NaNs, are told apart as a bit-for-bit comparison must.
func bucketBits(b []Bucket) string {
	s := ""
	for _, x := range b {
		s += fmt.Sprintf("%v:%#x ", x.Upper, math.Float64bits(x.Count))
	}
	return s
}

// TestScalarGauge: a gauge's summary over the window is its first and
// last readings, their least and greatest as math.Min and math.Max give
// them (-0 below +0, the infinities), their mean and their number, the
// gaps skipped; all NaN when it has no reading.
func TestScalarGauge(t *testing.T) {
	negZero, nan, ninf := math.Copysign(0, -1), math.NaN(), math.Inf(-1)
	none := gaugeStats{First: nan, Last: nan, Min: nan, Max: nan, Mean: nan}
	tests := []struct {
		name     string
		readings []float64
		want     gaugeStats
	}{
		{"none", nil, none},
		{"one", []float64{3}, gaugeStats{3, 3, 3, 3, 3, 1}},
		{"+0 then -0", []float64{0, negZero}, gaugeStats{0, negZero, negZero, 0, 0, 2}},
		{"-0 then +0", []float64{negZero, 0}, gaugeStats{negZero, 0, negZero, 0, 0, 2}},
		{"-0 only", []float64{negZero, negZero}, gaugeStats{negZero, negZero, negZero, negZero, 0, 2}},
		{"infinities", []float64{1, inf, ninf, 2}, gaugeStats{1, 2, ninf, inf, nan, 4}},
		{"ordinary", []float64{4, 1.5, 9, 2}, gaugeStats{4, 2, 1.5, 9, 4.125, 4}},
		{"gaps", []float64{nan, 3, nan, 1, nan}, gaugeStats{3, 1, 1, 3, 2, 2}},
		{"only gaps", []float64{nan, nan}, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := make([]catalogue.Sample, len(tt.readings)+1) // the first without the gauge
			series := make([]*catalogue.Series, len(samples))
			for i := range samples {
				samples[i].Time = t0.Add(time.Duration(i) * time.Second)
				samples[i].Total = catalogue.NewSeries()
				if i > 0 {
					samples[i].Total.Scalars[catalogue.Running] = tt.readings[i-1]
				}
				series[i] = &samples[i].Total
			}
			w := newWindow(samples, samples[len(samples)-1].Time, time.Minute)
			if got, want := gaugeBits(w.scalarGauge(series, catalogue.Running)), gaugeBits(tt.want); got != want {
				t.Errorf("summary %s, want %s", got, want)
			}
		})
	}
}

// gaugeBits spells a gauge summary with the bits of its figures, so that
// -0 and +0 are told apart; every NaN is spelled NaN.
func gaugeBits(g gaugeStats) string {
	s := ""
	for _, x := range []float64{g.First, g.Last, g.Min, g.Max, g.Mean} {
		if math.IsNaN(x) {
			s += "NaN "
		} else {
			s += fmt.Sprintf("%#x ", math.Float64bits(x))
		}
	}
	return s + fmt.Sprint(g.N)
}

// TestGaugeDerivMatchesLeastSquares holds the slope of a gauge read off
// its summary to deriv()'s least squares, bit for bit, for gauges that
// never moved and for some that did.
func TestGaugeDerivMatchesLeastSquares(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	tests := []struct {
		name     string
		readings []float64 // NaN: not on that page
	}{
		{"empty queue", []float64{0, 0, 0}},
		{"-0 and +0", []float64{negZero, 0, negZero}},
		{"one reading", []float64{nan, 7, nan}},
		{"none", []float64{nan, nan}},
		{"still, with gaps", []float64{5, nan, 5, 5}},
		{"stuck at +Inf", []float64{inf, inf}},
		{"stuck at -Inf", []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}},
		{"moving", []float64{1, 3, 2, 8}},
		{"to +Inf", []float64{1, inf}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := make([]catalogue.Sample, len(tt.readings))
			for i, v := range tt.readings {
				samples[i].Time = t0.Add(time.Duration(i) * 1500 * time.Millisecond)
				samples[i].Total = catalogue.NewSeries()
				samples[i].Total.Scalars[catalogue.Waiting] = v
			}
			w := newWindow(samples, samples[len(samples)-1].Time, time.Minute)
			series := make([]*catalogue.Series, len(w.samples))
			for i, s := range w.samples {
				series[i] = &s.Total
			}
			g := w.scalarGauge(series, catalogue.Waiting)
			var ts []int64
			var vs []float64
			for i, s := range series {
				if v := s.Scalars[catalogue.Waiting]; !math.IsNaN(v) {
					ts, vs = append(ts, w.ms[i]), append(vs, v)
				}
			}
			want, ok := Deriv(ts, vs)
			if !ok {
				want = math.NaN()
			}
			got := w.gaugeDeriv(series, catalogue.Waiting, g)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("slope %v, least squares give %v", got, want)
			}
		})
	}
}

// newWindow is the window of samples (oldest first) with
// now-length <= Time <= now, as an evaluation sets it.
func newWindow(samples []catalogue.Sample, now time.Time, length time.Duration) *window {
	w := &window{}
	w.reset(samples, now, length)
	return w
}

// TestQueueTrend: a queue's slope is a trend only where the newest
// readings show the queue moving its way; a queue they hold flat after
// one jump or one dip neither grows nor shrinks.
func TestQueueTrend(t *testing.T) {
	tests := []struct {
		name        string
		growth      Num
		first, last float64
		want        Num
	}{
		{"growing, shown growing", 0.3, 4, 6, 0.3},
		{"shrinking, shown shrinking", -0.5, 6, 4, -0.5},
		{"one jump from 0 to 6, then flat", 0.3, 6, 6, 0},
		{"one dip, then flat", -0.01, 6, 6, 0},
		{"the slope up, the newest readings down", 0.2, 7, 6, 0},
		{"the slope down, the newest readings up", -0.2, 5, 6, 0},
		{"no slope", NA, 4, 6, NA},
		{"no readings", 0.3, math.NaN(), math.NaN(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queueTrend(tt.growth, gaugeStats{First: tt.first, Last: tt.last, N: 3})
			if got.Known() != tt.want.Known() || got.Known() && got != tt.want {
				t.Errorf("queueTrend(%v, %v → %v) = %v, want %v", tt.growth, tt.first, tt.last, got, tt.want)
			}
		})
	}
}
