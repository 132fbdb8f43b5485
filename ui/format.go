package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// na is how an unknown figure is drawn: never as 0. Percentages are
// analysis.Num.Percent: the reasons' own words, so a pane agrees with itself.
const na = "n/a"

// fmtCount draws a gauge that counts things (requests running, waiting).
func fmtCount(n analysis.Num) string {
	if !n.Known() {
		return na
	}
	v := n.Float()
	if math.Abs(v) >= 10000 {
		return siSuffix(v)
	}
	return fmt.Sprintf("%.0f", v)
}

// fmtRate draws a per-second rate with two or three significant digits.
func fmtRate(n analysis.Num) string {
	if !n.Known() {
		return na
	}
	v := n.Float()
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	// The bounds are where the rounding carries into the next digit, so
	// that 0.996 reads 1.0, not 1.00, and 999.7 reads 1.0k, not 1000.
	case a < 0.995:
		return fmt.Sprintf("%.2f", v)
	case a < 99.95:
		return fmt.Sprintf("%.1f", v)
	case a < 999.5:
		return fmt.Sprintf("%.0f", v)
	default:
		return siSuffix(v)
	}
}

// siSuffix writes large numbers as 1.2k, 34k, 5.6M.
func siSuffix(v float64) string {
	a := math.Abs(v)
	unit, div := "k", 1e3
	if a >= 999.5e3 { // what would round to 1000k
		unit, div = "M", 1e6
	}
	if a/div < 9.95 { // what would round to 10.0
		return fmt.Sprintf("%.1f%s", v/div, unit)
	}
	return fmt.Sprintf("%.0f%s", v/div, unit)
}

// fmtSeconds draws a latency given in seconds with a unit that keeps it short.
func fmtSeconds(n analysis.Num) string {
	if !n.Known() {
		return na
	}
	v := n.Float()
	switch a := math.Abs(v); {
	case a == 0:
		return "0s"
	case a < 0.001:
		return fmt.Sprintf("%.0fµs", v*1e6)
	case a < 1:
		return fmt.Sprintf("%.0fms", v*1e3)
	case a < 100:
		return fmt.Sprintf("%.1fs", v)
	default:
		return fmt.Sprintf("%.0fs", v)
	}
}

// quantile picks one quantile of a histogram and the bucket it fell in.
type quantile func(analysis.Quantiles) (analysis.Num, analysis.QuantileBucket)

// The quantiles drawn with their buckets.
var (
	p50 quantile = func(q analysis.Quantiles) (analysis.Num, analysis.QuantileBucket) { return q.P50, q.P50Bucket }
	p90 quantile = func(q analysis.Quantiles) (analysis.Num, analysis.QuantileBucket) { return q.P90, q.P90Bucket }
	p99 quantile = func(q analysis.Quantiles) (analysis.Num, analysis.QuantileBucket) { return q.P99, q.P99Bucket }
)

// fmtQuantile draws a latency quantile as the buckets allow: "<300ms" in
// the first bucket, ">80s" beyond the last finite bound, "160s–640s" in a
// bucket too wide to place it, else the value (also without a bucket).
func fmtQuantile(q analysis.Quantiles, which quantile) string {
	v, b := which(q)
	if !(b.Upper.Float() > b.Lower.Float()) {
		return fmtSeconds(v)
	}
	prefix, x, upTo := b.Shown(v)
	// A bound is a round number of the bucket list: ">80s", not ">80.0s".
	bound := func(n analysis.Num) string { return strings.Replace(fmtSeconds(n), ".0s", "s", 1) }
	switch {
	case upTo.Known():
		return bound(x) + "–" + bound(upTo)
	case prefix == "":
		return fmtSeconds(x)
	}
	return prefix + bound(x)
}

// fmtBytes draws a size in bytes with a binary unit.
func fmtBytes(n analysis.Num) string {
	if !n.Known() {
		return na
	}
	v := n.Float()
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}

// fmtAge draws how long ago something happened, coarse enough to read at a
// glance: 12s, 3m04s, 2h03m.
func fmtAge(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// fmtDuration draws a configured duration (window, interval) compactly.
func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "?"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	default:
		return d.String()
	}
}

// fitWidth truncates or pads one line to exactly w columns, ANSI aware.
func fitWidth(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s = ansi.Truncate(s, w, "…")
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// fitBlock makes a block of text exactly w columns by h lines, so that
// nothing wraps or scrolls.
func fitBlock(s string, w, h int) string {
	return strings.Join(fitLines(fitHeight(strings.Split(s, "\n"), h), w), "\n")
}

// fitHeight cuts lines to n or pads them with blank ones to n.
func fitHeight(lines []string, n int) []string {
	lines = lines[:min(len(lines), n)]
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// fitLines truncates and pads each line to w columns, in place: every
// caller hands it lines of its own.
func fitLines(lines []string, w int) []string {
	for i, l := range lines {
		lines[i] = fitWidth(l, w)
	}
	return lines
}

// packSegments lays out segments left to right, a new line when the next
// does not fit in w columns.
func packSegments(segs []string, w int, sep string) []string {
	var lines []string
	var cur strings.Builder
	curW := 0
	sepW := ansi.StringWidth(sep)
	for _, s := range segs {
		sw := ansi.StringWidth(s)
		if curW > 0 && curW+sepW+sw > w {
			lines = append(lines, cur.String())
			cur.Reset()
			curW = 0
		}
		if curW > 0 {
			cur.WriteString(sep)
			curW += sepW
		}
		cur.WriteString(s)
		curW += sw
	}
	if curW > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// center places a line in the middle of w columns.
func center(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fitWidth(s, w)
	}
	return strings.Repeat(" ", (w-sw)/2) + s
}
