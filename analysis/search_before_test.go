package analysis

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// rankIndexBefore is rankIndex as it was, through sort.Search.
func rankIndexBefore(rank float64, b []Bucket) int {
	return sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
}

// almostEqualBefore is almostEqual as it was, through math.Min.
func almostEqualBefore(a, b, epsilon float64) bool {
	if math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if a == b {
		return true
	}
	absSum := math.Abs(a) + math.Abs(b)
	diff := math.Abs(a - b)
	if a == 0 || b == 0 || absSum < minNormal {
		return diff < epsilon*minNormal
	}
	return diff/math.Min(absSum, math.MaxFloat64) < epsilon
}

// countEdges are bucket counts and ranks at the edges: unknown, infinite,
// signed zeros, the smallest and largest floats.
var countEdges = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, 2, 2.5, 3,
	minNormal, minNormal / 2, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64 / 2, 1e-12, 1 + 1e-12}

// TestRankIndexAsBefore: the search finds the bucket sort.Search found, in
// order or not, with NaN counts and ranks.
func TestRankIndexAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pick := func() float64 {
		if rng.IntN(2) == 0 {
			return countEdges[rng.IntN(len(countEdges))]
		}
		return float64(rng.IntN(10))
	}
	for range 100000 {
		b := make([]Bucket, rng.IntN(12))
		for i := range b {
			b[i].Count = pick()
		}
		if rng.IntN(2) == 0 {
			// In order, as most histograms are.
			sort.Slice(b, func(i, j int) bool { return b[i].Count < b[j].Count })
		}
		rank := pick()
		if got, want := rankIndex(rank, b), rankIndexBefore(rank, b); got != want {
			t.Fatalf("rank %v in %v: %d, before %d", rank, b, got, want)
		}
	}
}

// TestAlmostEqualAsBefore: the comparison answers as it did with
// math.Min, over every pair of the edges and random neighbours.
func TestAlmostEqualAsBefore(t *testing.T) {
	values := append([]float64(nil), countEdges...)
	for _, x := range countEdges {
		values = append(values, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)), -x, x*(1+1e-12))
	}
	for _, eps := range []float64{1e-12, 1e-6, 0, math.Inf(1), math.NaN()} {
		for _, a := range values {
			for _, b := range values {
				if got, want := almostEqual(a, b, eps), almostEqualBefore(a, b, eps); got != want {
					t.Fatalf("almostEqual(%v, %v, %v) = %v, before %v", a, b, eps, got, want)
				}
			}
		}
	}
}
