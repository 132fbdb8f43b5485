package analysis

import (
	"math"
	"math/bits"
)

// A report of 25 eight-engine replicas writes some ten thousand figures
// that are neither whole nor zero every second, and strconv's formatting
// of their jsonDigits digits was most of the cost of writing it. For the
// magnitudes figures have, those digits come exactly from integers:
// a float is m·2^e, so f·10^q = m·5^q·2^(e+q), a product of two 64-bit
// integers shifted right, whose bits below the shift decide the rounding.

// maxPow5 is the largest q for which 5^q fits in 64 bits: figures from
// 1e-16 up to 10^jsonDigits are written by roundedDigits, the rest by
// strconv.
const maxPow5 = 27

// pow5 holds 5^q for q = 0..maxPow5.
var pow5 = func() (p [maxPow5 + 1]uint64) {
	p[0] = 1
	for q := 1; q <= maxPow5; q++ {
		p[q] = p[q-1] * 5
	}
	return p
}()

// Bounds of the integer of jsonDigits digits.
const (
	digitsLow  = 100_000_000_000   // 10^(jsonDigits-1)
	digitsHigh = 1_000_000_000_000 // 10^jsonDigits
)

// roundedDigits returns f (positive, normal) rounded to jsonDigits
// significant digits as the integer d of those digits, 10^(jsonDigits-1)
// ≤ d < 10^jsonDigits, and the decimal exponent of its first digit:
// f ≈ d·10^(exp-jsonDigits+1). The rounding is strconv's: to nearest, a
// tie to the even digit. ok is false for a float outside the magnitudes
// it takes, which the caller formats with strconv.
func roundedDigits(f float64) (d uint64, exp int, ok bool) {
	b := math.Float64bits(f)
	biased := int(b >> 52 & 0x7ff)
	if biased == 0 || biased == 0x7ff || b>>63 != 0 {
		return 0, 0, false
	}
	m := b&(1<<52-1) | 1<<52
	e := biased - 1075 // f = m·2^e, 2^52 ≤ m < 2^53
	// log10(2) ≈ 78913/2^18: a floor of log10 f that is low by at most
	// one, since f ≥ 2^(e+52); the loop corrects it.
	// At the edges of the magnitudes taken the estimate is clamped into
	// them, and the loop leaves them if f is outside.
	exp = min(max((e+52)*78913>>18, jsonDigits-1-maxPow5), jsonDigits-1)
	for range 2 {
		q := jsonDigits - 1 - exp
		if q < 0 || q > maxPow5 {
			return 0, 0, false
		}
		d, rest := scaledFloor(m, e, q)
		switch {
		case rest == noRest:
			return 0, 0, false
		case d < digitsLow:
			exp--
			continue
		case d >= digitsHigh:
			exp++
			continue
		}
		if rest == aboveHalf || rest == exactHalf && d&1 == 1 {
			d++
		}
		if d == digitsHigh {
			d, exp = digitsLow, exp+1
		}
		return d, exp, true
	}
	return 0, 0, false
}

// What scaledFloor left below its integer.
type remainder uint8

const (
	noRest    remainder = iota // the product did not shift right: not taken
	belowHalf                  // less than a half, zero included
	exactHalf
	aboveHalf
)

// scaledFloor returns the integer part of m·2^e·10^q, for 0 ≤ q ≤
// maxPow5, and whether what it dropped is below, at or above a half. An
// integer part of 64 bits or more is returned as math.MaxUint64; a product
// that is whole before any shift (never for a figure below 10^jsonDigits)
// as noRest.
func scaledFloor(m uint64, e, q int) (uint64, remainder) {
	hi, lo := bits.Mul64(m, pow5[q])
	s := -(e + q) // m·5^q is shifted right by s
	if s <= 0 || s >= 128 {
		return 0, noRest
	}
	var whole uint64
	var half, below bool // the bit of a half, and any bit under it
	switch {
	case s < 64:
		if hi>>s != 0 {
			return math.MaxUint64, belowHalf
		}
		whole = lo>>s | hi<<(64-s)
		half = lo>>(s-1)&1 == 1
		below = lo&(1<<(s-1)-1) != 0
	case s == 64:
		whole = hi
		half = lo>>63 == 1
		below = lo&(1<<63-1) != 0
	default:
		t := s - 64
		whole = hi >> t
		half = hi>>(t-1)&1 == 1
		below = hi&(1<<(t-1)-1) != 0 || lo != 0
	}
	switch {
	case !half:
		return whole, belowHalf
	case below:
		return whole, aboveHalf
	}
	return whole, exactHalf
}
