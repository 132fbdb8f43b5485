package analysis

import (
	"math"
	"slices"
	"testing"
)

// bk builds buckets from le:count pairs.
func bk(pairs ...float64) []Bucket {
	b := make([]Bucket, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		b = append(b, Bucket{Upper: pairs[i], Count: pairs[i+1]})
	}
	return b
}

// quantile is histogram_quantile() the way the window computes it: the
// buckets prepared (on a copy), then the rank found.
func quantile(q float64, buckets []Bucket) float64 {
	return float64(HistogramQuantile(q, slices.Clone(buckets)))
}

// TestQuantile holds every edge case of histogram_quantile with the
// Prometheus 3.x result. The cases about parsing le labels ("abc", "Inf")
// belong to the page parser.
func TestQuantile(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	normal := bk(0.1, 2, 1, 8, inf, 10)
	tests := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		{"normal interpolation", 0.5, normal, 0.55},
		{"lowest bucket interpolates from 0", 0.1, normal, 0.05},
		{"rank in +Inf bucket gives the highest finite bound", 0.95, normal, 1},
		{"q=1 with observations only in +Inf", 1, normal, 1},
		{"q=0 with the first bucket empty is 0/0", 0, bk(0.1, 0, 1, 5, inf, 5), nan},
		{"q=0 with the first bucket non-empty", 0, bk(0.1, 3, 1, 5, inf, 5), 0},
		{"lowest bound below 0", 0.25, bk(-1, 5, 1, 10, inf, 10), -1},
		{"lowest bound 0", 0.25, bk(0, 5, 1, 10, inf, 10), 0},
		{"negative buckets", 0.75, bk(-2, 2, -1, 5, 1, 10, inf, 10), 0},
		{"no +Inf bucket", 0.5, bk(0.1, 2, 1, 8), nan},
		{"only +Inf", 0.5, bk(inf, 10), nan},
		{"zero observations", 0.5, bk(0.1, 0, 1, 0, inf, 0), nan},
		{"q below 0", -0.5, normal, math.Inf(-1)},
		{"q above 1", 1.5, normal, inf},
		{"q NaN", nan, normal, nan},
		{"q below 0 is checked before +Inf", -1, bk(0.1, 2), math.Inf(-1)},
		{"non-monotonic counts are forced up", 0.5, bk(0.1, 6, 1, 4, 2, 9, inf, 12), 0.1},
		{"+Inf lower than a bucket", 0.9, bk(0.1, 2, 1, 12, inf, 10), 0.892},
		{"duplicate bounds are summed", 0.5, bk(0.1, 2, 1, 3, 1, 4, inf, 10), 0.64},
		{"NaN count in a middle bucket", 0.5, bk(0.1, 2, 1, nan, 2, 6, inf, 10), nan},
		{"NaN count in +Inf", 0.5, bk(0.1, 2, 1, 6, inf, nan), 1},
		{"NaN, then a lower count (3.x: NaN resets the running max)", 0.5, bk(0.1, 8, 1, nan, 2, 3, inf, 10), 2},
		{"tiny upward delta is ignored", 1, bk(0.1, 1, 1, 1.0000000000001, inf, 1.0000000000001), 0.1},
		{"unsorted input is sorted", 0.5, bk(inf, 10, 1, 8, 0.1, 2), 0.55},
		{"empty", 0.5, nil, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quantile(tt.q, tt.buckets)
			if !sameFloat(got, tt.want) {
				t.Errorf("quantile(%v, %v) = %v, want %v", tt.q, tt.buckets, got, tt.want)
			}
		})
	}
}

func TestShareWithin(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name    string
		limit   float64
		buckets []Bucket
		want    float64
	}{
		{"on a bound", 1, bk(0.1, 2, 1, 8, inf, 10), 0.8},
		{"inside a bucket counts only whole buckets", 0.5, bk(0.1, 2, 1, 8, inf, 10), 0.2},
		{"below every bound", 0.01, bk(0.1, 2, 1, 8, inf, 10), 0},
		{"no observations", 1, bk(0.1, 0, 1, 0, inf, 0), math.NaN()},
		{"no +Inf", 1, nil, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shareWithin(tt.limit, prepareBuckets(slices.Clone(tt.buckets))); !sameFloat(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// sameFloat compares with a tolerance and treats NaN as equal to NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// TestPrepareBuckets: buckets are prepared as histogram_quantile prepares
// them: sorted by bound, equal bounds merged by summing their counts (-0
// and +0 are equal), counts forced not to fall, and none without a +Inf
// bucket.
func TestPrepareBuckets(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name          string
		buckets, want []Bucket
	}{
		{"in order", []Bucket{{0.1, 1}, {1, 3}, {inf, 4}}, []Bucket{{0.1, 1}, {1, 3}, {inf, 4}}},
		{"a bound twice", []Bucket{{0.5, 1}, {0.5, 2}, {1, 3}, {inf, 4}}, []Bucket{{0.5, 3}, {1, 3}, {inf, 4}}},
		{"out of order", []Bucket{{1, 3}, {0.1, 1}, {inf, 4}}, []Bucket{{0.1, 1}, {1, 3}, {inf, 4}}},
		{"-0 beside +0", []Bucket{{negZero, 1}, {0, 2}, {inf, 4}}, []Bucket{{negZero, 3}, {inf, 4}}},
		{"no +Inf", []Bucket{{0.1, 1}, {1, 3}}, nil},
		{"counts falling", []Bucket{{0.1, 5}, {1, 3}, {inf, 4}}, []Bucket{{0.1, 5}, {1, 5}, {inf, 5}}},
		{"one bucket", []Bucket{{inf, 4}}, []Bucket{{inf, 4}}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := bucketBits(prepareBuckets(slices.Clone(tt.buckets))), bucketBits(tt.want); got != want {
				t.Errorf("prepared %s, want %s", got, want)
			}
		})
	}
}
