package page

import (
	"bytes"
	"unicode/utf8"

	"github.com/vtop-dev/vtop/catalogue"
)

// The expfmt parser spends most of its time on labels: every label of every
// line costs a handful of allocations, and model_name is the longest text
// on a vLLM page. A page nearly always carries one model and often one
// engine, so before parsing the filter takes those two labels off the lines
// when that is a one-to-one rewrite, and the builder puts their single value
// back. The parser, and so every figure, sees the same series either way:
// the rewrite is only made when each line that vtop reads by engine and
// model carries the label exactly once with the page's one value. Anything
// else (a second model or engine, a line without the label, an escape in
// the value, labels the scanner does not follow) makes the filter run again
// without stripping that label.

// Labels the filter may strip, as bits of a mask.
const (
	stripModel uint8 = 1 << iota
	stripEngine
	stripAll = stripModel | stripEngine
)

// strippable are the names of the labels in the order of their bits.
var strippable = [...]string{"model_name", "engine"}

// labelStripper takes the strippable labels off the lines of one page and
// remembers their values for the builder. It belongs to one Ingester.
type labelStripper struct {
	labels   [len(strippable)]labelStrip // labels taken off this page's lines
	allowed  uint8                       // the labels it may try (tests turn it off)
	stripped uint8                       // the labels at least one line lost
	spans    []labelSpan
}

// newLabelStripper returns a stripper that may strip every strippable label.
func newLabelStripper() labelStripper { return labelStripper{allowed: stripAll} }

// reset forgets the previous pass (the values themselves are kept, so a
// page with the same model costs no new string).
func (ls *labelStripper) reset() {
	for l := range ls.labels {
		ls.labels[l].seen = false
	}
	ls.stripped = 0
}

// value returns the value of a label taken off every line of the page, or
// "" when that label was not stripped.
func (ls *labelStripper) value(bit uint8) string {
	for l := range strippable {
		if bit == 1<<l && ls.stripped&bit != 0 {
			return ls.labels[l].str
		}
	}
	return ""
}

// labelStrip is one strippable label's state during a filter pass.
type labelStrip struct {
	value []byte // the page's one value (raw: it has no escapes)
	str   string // value as a string, kept across pages while it holds
	seen  bool   // value is set
}

// labelSpan is one name="value" pair of a line: [start, end) is the whole
// pair, the value is [valStart, valEnd) without its quotes.
type labelSpan struct {
	start, nameEnd, valStart, valEnd, end int
}

// readsByLabel reports whether a family is read by engine and model_name:
// only those lines are rewritten.
func readsByLabel(kind catalogue.ReadKind) bool {
	switch kind {
	case catalogue.ReadScalar, catalogue.ReadFinished, catalogue.ReadFinishedAs, catalogue.ReadHistogram,
		catalogue.ReadSleep, catalogue.ReadSpecPerPos, catalogue.ReadSplitScalar, catalogue.ReadSplitHistogram:
		return true
	}
	return false
}

// rowStrip holds, per row of the alias table, the strippable labels its
// series carry: vLLM's engine families carry both (but admission
// rejections no engine); other engines' families no engine label, and
// model_name only where that is their model label. A line is never asked
// for a label its family does not have, so such a family does not stop
// the stripping of the rest of the page.
var rowStrip = func() []uint8 {
	out := make([]uint8, len(catalogue.Reads))
	for i := range catalogue.Reads {
		r := &catalogue.Reads[i]
		if !readsByLabel(r.Kind) {
			continue
		}
		if r.Model() == strippable[0] {
			out[i] |= stripModel
		}
		if r.Engine == catalogue.EngineVLLM && !r.NoEngineLabel {
			out[i] |= stripEngine
		}
	}
	return out
}()

// strip appends line without the labels of mask to dst, when that is
// safe, and returns dst with rebuilt set; when no label is to be taken
// off, dst is returned as it was and the line is the caller's to copy. It
// returns the labels that cannot be stripped on this page (the filter then
// runs again without them).
func (ls *labelStripper) strip(dst, line []byte, nameLen int, mask uint8) (out []byte, rebuilt bool, refused uint8) {
	spans, close, ok := ls.labelSpans(line, nameLen)
	if !ok {
		return dst, false, mask
	}
	var drop [len(strippable)]int
	var taken stripValues
	for l := range strippable {
		drop[l] = -1
	}
	for i, sp := range spans {
		if bit := strippableBit(line[sp.start:sp.nameEnd]) & mask; bit != 0 {
			if !taken.add(bit, line[sp.valStart:sp.valEnd], false) {
				return dst, false, mask // a duplicate label: the parser's error to report
			}
			drop[bitIndex(bit)] = i
		}
	}
	if refused = ls.takeLabels(mask, &taken); refused != 0 {
		return dst, false, refused
	}
	if drop[0] < 0 && drop[1] < 0 {
		return dst, false, 0
	}
	return rebuild(dst, line, nameLen, spans, close, drop), true, 0
}

// strippableBit returns the bit of a strippable label's name, or 0.
func strippableBit(name []byte) uint8 {
	// A length first: most labels are neither.
	switch len(name) {
	case len(strippable[0]):
		if string(name) == strippable[0] {
			return stripModel
		}
	case len(strippable[1]):
		if string(name) == strippable[1] {
			return stripEngine
		}
	}
	return 0
}

// bitIndex returns the index in strippable of a label's bit.
func bitIndex(bit uint8) int {
	if bit == stripModel {
		return 0
	}
	return 1
}

// stripValues holds the values of the strippable labels found on one line.
type stripValues struct {
	found  uint8
	same   uint8 // the labels whose value is known to be the page's one value
	values [len(strippable)][]byte
}

// add records the value of the label of bit (same: the caller compared it
// with the page's one value already), and reports false if the line has
// that label already.
func (sv *stripValues) add(bit uint8, value []byte, same bool) bool {
	if sv.found&bit != 0 {
		return false
	}
	sv.found |= bit
	if same {
		sv.same |= bit
	}
	sv.values[bitIndex(bit)] = value
	return true
}

// takeLabels decides, for the labels of mask on one line whose strippable
// labels are in sv, whether they come off: each must be on the line once,
// with the page's one value. It returns the labels it refuses; when it
// refuses none, every label of mask is taken off the line. Both the
// filter's rewrite (strip) and the fast path's direct reading (labels)
// decide by it, so that they strip the same labels of the same lines.
func (ls *labelStripper) takeLabels(mask uint8, sv *stripValues) (refused uint8) {
	if sv.same == mask {
		// Every label was found with the page's value (most lines).
		ls.stripped |= mask
		return 0
	}
	for l := range strippable {
		bit := uint8(1) << l
		if mask&bit == 0 {
			continue
		}
		if sv.found&bit == 0 || sv.same&bit == 0 && !ls.sameValue(l, sv.values[l]) {
			refused |= bit
		}
	}
	if refused != 0 {
		return refused
	}
	ls.stripped |= mask
	return 0
}

// sameValue records the first value of label l on the page and reports
// whether v is it. A value with an escape or invalid UTF-8 is refused: the
// builder could not put it back exactly as the parser would read it.
func (ls *labelStripper) sameValue(l int, v []byte) bool {
	st := &ls.labels[l]
	if !st.seen {
		if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
			return false
		}
		st.value = append(st.value[:0], v...)
		if st.str != string(v) {
			st.str = string(v)
		}
		st.seen = true
		return true
	}
	return bytes.Equal(st.value, v)
}

// rebuild appends the line without the dropped pairs to buf.
func rebuild(buf, line []byte, nameLen int, spans []labelSpan, close int, drop [len(strippable)]int) []byte {
	// The braces stay even when empty: the value may follow '}' with no
	// space, and the parser reads "name{}0" as it reads "name{l="v"}0".
	buf = append(buf, line[:nameLen]...)
	buf = append(buf, '{')
	kept := 0
	for i, sp := range spans {
		if i == drop[0] || i == drop[1] {
			continue
		}
		if kept > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, line[sp.start:sp.end]...)
		kept++
	}
	return append(buf, line[close:]...)
}

// labelSpans scans the label set that starts at line[nameLen] ('{'). It
// returns the pairs and the index of the closing brace; ok is false for a
// line without labels or with anything the text format's plain grammar
// does not allow (quoted label names included), which is left to the
// parser untouched.
func (ls *labelStripper) labelSpans(line []byte, nameLen int) (spans []labelSpan, close int, ok bool) {
	spans = ls.spans[:0]
	defer func() {
		if cap(spans) > cap(ls.spans) {
			ls.spans = spans[:0] // keep the grown buffer
		}
	}()
	if nameLen >= len(line) || line[nameLen] != '{' {
		return nil, 0, false
	}
	i := skipBlank(line, nameLen+1)
	for i < len(line) && line[i] != '}' {
		var sp labelSpan
		sp.start = i
		for i < len(line) && isLabelNameByte(line[i], i == sp.start) {
			i++
		}
		sp.nameEnd = i
		if sp.nameEnd == sp.start {
			return nil, 0, false
		}
		i = skipBlank(line, i)
		if i >= len(line) || line[i] != '=' {
			return nil, 0, false
		}
		i = skipBlank(line, i+1)
		if i >= len(line) || line[i] != '"' {
			return nil, 0, false
		}
		sp.valStart = i + 1
		for i++; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' {
				i++
			}
		}
		if i >= len(line) {
			return nil, 0, false
		}
		sp.valEnd = i
		sp.end = i + 1
		spans = append(spans, sp)
		i = skipBlank(line, i+1)
		if i < len(line) && line[i] == ',' {
			i = skipBlank(line, i+1)
		} else if i < len(line) && line[i] != '}' {
			return nil, 0, false
		}
	}
	if i >= len(line) {
		return nil, 0, false
	}
	return spans, i, true
}

// skipBlank returns the index of the first byte at or after i that is not
// a space or tab.
func skipBlank(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// isLabelNameByte reports whether c may appear in a plain label name.
func isLabelNameByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}
