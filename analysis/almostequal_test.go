package analysis

import (
	"math"
	"testing"
)

// countEdges are bucket counts and ranks at the edges: unknown, infinite,
// signed zeros, the smallest and largest floats.
var countEdges = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, 2, 2.5, 3,
	minNormal, minNormal / 2, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64 / 2, 1e-12, 1 + 1e-12}

// TestAlmostEqualMinAsBefore: almostEqual's built-in min gives what
// math.Min gave, bit for bit, for every sum it may meet: the edges, their
// neighbours and their sums.
func TestAlmostEqualMinAsBefore(t *testing.T) {
	values := append([]float64(nil), countEdges...)
	for _, x := range countEdges {
		values = append(values, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)), -x, x*(1+1e-12))
	}
	for _, a := range values {
		for _, b := range values {
			absSum := math.Abs(a) + math.Abs(b)
			got, want := min(absSum, math.MaxFloat64), math.Min(absSum, math.MaxFloat64)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("min(%v, MaxFloat64) = %v, math.Min %v", absSum, got, want)
			}
		}
	}
}
