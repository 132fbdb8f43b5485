package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// The figures by their definitions, on hand-made samples: a counter's rate
// is Prometheus's rate() over the window, a latency quantile is
// histogram_quantile() of the buckets' increase(), each worked out by hand
// in the table. Every case is analysed twice, the samples marked as a
// source stores them (MarkRising) and unmarked: the marks change what is
// read, never the figure.

// reading is one scrape of a hand-made sample: its offset in seconds from
// t0, and the value of the metric in it (NaN: not on that page).
type reading struct {
	at    float64
	value float64
}

// bothWays analyses the samples marked and unmarked, with a window of
// 30 s ending at t0+30s, and returns the two reports of the one replica.
func bothWays(samples []catalogue.Sample) [2]ReplicaReport {
	cfg := DefaultConfig()
	cfg.Window = 30 * time.Second
	now := t0.Add(30 * time.Second)
	plain := unmarked(samples)
	markRising(samples)
	return [2]ReplicaReport{analyzeOne(samples, now, cfg), analyzeOne(plain, now, cfg)}
}

// sampleAt is a good sample at offset seconds from t0 with nothing on it.
func sampleAt(offset float64) catalogue.Sample {
	return catalogue.Sample{Time: t0.Add(time.Duration(offset * float64(time.Second))), HasVLLM: true, Total: catalogue.NewSeries()}
}

// TestCounterRateByDefinition: preemptions per second is rate() of the
// counter over the window [now-30s, now]: the increase with every drop
// taken as a reset, extrapolated to the window's ends where the readings
// come within 1.1 average intervals of them (else by half an interval),
// never to before the counter's zero, divided by the window's seconds.
func TestCounterRateByDefinition(t *testing.T) {
	nan := math.NaN()
	steady := []reading{{0, 0}, {5, 10}, {10, 20}, {15, 30}, {20, 40}, {25, 50}, {30, 60}}
	tests := []struct {
		name     string
		older    bool // a good sample 20 s before the window, without the counter
		readings []reading
		failed   []float64 // offsets of failed scrapes
		want     float64
	}{
		// 60 over exactly the window's 30 s.
		{"readings across the window", false, steady, nil, 2},
		// 25 - 100 + 120 (the reading before the drop) = 45 over 25 s,
		// extended by the 5 s to the start (under 5.5): 45 × 30/25 ÷ 30.
		{"a reset", true, []reading{{5, 100}, {10, 110}, {15, 120}, {20, 5}, {25, 15}, {30, 25}}, nil, 1.8},
		// 30 over 15 s; the start is 12 s away (≥ 5.5): extended by
		// 2.5 s; the end 3 s away: extended to it. 30 × 20.5/15 ÷ 30.
		{"readings start late", true, []reading{{12, 50}, {17, 60}, {22, 70}, {27, 80}}, nil, 20.5 / 15},
		// 40 over 20 s from 1: the zero point is 20 × 1/40 = 0.5 s
		// before the first reading, nearer than the 2.5 s of half an
		// interval. 40 × 20.5/20 ÷ 30.
		{"not extrapolated beyond zero", true, []reading{{10, 1}, {15, 11}, {20, 21}, {25, 31}, {30, 41}}, nil, 41.0 / 30},
		// A page without the counter is a missing sample, not a zero.
		{"a page without the counter", false, []reading{{0, 0}, {5, 10}, {10, nan}, {15, 30}, {20, 40}, {25, 50}, {30, 60}}, nil, 2},
		{"a failed scrape", false, steady, []float64{12}, 2},
		// A reading before the window is not in it: no reset from 1000.
		{"a reading before the window", false, append([]reading{{-5, 1000}}, steady...), nil, 2},
		// No older good scrape: the window starts at the first one,
		// rate() over the 20 s watched.
		{"the window starts at the first good scrape", false, []reading{{10, 0}, {20, 20}, {30, 40}}, nil, 2},
		{"one reading is no rate", false, []reading{{30, 7}}, nil, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var samples []catalogue.Sample
			if tt.older {
				samples = append(samples, sampleAt(-20))
			}
			for _, r := range tt.readings {
				s := sampleAt(r.at)
				s.Total.Scalars[catalogue.Preemptions] = r.value
				samples = append(samples, s)
			}
			for _, at := range tt.failed {
				s := sampleAt(at)
				s.Err = "connection refused"
				samples = insertByTime(samples, s)
			}
			for i, r := range bothWays(samples) {
				if got := r.PreemptionsPerSecond.Float(); !sameFloat(got, tt.want) {
					t.Errorf("%s samples: preemptions/s = %v, want %v", markedOrNot[i], got, tt.want)
				}
			}
		})
	}
}

// markedOrNot names the two ways bothWays analyses samples.
var markedOrNot = [2]string{"marked", "unmarked"}

// insertByTime inserts s among samples, which are in time order.
func insertByTime(samples []catalogue.Sample, s catalogue.Sample) []catalogue.Sample {
	for i := range samples {
		if samples[i].Time.After(s.Time) {
			return append(samples[:i], append([]catalogue.Sample{s}, samples[i:]...)...)
		}
	}
	return append(samples, s)
}

// TestLatencyQuantilesByDefinition: TTFT's quantiles are
// histogram_quantile() of the buckets' increase over the window: the
// first bucket whose cumulative count reaches q × the observations, and
// linear interpolation inside it (from 0 in the first bucket); in the
// +Inf bucket, the last finite bound. The readings span the window
// exactly, so each increase is a plain difference.
func TestLatencyQuantilesByDefinition(t *testing.T) {
	bounds := []float64{0.1, 0.5, 1, 2.5, inf}
	first := []float64{5, 10, 20, 20, 20}
	tests := []struct {
		name          string
		last          []float64 // the counts at the end; at the start they are first
		p50, p90, p99 float64
		p50Bucket     QuantileBucket
		observations  float64
	}{
		// Increases 0, 20, 40, 40, 40: ranks 20, 36 and 39.6 among 40.
		// p50 ends the (0.1, 0.5] bucket: 0.1 + 0.4 × 20/20; p90 and p99
		// are in (0.5, 1]: 0.5 + 0.5 × 16/20 and 0.5 + 0.5 × 19.6/20.
		{"between bounds", []float64{5, 30, 60, 60, 60}, 0.5, 0.9, 0.99, QuantileBucket{0.1, 0.5}, 40},
		// Increases 10 in the first bucket only: 0 + 0.1 × 5/10 and so on.
		{"the first bucket, from 0", []float64{15, 20, 30, 30, 30}, 0.05, 0.09, 0.099, QuantileBucket{0, 0.1}, 10},
		// Every observation beyond 2.5 s: the last finite bound.
		{"the +Inf bucket", []float64{5, 10, 20, 20, 30}, 2.5, 2.5, 2.5, QuantileBucket{2.5, Num(inf)}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var samples []catalogue.Sample
			for i, counts := range [][]float64{first, first, tt.last} {
				s := sampleAt(float64(15 * i))
				s.Total.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: bounds, Counts: counts, Sum: counts[4], Count: counts[4]}
				samples = append(samples, s)
			}
			for i, r := range bothWays(samples) {
				q := r.TTFT
				got := []float64{q.P50.Float(), q.P90.Float(), q.P99.Float(), q.Observations.Float()}
				want := []float64{tt.p50, tt.p90, tt.p99, tt.observations}
				for j := range got {
					if !sameFloat(got[j], want[j]) {
						t.Errorf("%s samples: p50, p90, p99, observations = %v, want %v", markedOrNot[i], got, want)
						break
					}
				}
				if q.P50Bucket != tt.p50Bucket {
					t.Errorf("%s samples: p50 in %v, want %v", markedOrNot[i], q.P50Bucket, tt.p50Bucket)
				}
			}
		})
	}
}
