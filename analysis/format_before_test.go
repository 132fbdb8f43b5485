package analysis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The words as they were written before they were appended into one
// buffer: through strconv's strings, a strings.Builder and trimming of
// strings. The reports must read byte for byte as they did.

func countBefore(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(math.Abs(math.Round(x)), 'f', 0, 64)
	var b strings.Builder
	if math.Round(x) < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func amountBefore(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Abs(x) >= 100:
		return countBefore(x)
	case math.Abs(x) >= 10:
		return trimZerosBefore(strconv.FormatFloat(x, 'f', 1, 64))
	}
	return trimZerosBefore(strconv.FormatFloat(x, 'f', 2, 64))
}

func trimZerosBefore(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func percentBefore(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	if tenths := math.Round(x*1000) / 10; math.Abs(tenths) < 10 {
		return trimZerosBefore(strconv.FormatFloat(tenths, 'f', 1, 64)) + "%"
	}
	return strconv.FormatFloat(math.Round(x*100)+0, 'f', 0, 64) + "%"
}

func secondsBefore(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Round(math.Abs(x)*1000) < 1000:
		return amountBefore(x*1000) + "ms"
	}
	return amountBefore(x) + "s"
}

// wordEdges are values where a word changes its form: unknowns, signed
// zeros, the rounding of each precision and unit, the thousands, the
// largest integers a float64 holds exactly, and the extremes.
var wordEdges = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
	0.004, 0.005, 0.0049999, -0.004, -0.005, 0.0004, -0.0004, 0.00049, 0.0005,
	0.5, -0.5, 1.5, 2.5, 0.49999999999999994, 0.9994, 0.9995, 0.9996, 0.99949, 0.99951,
	0.0995, 0.0996, 0.09949, 0.09951, 0.0999, -0.0996, 0.1, 9.995, 9.994, 9.996,
	99.94, 99.95, 99.96, 99.99, 100, 999.4, 999.5, 999.95, 1000, 1000.5, 9999.5,
	-999.5, -1000, -1234567.5, 1e6, 1e15, 1e15 + 0.5,
	1 << 53, 1<<53 - 1, 1<<53 + 2, -(1 << 53), 1 << 63, 1 << 64, 1e19, 1e20, 1e22, 1e23, 1e100, 1e300,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1e-300, 1e-10,
}

// TestWordsAsBefore: count, amount, percent and seconds write every edge,
// and random values of every magnitude, as they did before.
func TestWordsAsBefore(t *testing.T) {
	words := []struct {
		name        string
		now, before func(float64) string
	}{
		{"count", count, countBefore},
		{"amount", amount, amountBefore},
		{"percent", percent, percentBefore},
		{"seconds", seconds, secondsBefore},
	}
	values := append([]float64(nil), wordEdges...)
	for _, x := range wordEdges {
		values = append(values, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)), x/1000, x/100, -x)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		values = append(values, math.Pow(10, rng.Float64()*40-20)*(rng.Float64()-0.3))
		values = append(values, float64(rng.IntN(2_000_000)-1_000_000)/1000)
	}
	for _, w := range words {
		for _, x := range values {
			if got, want := w.now(x), w.before(x); got != want {
				t.Errorf("%s(%v) = %q, before %q", w.name, x, got, want)
			}
		}
	}
}
