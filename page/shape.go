package page

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/vtop-dev/vtop/safetext"
)

// A page that is not whole must fail as Prometheus fails its scrape: the
// pre-filter hands the parser only the lines vtop reads, so without these
// checks a cut or a garbage line anywhere else would go unseen and a broken
// page would pass for a healthy one.

var eofMarker = []byte("# EOF")

// checkWhole refuses a page cut short. The text format ends every line, the
// last one included, with a newline; OpenMetrics ends with # EOF. A live
// server never sends less, so a shorter body is a connection that died or a
// proxy that gave up. A last line of blanks is whole: expfmt reads it so.
func checkWhole(body []byte, om bool) error {
	last := body[bytes.LastIndexByte(body, '\n')+1:]
	if trimBlanks(last) != nil && !(om && bytes.Equal(trimBlanks(last), eofMarker)) {
		return fmt.Errorf("page cut mid-line at byte %d", len(body))
	}
	if om && !bytes.HasSuffix(bytes.TrimRight(body, " \t\r\n"), eofMarker) {
		return fmt.Errorf("page cut at byte %d: no # EOF", len(body))
	}
	return nil
}

// trimBlanks trims spaces, tabs and carriage returns off both ends, and
// returns nil when nothing is left.
func trimBlanks(b []byte) []byte {
	b = bytes.Trim(b, " \t\r")
	if len(b) == 0 {
		return nil
	}
	return b
}

// skipBlanks returns b without its leading spaces and tabs.
func skipBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// nextToken returns the next blank-separated token of b and what follows:
// how a comment line (# TYPE name type) and a sample's tail are split.
func nextToken(b []byte) (token, rest []byte) {
	// Byte loops: the tokens are short, and every comment line of a page
	// is split so (bytes.IndexAny was most of the cost of a HELP line).
	b = skipBlanks(b)
	for i, c := range b {
		if c == ' ' || c == '\t' {
			return b[:i], b[i:]
		}
	}
	return b, nil
}

// lineError is the error of a malformed line: what is wrong, where, and the
// start of the line, quoted so that no byte of it can reach a terminal raw.
func lineError(lineNo int32, problem string, line []byte) error {
	const excerpt = 40
	quoted := strconv.Quote(string(line[:min(len(line), excerpt)]))
	if len(line) > excerpt {
		quoted += "…"
	}
	return fmt.Errorf("parse error at line %d: %s", lineNo, safetext.Sanitize(problem+" in "+quoted))
}

// sampleShape checks that a line the filter drops unparsed has the shape of
// a sample, name{labels} value [timestamp] (and in OpenMetrics an exemplar
// after them), and returns what is wrong, or "" when nothing is. It is
// cheap: one pass over the line, no allocation. Label names are not
// checked; Prometheus would refuse a few more lines than this does.
// The name is the line's first n bytes; nameValid says it was found valid
// on a previous line.
func sampleShape(line []byte, n int, nameValid, om bool) string {
	if !nameValid && nameLen(line[:n], metricByte) != n || (n == 0 && line[0] != '{') {
		return "metric name expected"
	}
	rest := line[n:]
	if len(rest) > 0 && rest[0] == '{' {
		end := labelSetEnd(rest)
		if end < 0 {
			return "label set not closed"
		}
		rest = rest[end:]
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return "blank expected before the value"
	}
	value, rest := nextToken(rest)
	if len(value) == 0 {
		return "value expected"
	}
	if !validFloat(value) {
		return "value is not a number"
	}
	return tailShape(rest, om)
}

// tailShape checks what follows a sample's value: an optional timestamp (an
// integer of milliseconds; in OpenMetrics a number of seconds), then, in
// OpenMetrics only, an exemplar.
func tailShape(rest []byte, om bool) string {
	ts, rest := nextToken(rest)
	if len(ts) == 0 || (om && ts[0] == '#') {
		return ""
	}
	if om {
		if !validFloat(ts) {
			return "timestamp is not a number"
		}
	} else if _, err := strconv.ParseInt(string(ts), 10, 64); err != nil {
		return "timestamp is not an integer"
	}
	if after, _ := nextToken(rest); len(after) > 0 && !(om && after[0] == '#') {
		return "unexpected text after the timestamp"
	}
	return ""
}

// The bytes of the text format's plain names: letters, digits and '_' in
// a label name, and ':' too in a metric name; no digit starts one.
const (
	labelByte uint8 = 1 << iota
	metricByte
)

var nameBytes = func() (t [256]uint8) {
	for c := range 256 {
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			t[c] = labelByte | metricByte
		}
	}
	t[':'] = metricByte
	return t
}()

// nameLen returns the length of the plain name of the class (labelByte,
// metricByte) that b starts with, 0 when none.
func nameLen(b []byte, class uint8) int {
	if len(b) > 0 && '0' <= b[0] && b[0] <= '9' {
		return 0
	}
	for i, c := range b {
		if nameBytes[c]&class == 0 {
			return i
		}
	}
	return len(b)
}

// labelSetEnd returns the index just past the '}' that closes the label set
// at the start of b, skipping quoted values with their escapes, or -1.
func labelSetEnd(b []byte) int {
	// Fast path, the common case: the first '}' closes the set when no
	// escape precedes it and the quotes before it pair up. IndexByte and
	// Count run in assembly, several times faster than the loop below.
	if j := bytes.IndexByte(b, '}'); j > 0 && bytes.IndexByte(b[:j], '\\') < 0 {
		if bytes.Count(b[:j], quote)%2 == 0 {
			return j + 1
		}
	}
	inQuote := false
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return i + 1
		}
	}
	return -1
}

var quote = []byte{'"'}

// validFloat reports whether v is a number as Prometheus and expfmt read
// one: Go's float syntax without hexadecimal mantissas or underscores, and
// within range.
func validFloat(v []byte) bool {
	if shortDecimal(v) {
		return true
	}
	if bytes.ContainsAny(v, "pP_") {
		return false
	}
	_, err := strconv.ParseFloat(string(v), 64)
	return err == nil
}

// shortDecimal reports a decimal number of at most 19 digits and a
// two-digit exponent, [+-]d[.d][e[+-]dd]: the form nearly every value on a
// page takes, which ParseFloat always accepts (it cannot overflow). It
// spares the page a ParseFloat per dropped line.
func shortDecimal(v []byte) bool {
	i := skipSign(v, 0)
	i, digits := skipDigits(v, i)
	if i < len(v) && v[i] == '.' {
		var more int
		i, more = skipDigits(v, i+1)
		digits += more
	}
	if digits == 0 || digits > 19 {
		return false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		var exp int
		i, exp = skipDigits(v, skipSign(v, i+1))
		if exp == 0 || exp > 2 {
			return false
		}
	}
	return i == len(v)
}

// skipSign returns the index after an optional sign at v[i].
func skipSign(v []byte, i int) int {
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		return i + 1
	}
	return i
}

// skipDigits returns the index after the digits from v[i], and their count.
func skipDigits(v []byte, i int) (int, int) {
	start := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	return i, i - start
}
