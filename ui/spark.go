package ui

import (
	"math"
	"strings"
)

// sparkRunes are the eight levels of a one-row sparkline. They are glyphs,
// not colours, so a sparkline survives NO_COLOR.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline is a sparkline one row high.
func sparkline(vals []float64, width int, lo, hi float64) string {
	return sparkRows(vals, width, lo, hi, 1)[0]
}

// sparkRows draws the newest width values as block runes rows high, top row
// first, eight levels per row, right aligned so that "now" is always the
// right edge. Unknown values (NaN) are blanks, not the lowest bar: a gap
// says "n/a", a ▁ says "zero". lo and hi bound the scale; hi ≤ lo means
// "scale to the largest value shown".
func sparkRows(vals []float64, width int, lo, hi float64, rows int) []string {
	rows = max(rows, 1)
	if width <= 0 {
		return make([]string, rows)
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	if hi <= lo {
		hi = lo
		for _, v := range vals {
			if finite(v) && v > hi {
				hi = v
			}
		}
	}
	out := make([]string, rows)
	for k := range out {
		var b strings.Builder
		b.Grow(width * 3)
		b.WriteString(strings.Repeat(" ", width-len(vals)))
		for _, v := range vals {
			b.WriteRune(sparkCell(v, lo, hi, rows, rows-1-k))
		}
		out[k] = b.String()
	}
	return out
}

// sparkCell is row r (0 at the bottom) of a bar rows high: full below the
// value, a partial block at it, blank above. The lowest value is one
// eighth of the bottom row; unknown is blank.
func sparkCell(v, lo, hi float64, rows, r int) rune {
	if !finite(v) {
		return ' '
	}
	levels := rows * len(sparkRunes)
	k := 1
	if hi > lo {
		k = 1 + int(math.Round(min(max((v-lo)/(hi-lo), 0), 1)*float64(levels-1)))
	}
	fill := k - r*len(sparkRunes)
	switch {
	case fill <= 0:
		return ' '
	case fill >= len(sparkRunes):
		return sparkRunes[len(sparkRunes)-1]
	}
	return sparkRunes[fill-1]
}
