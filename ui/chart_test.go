package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/muesli/termenv"

	"github.com/vtop-dev/vtop/analysis"
)

// dottedColumns is, for each column of a drawn chart, whether any of its
// rows holds a braille dot.
func dottedColumns(chart string) []bool {
	var cols []bool
	for _, line := range strings.Split(chart, "\n") {
		for i, r := range []rune(line) {
			for len(cols) <= i {
				cols = append(cols, false)
			}
			if r > 0x2800 && r <= 0x28FF {
				cols[i] = true
			}
		}
	}
	return cols
}

// longestBlankBetween is the longest run of columns without a dot that
// has dotted columns on both sides.
func longestBlankBetween(cols []bool) int {
	longest, run, seen := 0, 0, false
	for _, dotted := range cols {
		switch {
		case dotted:
			if seen {
				longest = max(longest, run)
			}
			seen, run = true, 0
		default:
			run++
		}
	}
	return longest
}

// TestChartGap: a stretch where a figure is unknown is drawn as a gap,
// not as a line joining the known points on either side (nor as 0),
// whichever series is unknown; a chart with no gap has none.
func TestChartGap(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name     string
		unknown  func(i int) bool
		wantGap  bool
		minBlank int
	}{
		{"known throughout", func(int) bool { return false }, false, 0},
		{"unknown in the middle", func(i int) bool { return i >= 20 && i < 100 }, true, 40},
		{"unknown at first", func(i int) bool { return i < 60 }, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pts []analysis.Point
			for i := range 120 {
				v := float32(0.2 + 0.1*math.Sin(float64(i)/7))
				if tt.unknown(i) {
					v = float32(math.NaN())
				}
				pts = append(pts, analysis.Point{Time: start.Add(time.Duration(i) * time.Second), E2EP50: v, E2EP99: 2 * v})
			}
			d := newDetailScreen(themeFor(termenv.Ascii), time.UTC)
			chart := d.timeChart(detailCharts[len(detailCharts)-1], pts, 100)
			blank := longestBlankBetween(dottedColumns(chart))
			if tt.wantGap && blank < tt.minBlank || !tt.wantGap && blank > 1 {
				t.Errorf("longest blank stretch between dots %d columns (gap wanted %v, of at least %d):\n%s", blank, tt.wantGap, tt.minBlank, chart)
			}
		})
	}
}
