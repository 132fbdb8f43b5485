package ui

import (
	"math"
	"strings"
)

// sparkRunes are the eight levels of a one-row sparkline. They are glyphs,
// not colours, so a sparkline survives NO_COLOR.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the newest width values as block runes, right aligned so
// that "now" is always the right edge. Unknown values (NaN) are blanks, not
// the lowest bar: a gap says "n/a", a ▁ says "zero". lo and hi bound the
// scale; hi ≤ lo means "scale to the largest value shown".
func sparkline(vals []float64, width int, lo, hi float64) string {
	if width <= 0 {
		return ""
	}
	vals, hi = lastOnScale(vals, width, lo, hi)
	var b strings.Builder
	b.Grow(width * 3)
	b.WriteString(strings.Repeat(" ", width-len(vals)))
	for _, v := range vals {
		b.WriteRune(sparkRune(v, lo, hi))
	}
	return b.String()
}

// lastOnScale is the last width of vals, and the top of their scale: hi,
// or where hi ≤ lo the largest of them (lo at least).
func lastOnScale(vals []float64, width int, lo, hi float64) ([]float64, float64) {
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	if hi <= lo {
		hi = lo
		for _, v := range vals {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && v > hi {
				hi = v
			}
		}
	}
	return vals, hi
}

// sparkRune maps one value onto the eight levels.
func sparkRune(v, lo, hi float64) rune {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ' '
	}
	if hi <= lo {
		return sparkRunes[0]
	}
	f := (v - lo) / (hi - lo)
	i := int(math.Round(f * float64(len(sparkRunes)-1)))
	return sparkRunes[min(max(i, 0), len(sparkRunes)-1)]
}

// sparkRows draws a sparkline rows high, top row first: the same scale
// as sparkline, with eight levels per row, so a tall screen shows the
// shape in finer steps. One row is exactly sparkline.
func sparkRows(vals []float64, width int, lo, hi float64, rows int) []string {
	if rows <= 1 {
		return []string{sparkline(vals, width, lo, hi)}
	}
	if width <= 0 {
		return make([]string, rows)
	}
	vals, hi = lastOnScale(vals, width, lo, hi)
	out := make([]string, rows)
	for k := range out {
		var b strings.Builder
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
// eighth of the bottom row, as in a one-row sparkline; unknown is blank.
func sparkCell(v, lo, hi float64, rows, r int) rune {
	if math.IsNaN(v) || math.IsInf(v, 0) {
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
