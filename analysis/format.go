package analysis

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// count formats a number of things: whole, with thousands separators
// ("12,400"); "n/a" when unknown.
func count(x float64) string {
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

// trimZeros drops trailing zeros after a decimal point ("6.00" → "6").
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// percent formats a 0–1 fraction as a whole percentage ("95%").
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(math.Round(x*100), 'f', 0, 64) + "%"
}

// seconds formats a latency in seconds: milliseconds below one second
// ("350ms", "2.5s").
func seconds(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case math.Abs(x) < 1:
		return amount(x*1000) + "ms"
	}
	return amount(x) + "s"
}

// duration formats a span of time to whole seconds ("30s", "2m5s").
func duration(d time.Duration) string {
	return d.Round(time.Second).String()
}

// Count writes the figure as a whole number with thousands separators
// ("12,400"), or "n/a" when it is unknown. Count, Amount, Percent and
// Seconds are the words the reasons use, for reports printed as text.
func (n Num) Count() string { return count(float64(n)) }

// Amount writes a rate or a mean with the precision it needs ("6", "12.5",
// "0.35"), or "n/a".
func (n Num) Amount() string { return amount(float64(n)) }

// Percent writes a 0–1 fraction as a whole percentage ("95%"), or "n/a".
func (n Num) Percent() string { return percent(float64(n)) }

// Seconds writes a latency given in seconds ("350ms", "2.5s"), or "n/a".
func (n Num) Seconds() string { return seconds(float64(n)) }
