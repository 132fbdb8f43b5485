package analysis

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The words of the analysis: how a figure is written inside a sentence
// that is copied into tickets and configuration, in full ("430,000
// tokens", "13.8 req/s", "350ms"), where the panes keep ui's compact
// formatters ("12k"). Both write an unknown figure as "n/a", never 0.

// count formats a number of things: whole, with thousands separators
// ("12,400"); "n/a" when unknown.
func count(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	whole := math.Round(x)
	digits := strconv.FormatFloat(math.Abs(whole), 'f', 0, 64)
	var b strings.Builder
	if whole < 0 {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// countBelow formats a count said to fall short of limit: as count does,
// unless rounding would write the limit itself (an extrapolated 19.7
// requests against 20); then to one decimal, cut rather than rounded, so
// that it stays below.
func countBelow(x float64, limit int) string {
	if math.Round(x) < float64(limit) || !(x < float64(limit)) {
		return count(x)
	}
	return count(math.Trunc(x)) + "." + strconv.Itoa(int(x*10)%10)
}

// amount formats a rate or a mean with sensible precision: whole above 100,
// one decimal above 10, two below ("6", "12.5", "0.35").
func amount(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Abs(x) >= 100:
		return count(x)
	case math.Abs(x) >= 10:
		return trimZeros(strconv.FormatFloat(x, 'f', 1, 64))
	}
	return trimZeros(strconv.FormatFloat(x, 'f', 2, 64))
}

// trimZeros drops trailing zeros after a decimal point ("6.00" → "6"), and
// the sign of a number that rounds to zero ("-0.00" → "0").
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// percent formats a 0–1 fraction as a percentage: whole from 10% ("95%"),
// with one decimal below it ("1.6%", "8%"), where a whole number would
// turn a KV cache at 1.6% into 2%. The screen writes every
// percentage with it, so a pane's figures and its reasons agree.
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	// The precision is chosen on the rounded value, so 9.96% is "10%".
	if tenths := math.Round(x*1000) / 10; math.Abs(tenths) < 10 {
		return trimZeros(strconv.FormatFloat(tenths, 'f', 1, 64)) + "%"
	}
	// Adding 0 turns the -0 that a small negative rounds to into 0.
	return strconv.FormatFloat(math.Round(x*100)+0, 'f', 0, 64) + "%"
}

// seconds formats a latency in seconds: milliseconds below one second
// ("350ms", "2.5s"). The unit is chosen on the rounded value, so 0.9996 s
// is "1s", not "1,000ms".
func seconds(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Round(math.Abs(x)*1000) < 1000:
		return amount(x*1000) + "ms"
	}
	return amount(x) + "s"
}

// duration formats a span of time to whole seconds ("30s", "2m5s").
func duration(d time.Duration) string {
	return d.Round(time.Second).String()
}

// Count writes the figure as a whole number ("12,400"), or "n/a". Count,
// Amount, Percent and Seconds are the reasons' words, for text reports.
func (n Num) Count() string { return count(float64(n)) }

// Amount writes a rate or a mean with the precision it needs ("6", "12.5",
// "0.35"), or "n/a".
func (n Num) Amount() string { return amount(float64(n)) }

// Percent writes a 0–1 fraction as a whole percentage ("95%"), or "n/a".
func (n Num) Percent() string { return percent(float64(n)) }

// Seconds writes a latency given in seconds ("350ms", "2.5s"), or "n/a".
func (n Num) Seconds() string { return seconds(float64(n)) }
