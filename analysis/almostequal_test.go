package analysis

import (
	"math"
	"testing"
)

// TestAlmostEqual: almostEqual is Prometheus's almost.Equal: equal values
// and two NaNs are equal; beside a zero or below the smallest normal the
// difference must be under epsilon × the smallest normal; otherwise the
// difference over the sum of magnitudes (at most the largest float) must
// be under epsilon.
func TestAlmostEqual(t *testing.T) {
	const eps = 1e-12
	nan, largest := math.NaN(), math.MaxFloat64
	tests := []struct {
		name string
		a, b float64
		want bool
	}{
		{"two NaNs", nan, nan, true},
		{"NaN and a number", nan, 1, false},
		{"equal", 2.5, 2.5, true},
		{"+0 and -0", 0, math.Copysign(0, -1), true},
		{"+Inf and +Inf", inf, inf, true},
		{"+Inf and -Inf", inf, math.Inf(-1), false},
		{"+Inf and a number", inf, 1, false},
		{"within the relative tolerance", 1, 1 + 1e-13, true},
		{"beyond the relative tolerance", 1, 1 + 1e-11, false},
		{"zero and a small normal", 0, 1e-300, false},
		{"zero and the smallest subnormal", 0, 5e-324, true},
		{"two subnormals", 5e-324, 1e-323, true},
		{"the largest float and its neighbour", largest, math.Nextafter(largest, 0), true},
		{"the largest float and its half", largest, largest / 2, false},
	}
	for _, tt := range tests {
		for _, ab := range [][2]float64{{tt.a, tt.b}, {tt.b, tt.a}} {
			if got := almostEqual(ab[0], ab[1], eps); got != tt.want {
				t.Errorf("%s: almostEqual(%v, %v) = %v, want %v", tt.name, ab[0], ab[1], got, tt.want)
			}
		}
	}
}
