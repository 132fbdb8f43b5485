package analysis

import (
	"bytes"
	"math"
	"strconv"
	"time"
)

// These are the words of the analysis: how a figure is written inside a
// sentence. Reasons, actions, events, the fleet advice and the text report
// of `vtop analyze` and `vtop --once` are read as prose and copied into
// tickets and configuration, so a number there is written in full, with
// thousands separators and the precision it needs: "cap max_num_seqs at
// 537", "430,000 tokens", "13.8 req/s", "350ms". The panes of the screen
// have a few columns per figure and keep their own compact formatters in
// package ui ("12k", "1.2M"): the two sets differ in width on purpose, not
// in meaning, and both write an unknown figure as "n/a", never as 0.

// count formats a number of things: whole, with thousands separators
// ("12,400"); "n/a" when unknown.
func count(x float64) string {
	var buf [32]byte
	return string(appendCount(buf[:0], x))
}

// appendCount appends x as count writes it.
func appendCount(dst []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(dst, "n/a"...)
	}
	whole := math.Round(x)
	if whole < 0 {
		dst = append(dst, '-')
	}
	var buf [24]byte
	digits := appendWhole(buf[:0], math.Abs(whole))
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c)
	}
	return dst
}

// exactWhole bounds the whole numbers whose float64 converts to an
// integer exactly, to be written as one.
const exactWhole = 1 << 53

// appendWhole appends the digits of a whole, non-negative x: as an
// integer, which is cheaper, where it converts to one exactly; as the
// float it is beyond.
func appendWhole(dst []byte, x float64) []byte {
	if x < exactWhole {
		return strconv.AppendUint(dst, uint64(x), 10)
	}
	return strconv.AppendFloat(dst, x, 'f', 0, 64)
}

// amount formats a rate or a mean with sensible precision: whole above 100,
// one decimal above 10, two below ("6", "12.5", "0.35").
func amount(x float64) string {
	var buf [32]byte
	return string(appendAmount(buf[:0], x))
}

// appendAmount appends x as amount writes it.
func appendAmount(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return append(dst, "n/a"...)
	case math.Abs(x) >= 100:
		return appendCount(dst, x)
	case math.Abs(x) >= 10:
		return appendTrimmed(dst, x, 1)
	}
	return appendTrimmed(dst, x, 2)
}

// appendTrimmed appends x with that many decimals, as trimZeros leaves
// them.
func appendTrimmed(dst []byte, x float64, decimals int) []byte {
	start := len(dst)
	return trimZeros(strconv.AppendFloat(dst, x, 'f', decimals, 64), start)
}

// trimZeros drops trailing zeros after a decimal point from the number
// written at dst[start:] ("6.00" → "6"), and the sign of one that rounds to
// zero ("-0.00" → "0").
func trimZeros(dst []byte, start int) []byte {
	if bytes.IndexByte(dst[start:], '.') < 0 {
		return dst
	}
	end := len(dst)
	for dst[end-1] == '0' {
		end--
	}
	if dst[end-1] == '.' {
		end--
	}
	if string(dst[start:end]) == "-0" {
		return append(dst[:start], '0')
	}
	return dst[:end]
}

// percent formats a 0–1 fraction as a percentage: whole from 10% ("95%"),
// with one decimal below it ("1.6%", "8%"), where a whole number would
// turn a KV cache at 1.6% into 2%. The screen writes every percentage
// with it, so a pane's figures and its reasons agree.
func percent(x float64) string {
	var buf [32]byte
	return string(appendPercent(buf[:0], x))
}

// appendPercent appends x as percent writes it.
func appendPercent(dst []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(dst, "n/a"...)
	}
	// The precision is chosen on the rounded value, so 9.96% is "10%".
	if tenths := math.Round(x*1000) / 10; math.Abs(tenths) < 10 {
		return append(appendTrimmed(dst, tenths, 1), '%')
	}
	// Adding 0 turns the -0 that a small negative rounds to into 0.
	return append(strconv.AppendFloat(dst, math.Round(x*100)+0, 'f', 0, 64), '%')
}

// seconds formats a latency in seconds: milliseconds below one second
// ("350ms", "2.5s"). The unit is chosen on the rounded value, so 0.9996 s
// is "1s", not "1,000ms".
func seconds(x float64) string {
	var buf [32]byte
	return string(appendSeconds(buf[:0], x))
}

// appendSeconds appends x as seconds writes it.
func appendSeconds(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return append(dst, "n/a"...)
	case math.Round(math.Abs(x)*1000) < 1000:
		return append(appendAmount(dst, x*1000), "ms"...)
	}
	return append(appendAmount(dst, x), 's')
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

// prose is a sentence being written: its words and figures appended to one
// buffer, the figures as count, amount, percent and seconds write them,
// and made a string once. fmt.Sprintf made a string of every figure and
// boxed every argument; the reasons and the advice took a sixth of the
// cost of an evaluation that way.
type prose []byte

// sentence starts a sentence with its first words, in a buffer that holds
// most sentences without growing.
func sentence(words string) prose { return append(make(prose, 0, 256), words...) }

// text appends words.
func (p prose) text(words string) prose { return append(p, words...) }

// count appends x as count writes it.
func (p prose) count(x float64) prose { return appendCount(p, x) }

// amount appends x as amount writes it.
func (p prose) amount(x float64) prose { return appendAmount(p, x) }

// perSecond appends a request rate as perSecond writes it.
func (p prose) perSecond(x float64) prose { return p.amount(x).text(" req/s") }

// percent appends x as percent writes it.
func (p prose) percent(x float64) prose { return appendPercent(p, x) }

// seconds appends x as seconds writes it.
func (p prose) seconds(x float64) prose { return appendSeconds(p, x) }

// int appends n in decimal.
func (p prose) int(n int) prose { return strconv.AppendInt(p, int64(n), 10) }

// plural appends a count with its noun, "1 preemption", "22 preemptions":
// the one way plural and the sentences write it.
func (p prose) plural(n float64, noun string) prose {
	start := len(p)
	p = append(appendCount(p, n), ' ')
	p = append(p, noun...)
	if string(p[start:len(p)-len(noun)-1]) != "1" {
		p = append(p, 's')
	}
	return p
}

// String is the sentence written.
func (p prose) String() string { return string(p) }
