package analysis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// strconvDigits is what figureDigits falls back on: strconv's jsonDigits
// digits of f and their exponent.
func strconvDigits(f float64) (uint64, int) {
	e := strconv.FormatFloat(f, 'e', jsonDigits-1, 64)
	d, err := strconv.ParseUint(e[:1]+e[2:jsonDigits+1], 10, 64)
	if err != nil {
		panic(err)
	}
	exp, err := strconv.Atoi(e[jsonDigits+2:])
	if err != nil {
		panic(err)
	}
	return d, exp
}

func TestDigitBounds(t *testing.T) {
	if want := uint64(math.Pow10(jsonDigits - 1)); digitsLow != want {
		t.Errorf("digitsLow = %d, want 10^(jsonDigits-1) = %d", uint64(digitsLow), want)
	}
	if want := uint64(math.Pow10(jsonDigits)); digitsHigh != want {
		t.Errorf("digitsHigh = %d, want 10^jsonDigits = %d", uint64(digitsHigh), want)
	}
}

// TestRoundedDigits: where roundedDigits takes a float, its digits are
// strconv's; it takes every float from 10^-16 up to 10^jsonDigits, and
// leaves the rest to strconv.
func TestRoundedDigits(t *testing.T) {
	tests := []struct {
		name  string
		f     float64
		taken bool
	}{
		{"one", 1, true},
		{"a third", 1.0 / 3, true},
		{"a tie rounds to even, down", 1.000244140625, true}, // 1 + 2^-12: 13 digits ending in 5
		{"a tie rounds to even, up", 1.000732421875, true},   // 1 + 3·2^-12
		{"a tie in the small", 2.44140625e-4 + 2.44140625e-4*(1<<40), true},
		{"rounds into a new exponent", 999999.9999995, true},
		{"just below the carry", 999999.9999994, true},
		{"nines below one", 0.99999999999951, true},
		{"a power of ten", 1e-3, true},
		{"next to a power of ten", math.Nextafter(1e-3, 0), true},
		{"1e-16, a float just below 10^-16", 1e-16, false},
		{"just above 10^-16", 1.0000000001e-16, true},
		{"below the least", 9.9e-17, false},
		{"the largest taken", math.Nextafter(1e12, 0), true},
		{"10^jsonDigits", 1e12, false},
		{"a large integer", 3.456e6, true},
		{"an integer of 2^53", 1 << 53, false},
		{"tiny", 1e-300, false},
		{"subnormal", 5e-324, false},
		{"negative", -1.5, false},
		{"infinite", math.Inf(1), false},
		{"NaN", math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, exp, ok := roundedDigits(tt.f)
			if ok != tt.taken {
				t.Fatalf("roundedDigits(%v) taken = %v, want %v", tt.f, ok, tt.taken)
			}
			if !ok {
				return
			}
			wantD, wantExp := strconvDigits(tt.f)
			if d != wantD || exp != wantExp {
				t.Errorf("roundedDigits(%v) = %d e%d, strconv %d e%d", tt.f, d, exp, wantD, wantExp)
			}
		})
	}
}

// TestRoundedDigitsRandom: the digits of random floats of every magnitude
// taken, of short decimals and of their neighbours, are strconv's.
func TestRoundedDigitsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(f float64) {
		d, exp, ok := roundedDigits(f)
		if !ok {
			if f > 1.0000000001e-16 && f < 1e12 {
				t.Fatalf("roundedDigits(%v) not taken", f)
			}
			return
		}
		if wantD, wantExp := strconvDigits(f); d != wantD || exp != wantExp {
			t.Fatalf("roundedDigits(%v) = %d e%d, strconv %d e%d", f, d, exp, wantD, wantExp)
		}
	}
	for range 300_000 {
		// Uniform in the exponent over the magnitudes taken, and beyond.
		check(math.Pow(10, rng.Float64()*30-17))
		// Short decimals, the usual figures, with their neighbours; and
		// the ties of 13 digits that binary floats can hold.
		x := float64(rng.IntN(2_000_000)) * math.Pow10(rng.IntN(30)-18)
		check(x)
		check(math.Nextafter(x, 0))
		check(math.Nextafter(x, math.Inf(1)))
		check(float64(rng.Int64N(1<<40)) / (1 << 20))
	}
}

// BenchmarkNumJSON writes a figure of the usual kind: a rate that is
// neither whole nor zero.
func BenchmarkNumJSON(b *testing.B) {
	figures := []Num{6.99825043739, 0.00377791770066, 3001.99950012, 0.0335294117647, 8847.82179455, 3.456e6}
	var buf []byte
	for i := range b.N {
		buf = figures[i%len(figures)].appendJSON(buf[:0])
	}
}
