package page

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// The parser of a page: one pass over its lines, each line scanned once.
// A sample line's name, looked up in the target's name table, decides
// whether vtop reads it (catalogue.LookupSample); a line it reads is
// parsed into families (or, on the long way, copied for expfmt), and a
// line it drops is checked for the shape of a sample. Either scan tells
// the memo where the line's value starts, so that a page of the last
// page's shape is read as values only (replay, at the end of the file).

// filter passes over the lines of the page and keeps those of wanted
// families, so the parser never sees the rest of the page: into
// in.s.filtered, or in a direct pass (fp set) into the fast path, which
// then reads the very lines the copy would hold. OpenMetrics is rewritten
// to text format on the way: counter families get their _total name,
// exemplars, # UNIT and # EOF go. HELP lines are dropped (vtop never
// reads them). A family whose samples come before any TYPE line gets one,
// so that an untyped histogram's buckets still assemble. The lines it
// drops are checked for the shape of a sample, so that garbage anywhere
// fails the page; the error names the first such line. A direct pass
// stops with errNotFast where the fast path does not follow the page;
// record says it notes the page's memo.
func (in *Ingester) filter(body []byte, om bool, fp *fastParser, record bool) (pass, error) {
	p := pass{in: in, om: om, fp: fp}
	in.memo.lines = in.memo.lines[:0]
	if fp != nil {
		fp.reset()
		fp.record = record
	} else {
		in.s.filtered, in.s.lineMap = in.s.filtered[:0], in.s.lineMap[:0]
	}
	clear(in.typed)
	in.names.cur = 0
	for lineNo := int32(1); len(body) > 0; lineNo++ {
		raw, rest, hadNewline := cutLine(body)
		body = rest
		if err := p.line(raw, lineNo, hadNewline); err != nil {
			return p, err
		}
	}
	return p, nil
}

// pass is one pass of the parser over a page.
type pass struct {
	in      *Ingester
	om      bool
	fp      *fastParser // a direct pass's fast path; nil: the lines are copied
	hasVLLM bool        // a line names a vllm: family
	dropped int         // lines of wanted families over maxKeptLines
	kept    int         // lines kept
	last    *sampleName // the previous sample's name; nil until the first sample line
}

// line reads one line of the page, raw as cutLine gives it: the name
// decides whether it is kept; a kept line is parsed (or copied), a dropped
// one checked for the shape of a sample, and either scan tells the memo
// where the value starts.
func (p *pass) line(raw []byte, lineNo int32, hadNewline bool) error {
	// expfmt skips leading blanks; so must the filter, or an indented
	// sample would be dropped, or an indented comment taken for garbage.
	line := skipBlanks(raw)
	lead := len(raw) - len(line)
	if len(line) == 0 || line[0] == '#' {
		return p.comment(raw, line, lineNo)
	}
	// The lines of a family come together: most names are the previous
	// line's, and comparing the line's start with it (one memory
	// comparison) costs less than finding the name's end byte by byte and
	// looking it up. The previous name holds no '{' or blank, so a line
	// that starts with it and a delimiter has it for name.
	if p.last == nil || !sameName(line, p.last.name) {
		p.last = p.in.names.lookup(line)
		p.hasVLLM = p.hasVLLM || bytes.HasPrefix(p.last.name, vllmPrefix)
	}
	name := p.last
	if !name.read || p.kept >= maxKeptLines {
		return p.drop(raw, line, lineNo)
	}
	p.kept++
	if err := p.typeOf(name.row, "", lineNo); err != nil {
		return err
	}
	if p.om {
		line = stripExemplar(line, len(name.name))
	}
	if p.fp == nil {
		p.in.emitBytes(line, lineNo, hadNewline)
		return nil
	}
	if !hadNewline {
		return errNotFast // a cut last line is expfmt's error
	}
	at, ok := p.fp.sampleLine(line, name)
	if !ok {
		return errNotFast
	}
	p.note(raw[:lead+at], lineKept)
	return nil
}

// drop checks the shape of a sample line the filter does not keep.
func (p *pass) drop(raw, line []byte, lineNo int32) error {
	at, problem := sampleShape(line, p.last, p.om)
	if problem != "" {
		return lineError(lineNo, problem, line)
	}
	if p.last.read {
		p.dropped++
	}
	p.note(raw[:len(raw)-len(line)+at], lineDropped)
	return nil
}

// note adds a line to the memo being recorded, if any: a hash of prefix,
// its bytes before the value, as the scan that read the line found it (all
// of a comment or blank line).
func (p *pass) note(prefix []byte, kind lineKind) {
	if p.fp == nil || !p.fp.record {
		return
	}
	m := &p.in.memo
	m.lines = append(m.lines, memoLine{hash: maphash.Bytes(memoSeed, prefix), prefix: int32(len(prefix)), kind: kind})
}

// comment is what a comment line says to the filters (the pass, and Keep).
type comment struct {
	isVLLM bool   // a # TYPE or # HELP line of a vllm: family
	isType bool   // a # TYPE line, of family name and type typ
	name   []byte // of a # TYPE line only
	typ    []byte
}

// comment filters a comment or a blank line: a # TYPE of a wanted family
// is kept (once), everything else dropped.
func (p *pass) comment(raw, line []byte, lineNo int32) error {
	p.note(raw, lineWhole)
	if len(line) == 0 {
		return nil
	}
	c := readComment(line)
	p.hasVLLM = p.hasVLLM || c.isVLLM
	if !c.isType {
		return nil
	}
	row, typ, ok := keptType(c.name, string(c.typ), p.om)
	if !ok {
		return nil
	}
	return p.typeOf(row, typ, lineNo)
}

// readComment splits a comment line ("# TYPE name type", "# HELP name
// text", or any other).
func readComment(line []byte) comment {
	keyword, rest := nextToken(line[1:])
	switch string(keyword) {
	case "HELP":
		// Only the prefix of a HELP line's name matters, and it holds no
		// blank: the name's end need not be found.
		return comment{isVLLM: bytes.HasPrefix(skipBlanks(rest), vllmPrefix)}
	case "TYPE":
		name, rest := nextToken(rest)
		typ, _ := nextToken(rest)
		return comment{isVLLM: bytes.HasPrefix(name, vllmPrefix), isType: true, name: name, typ: typ}
	}
	return comment{}
}

// typeOf keeps the TYPE of a wanted family the first time the page names
// it: from its # TYPE line (typ in text format's terms), or, typ "", from
// a sample that comes before any. Untyped is the parser's default, and the
// builder reads a gauge, a counter and an untyped value alike: only a
// histogram or a summary needs saying, and so does what the page calls a
// family the alias table reads as a histogram. The line is attributed to
// the page's line lineNo: in the filter's copy, or read by a direct pass's
// fast path (errNotFast where it does not follow it).
func (p *pass) typeOf(row int, typ string, lineNo int32) error {
	in := p.in
	if in.typed[row] {
		return nil
	}
	in.typed[row] = true
	f := &catalogue.Reads[row]
	switch {
	case f.Kind.IsHistogram() && typ == "":
		typ = "histogram"
	case !f.Kind.IsHistogram() && typ != "histogram" && typ != "summary":
		return nil
	}
	if p.fp != nil {
		in.typeBuf = append(in.typeBuf[:0], f.Name...) // the row's name is the line's
		if !p.fp.setType(in.typeBuf, typ) {
			return errNotFast
		}
		return nil
	}
	b := append(in.typeBuf[:0], "# TYPE "...)
	b = append(b, f.Name...)
	b = append(b, ' ')
	b = append(b, typ...)
	in.typeBuf = b
	in.emitBytes(b, lineNo, true)
	return nil
}

// keptType reports whether the filter keeps the "# TYPE name typ" line of
// a page (om: OpenMetrics), with the row of the alias table that reads the
// family and its type in the text format's terms.
func keptType(name []byte, typ string, om bool) (row int, textType string, ok bool) {
	if om {
		var n string
		n, typ = openMetricsType(string(name), typ)
		name = []byte(n)
	}
	switch typ {
	case "counter", "gauge", "histogram", "summary", "untyped":
	default:
		typ = "untyped"
	}
	row, ok = catalogue.LookupFamily(name)
	return row, typ, ok
}

// openMetricsType maps an OpenMetrics family to the text format's name and
// type: counters and infos are named without their sample suffix there.
func openMetricsType(name, typ string) (string, string) {
	switch typ {
	case "counter":
		return name + "_total", typ
	case "info":
		return name + "_info", "gauge"
	case "unknown", "stateset":
		return name, "gauge"
	}
	return name, typ
}

// emitBytes appends one line of the page. The final newline is kept only if
// the page had it, so a page cut mid-line fails to parse as it should.
func (in *Ingester) emitBytes(line []byte, lineNo int32, newline bool) {
	in.s.filtered = append(in.s.filtered, line...)
	if newline {
		in.s.filtered = append(in.s.filtered, '\n')
	}
	in.s.lineMap = append(in.s.lineMap, lineNo)
}

// cutLine splits off the first line (without \n or \r\n).
func cutLine(b []byte) (line, rest []byte, hadNewline bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	line = b[:i]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, b[i+1:], true
}

var vllmPrefix = []byte("vllm:")

// nameTable holds the sample names a target's pages carry and the order
// in which the last page changed from one to the next. A page lists its
// families in the order the previous scrape did, so the name a line
// changes to is mostly the one the same change of the last page went to:
// one comparison instead of finding the name's end and the look-ups of
// LookupSample (up to four of the map). Everything an entry holds follows
// from its bytes, so no entry can be stale; a page of other names only
// costs the look-ups again.
type nameTable struct {
	names []sampleName
	index map[string]int32 // names by their bytes
	seq   []int32          // the last page's changes of name: indices into names
	cur   int              // the change this page is at
}

// Bounds of a nameTable: a page that invents new names on every scrape
// makes it start over, not grow.
const (
	maxTableNames = 4096
	maxNameSeq    = 16384
)

// sampleName is a sample name and what it is.
type sampleName struct {
	name  []byte
	row   int  // the alias table's row, when read
	read  bool // vtop reads the name (catalogue.LookupSample)
	valid bool // a plain metric name, or none (a line that starts with '{')
}

// lookup returns the entry of the name of a sample line whose name
// differs from the previous line's. What an entry says of its name is
// found once, when the name is first met.
func (t *nameTable) lookup(line []byte) *sampleName {
	if t.cur < len(t.seq) {
		// The table's names are SampleName's, as sameName needs.
		if r := &t.names[t.seq[t.cur]]; sameName(line, r.name) {
			t.cur++
			return r
		}
	}
	name := SampleName(line)
	i, ok := t.index[string(name)]
	if !ok {
		if len(t.names) >= maxTableNames || t.index == nil {
			// New storage: an entry already handed out stays as it was.
			t.names, t.index, t.seq = nil, make(map[string]int32), t.seq[:0]
			t.cur = 0
		}
		i = int32(len(t.names))
		r := sampleName{name: slices.Clone(name), valid: nameLen(name, metricByte) == len(name)}
		r.row, r.read = catalogue.LookupSample(name)
		t.names = append(t.names, r)
		t.index[string(r.name)] = i
	}
	switch {
	case t.cur < len(t.seq):
		t.seq[t.cur] = i
	case len(t.seq) < maxNameSeq:
		t.seq = append(t.seq, i)
	}
	t.cur++
	return &t.names[i]
}

// LineName is the metric name a line names, split as the parser splits
// it: a sample's name, or a comment's second field ("# TYPE name gauge").
// The GPU reader filters dcgm-exporter's pages with it.
func LineName(line []byte) []byte {
	if comment, ok := bytes.CutPrefix(line, []byte("#")); ok {
		_, rest := nextToken(comment)
		name, _ := nextToken(rest)
		return name
	}
	return SampleName(line)
}

// SampleName returns the metric name at the start of a sample line, as
// the parser reads it.
func SampleName(line []byte) []byte {
	for i, c := range line {
		if c == '{' || c == ' ' || c == '\t' {
			return line[:i]
		}
	}
	return line
}

// sameName reports whether name is SampleName(line), for a name that
// SampleName returned.
func sameName(line, name []byte) bool {
	if !bytes.HasPrefix(line, name) {
		return false
	}
	if len(line) == len(name) {
		return true
	}
	c := line[len(name)]
	return c == '{' || c == ' ' || c == '\t'
}

// stripExemplar cuts an OpenMetrics exemplar (" # {...} v [ts]") off a
// sample line. The label set is skipped with its quoting so that a '#'
// inside a label value is not taken for one.
func stripExemplar(line []byte, nameLen int) []byte {
	i := nameLen
	if i < len(line) && line[i] == '{' {
		inQuote := false
		for i++; i < len(line); i++ {
			c := line[i]
			if inQuote {
				if c == '\\' {
					i++
				} else if c == '"' {
					inQuote = false
				}
				continue
			}
			if c == '"' {
				inQuote = true
			} else if c == '}' {
				i++
				break
			}
		}
	}
	if j := bytes.IndexByte(line[min(i, len(line)):], '#'); j >= 0 {
		return bytes.TrimRight(line[:i+j], " \t")
	}
	return line
}

// sampleShape checks that a line the filter drops unparsed has the shape of
// a sample, name{labels} value [timestamp] (and in OpenMetrics an exemplar
// after them), and returns where its value starts and what is wrong, ""
// when nothing is. It is cheap: one pass over the line, no allocation.
// Label names are not checked; Prometheus would refuse a few more lines
// than this does.
func sampleShape(line []byte, name *sampleName, om bool) (at int, problem string) {
	if !name.valid {
		return 0, "metric name expected"
	}
	rest := line[len(name.name):]
	if len(rest) > 0 && rest[0] == '{' {
		end := labelSetEnd(rest)
		if end < 0 {
			return 0, "label set not closed"
		}
		rest = rest[end:]
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "blank expected before the value"
	}
	rest = skipBlanks(rest)
	return len(line) - len(rest), valueShape(rest, om)
}

// valueShape checks a sample's value and what follows it: an optional
// timestamp (an integer of milliseconds; in OpenMetrics a number of
// seconds), then, in OpenMetrics only, an exemplar.
func valueShape(b []byte, om bool) string {
	value, rest := nextToken(b)
	if len(value) == 0 {
		return "value expected"
	}
	if _, ok := parseValue(value); !ok {
		return "value is not a number"
	}
	ts, rest := nextToken(rest)
	if len(ts) == 0 || (om && ts[0] == '#') {
		return ""
	}
	if om {
		if _, ok := parseValue(ts); !ok {
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

// The expfmt text parser allocates several objects for every label of every
// line, a new message for every value and a map for every histogram line:
// on a page of eight engines that is most of the ingest's time and nearly
// all of its allocations. fastParser reads each line the pass keeps into
// the very families expfmt builds (the same names, types, series, labels
// in their order, buckets and values), but from storage it reuses from
// one page to the next and with interned strings. It follows only the
// plain text format the pass keeps: anything else (an escape, a quoted name,
// a timestamp, a summary, a line expfmt would refuse) makes it give up, and
// expfmt parses the page instead, so every error is still expfmt's.
// FuzzFastParse holds the two to the same families on any bytes.

// fastParser is the fast path's state, reused from page to page (it
// belongs to a scratch set of the Ingesters' free list). Not safe for
// concurrent use.
type fastParser struct {
	fams  map[string]*dto.MetricFamily
	hists map[string]*histSlot // histogram series by family and labels
	gen   uint32               // the current page, for hists
	made  []*histBox           // histograms of this page, to normalize

	names  interner // family and label names
	values interner // label values

	families slab[familyBox]
	metrics  slab[metricBox]
	pairs    slab[pairBox]
	scalars  slab[scalarBox]
	hist     slab[histBox]
	buckets  slab[bucketBox]

	lineLabels []*dto.LabelPair // the labels of the line being read
	keyBuf     []byte
	order      []int

	// The lines of a family come together: the previous line's family,
	// histogram series and label values answer most look-ups.
	lastName       *sampleName
	lastFamily     *dto.MetricFamily
	lastSuffix     suffix
	lastSlot       histSlot
	lastSlotFamily *dto.MetricFamily // the family of lastSlot
	lastPairs      []lastPair        // the previous lines' labels, by position in the line (see labelName)
	spare          lastPair          // the pair of a position past maxCachedLabels
	prefix         labelPrefix       // the previous line's label set but its last pair (see labels)
	leOrdinal      int               // the bucket line's place in its series, as labels counts it
	leBounds       *[]leBound        // the last family's bounds by place (see leValue)
	boundsOf       map[*dto.MetricFamily]*[]leBound

	// While record is set, each sample line read leaves where its value
	// went, so that a page of the same shape can be read as values only
	// (memo.go).
	record bool
	sinks  []valueSink

	// Some histogram count or bucket of the page was a fraction, so that
	// normalizeHistogram may have turned integer counts into floats
	// (replay relies on it).
	fractions bool
}

// maxBoundFamilies caps the families whose bounds are remembered.
const maxBoundFamilies = 1024

// leBound is a bucket bound's text as a label value and the number it
// reads to.
type leBound struct {
	text  string
	bound float64
}

// maxLeBounds is how many places of a series leValue remembers.
const maxLeBounds = 64

// histSlot is a histogram series met on page gen.
type histSlot struct {
	metric *dto.Metric
	box    *histBox
	gen    uint32
}

// The boxes hold a message with the values its pointer fields point to, so
// that one slot of a slab is one message, ready to reuse.
type (
	familyBox struct {
		mf   dto.MetricFamily
		name string
	}
	metricBox struct{ m dto.Metric }
	pairBox   struct {
		lp          dto.LabelPair
		name, value string
	}
	scalarBox struct {
		counter dto.Counter
		gauge   dto.Gauge
		untyped dto.Untyped
		v       float64
	}
	histBox struct {
		h       dto.Histogram
		sum     float64
		count   uint64
		countF  float64
		buckets []*bucketBox // the boxes of h.Bucket, in its order
		at      int32        // the box's place in its slab
	}
	bucketBox struct {
		b      dto.Bucket
		bound  float64
		count  uint64
		countF float64
	}
)

// metricTypes gives every family of a type the same *MetricType to point
// to; nothing writes through it.
var metricTypes = [...]dto.MetricType{
	dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_SUMMARY,
	dto.MetricType_UNTYPED, dto.MetricType_HISTOGRAM,
}

// maxHistSlots caps the histogram series remembered across pages.
const maxHistSlots = 4096

func newFastParser() *fastParser {
	return &fastParser{
		fams:     make(map[string]*dto.MetricFamily),
		hists:    make(map[string]*histSlot),
		boundsOf: make(map[*dto.MetricFamily]*[]leBound),
		names:    newInterner(1024),
		values:   newInterner(8192),
	}
}

// finish completes the families of a page whose every line was read, and
// returns them.
func (p *fastParser) finish() map[string]*dto.MetricFamily {
	for name, mf := range p.fams {
		if len(mf.Metric) == 0 {
			delete(p.fams, name)
		}
	}
	p.fractions = false
	for _, h := range p.made {
		if normalizeHistogram(h) {
			p.fractions = true
		}
	}
	return p.fams
}

// reset forgets the previous page, keeping its storage.
func (p *fastParser) reset() {
	clear(p.fams)
	p.gen++
	if p.gen == 0 || len(p.hists) > maxHistSlots {
		clear(p.hists)
		p.gen = 1
	}
	p.made = p.made[:0]
	p.sinks = p.sinks[:0]
	p.lastFamily, p.lastSlot, p.lastSlotFamily = nil, histSlot{}, nil
	p.prefix.text = nil // it points into the previous page
	p.families.reset()
	p.metrics.reset()
	p.pairs.reset()
	p.scalars.reset()
	p.hist.reset()
	p.buckets.reset()
}

// setType reads the TYPE of a family as the filter keeps it: false for a
// name or type the fast path does not follow, or a family typed before.
func (p *fastParser) setType(name []byte, typ string) bool {
	if len(name) == 0 || nameLen(name, metricByte) != len(name) {
		return false
	}
	var t dto.MetricType
	switch typ {
	case "counter":
		t = dto.MetricType_COUNTER
	case "gauge":
		t = dto.MetricType_GAUGE
	case "untyped":
		t = dto.MetricType_UNTYPED
	case "histogram":
		t = dto.MetricType_HISTOGRAM
	default:
		return false
	}
	p.lastFamily = nil // a new family may now take the lines of another
	mf, _ := p.family(name)
	if mf.Type != nil {
		return false // a second TYPE: expfmt's error
	}
	mf.Type = &metricTypes[t]
	return true
}

// suffix says which part of a histogram a sample line is.
type suffix uint8

const (
	noSuffix suffix = iota
	sumSuffix
	countSuffix
)

// family finds or makes the family of a metric name as expfmt does: the
// name's own family, else the histogram its _sum, _count or _bucket
// belongs to. (The filter never writes a summary, so that step of
// expfmt's is left out: a summary makes the page fall back.)
func (p *fastParser) family(name []byte) (*dto.MetricFamily, suffix) {
	if mf := p.fams[string(name)]; mf != nil {
		return mf, noSuffix
	}
	base, suf := name, noSuffix
	switch {
	case hasSuffix(name, "_count", 6):
		base, suf = name[:len(name)-6], countSuffix
	case hasSuffix(name, "_sum", 4):
		base, suf = name[:len(name)-4], sumSuffix
	case hasSuffix(name, "_bucket", 7):
		base = name[:len(name)-7]
	}
	if mf := p.fams[string(base)]; mf != nil && mf.GetType() == dto.MetricType_HISTOGRAM {
		return mf, suf
	}
	box := p.families.next()
	box.name = p.names.intern(name)
	box.mf.Name = &box.name
	box.mf.Help, box.mf.Type, box.mf.Unit = nil, nil, nil
	box.mf.Metric = box.mf.Metric[:0]
	p.fams[box.name] = &box.mf
	return &box.mf, noSuffix
}

// hasSuffix is expfmt's isCount, isSum and isBucket: the name is longer
// than the suffix and ends with it.
func hasSuffix(name []byte, s string, n int) bool {
	return len(name) > n && string(name[len(name)-n:]) == s
}

// sampleLine reads name{labels} value, the line's name found in the
// target's name table, and returns where the value starts; false for a
// name it does not follow, a family of a type it does not read, or a
// line it leaves to expfmt.
func (p *fastParser) sampleLine(line []byte, name *sampleName) (at int, ok bool) {
	mf, suf := p.lastFamily, p.lastSuffix
	if mf == nil || name != p.lastName {
		if !name.valid || len(name.name) == 0 {
			return 0, false // a quoted name, a name inside the braces, or garbage
		}
		mf, suf = p.family(name.name)
		p.lastName, p.lastFamily, p.lastSuffix = name, mf, suf
		p.leBounds = p.familyBounds(mf)
	}
	if mf.Type == nil {
		mf.Type = &metricTypes[dto.MetricType_UNTYPED]
	}
	t := mf.GetType() // a counter, a gauge, untyped or a histogram: setType reads no other
	rest := skipBlanks(line[len(name.name):])
	bucket := math.NaN()
	p.lineLabels = p.lineLabels[:0]
	if len(rest) > 0 && rest[0] == '{' {
		if rest, bucket, ok = p.labels(rest[1:], t == dto.MetricType_HISTOGRAM); !ok {
			return 0, false
		}
		rest = skipBlanks(rest)
	}
	// A timestamp, or blanks after the value, are left to expfmt: a value
	// with a blank in it is no number to parseValue.
	value, ok := parseValue(rest)
	if !ok {
		return 0, false
	}
	at = len(line) - len(rest)
	if t == dto.MetricType_HISTOGRAM {
		return at, p.histogramLine(mf, suf, bucket, value)
	}
	p.scalarLine(mf, value)
	return at, true
}

// scalarLine adds the series of a counter, gauge or untyped line.
func (p *fastParser) scalarLine(mf *dto.MetricFamily, value float64) {
	m := p.newMetric()
	box := p.scalars.next()
	box.v = value
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		box.counter.Value = &box.v
		m.Counter = &box.counter
	case dto.MetricType_GAUGE:
		box.gauge.Value = &box.v
		m.Gauge = &box.gauge
	default:
		box.untyped.Value = &box.v
		m.Untyped = &box.untyped
	}
	mf.Metric = append(mf.Metric, m)
	p.sink(sinkScalar, p.scalars.n-1)
}

// labelScan is the state of labels over one line's label set.
type labelScan struct {
	start  []byte      // the label set, after '{'
	j      int         // the pair being read, by position
	bucket float64     // the le value read, NaN before one
	cut    labelPrefix // the prefix of the label set read so far, for the next line
	hit    bool        // the line started with the previous line's prefix
}

// labels reads the label set after '{' into p.lineLabels and returns what
// follows the '}'. On a histogram family le is not a label: its value is
// the bucket's bound (the last le wins, as in expfmt).
func (p *fastParser) labels(b []byte, isHist bool) (rest []byte, bucket float64, ok bool) {
	ls := labelScan{start: b, bucket: math.NaN(), cut: labelPrefix{bucket: math.NaN()}}
	b = p.resumePrefix(&ls, b, isHist)
	for ; ; ls.j++ {
		b = skipBlanks(b)
		if len(b) > 0 && b[0] == '}' {
			break
		}
		if b, ok = p.labelPair(&ls, b, isHist); !ok {
			return nil, 0, false
		}
		if len(b) == 0 || b[0] != ',' {
			break
		}
		// Where the label set may be cut for the next line's prefix:
		// after the ',' of the pair before the last.
		b = b[1:]
		ls.cut.text, ls.cut.pairs, ls.cut.bucket = ls.start[:len(ls.start)-len(b)], ls.j+1, ls.bucket
		ls.cut.labels = len(p.lineLabels)
	}
	if len(b) == 0 || b[0] != '}' {
		return nil, 0, false
	}
	p.keepPrefix(&ls, isHist)
	return b[1:], ls.bucket, true
}

// resumePrefix skips the previous line's prefix when the label set starts
// with it. The bucket lines of a series differ in their last label only:
// the previous line's label set up to it, read and accepted, is what the
// same bytes read to again, and its labels are still the first of
// p.lineLabels.
func (p *fastParser) resumePrefix(ls *labelScan, b []byte, isHist bool) []byte {
	pf := &p.prefix
	if pf.text == nil || pf.isHist != isHist || len(b) <= len(pf.text) || string(b[:len(pf.text)]) != string(pf.text) {
		return b
	}
	p.lineLabels = p.lineLabels[:pf.labels]
	ls.bucket, ls.j, ls.cut, ls.hit = pf.bucket, pf.pairs, *pf, true
	return b[len(pf.text):]
}

// keepPrefix keeps the label set's prefix for the next line.
func (p *fastParser) keepPrefix(ls *labelScan, isHist bool) {
	if ls.hit && ls.cut.pairs == p.prefix.pairs {
		return // the prefix holds (and writing it would cost write barriers)
	}
	if ls.cut.text != nil {
		ls.cut.isHist = isHist
	}
	p.prefix = ls.cut
}

// labelPair reads one name="value" pair and returns what follows it.
func (p *fastParser) labelPair(ls *labelScan, b []byte, isHist bool) ([]byte, bool) {
	last, b, ok := p.labelName(ls.j, b)
	if !ok {
		return nil, false
	}
	b = skipBlanks(b)
	if len(b) == 0 || b[0] != '=' {
		return nil, false
	}
	b = skipBlanks(b[1:])
	if len(b) == 0 || b[0] != '"' {
		return nil, false
	}
	if isHist && last.name == "le" {
		return p.leValue(ls, b[1:])
	}
	return p.plainLabel(last, b[1:])
}

// labelName reads the label name b starts with. The lines of a family
// come together and carry their labels in one order, mostly with the same
// names and values: the previous line's j-th pair, already found valid,
// is tried first, so that most pairs cost two comparisons instead of a
// scan for their end, for an escape and for invalid UTF-8, and no
// interning. It returns that pair, the name now its name.
func (p *fastParser) labelName(j int, b []byte) (*lastPair, []byte, bool) {
	last := &p.spare
	if j < len(p.lastPairs) {
		last = &p.lastPairs[j]
	} else if j < maxCachedLabels {
		p.lastPairs = append(p.lastPairs, lastPair{})
		last = &p.lastPairs[j]
	}
	n := len(last.name)
	if n > 0 && len(b) > n && string(b[:n]) == last.name && nameBytes[b[n]]&labelByte == 0 {
		return last, b[n:], true
	}
	n = nameLen(b, labelByte)
	if n == 0 || n < len(b) && b[n] == '"' || string(b[:n]) == "__name__" {
		return nil, nil, false
	}
	last.name = p.names.intern(b[:n])
	return last, b[n:], true
}

// leValue reads a histogram's le value (after its opening quote) as the
// line's bucket bound. Bounds differ from line to line: not worth
// interning, but the series of a family repeat their bounds in one order,
// page after page, so the value read last at this place of a series of
// the family is tried first: a hit costs one comparison instead of the
// scan for the quote and the parse. The text is kept with the bound parsed
// from it, so a hit reads what the parse would.
func (p *fastParser) leValue(ls *labelScan, b []byte) ([]byte, bool) {
	ordinal := 0
	if ls.hit {
		ordinal = p.leOrdinal + 1
	}
	p.leOrdinal = ordinal
	memo := p.leBounds
	if memo != nil && ordinal < len(*memo) {
		lb := &(*memo)[ordinal]
		if q := len(lb.text); len(b) > q && b[q] == '"' && string(b[:q]) == lb.text {
			ls.bucket = lb.bound
			return skipBlanks(b[q+1:]), true
		}
	}
	q := valueEnd(b)
	if q < 0 {
		return nil, false // cut, escaped or invalid: expfmt's to judge
	}
	v, ok := parseValue(b[:q])
	if !ok {
		return nil, false
	}
	if memo != nil && ordinal < maxLeBounds {
		for len(*memo) <= ordinal {
			*memo = append(*memo, leBound{})
		}
		(*memo)[ordinal] = leBound{text: p.values.intern(b[:q]), bound: v}
	}
	ls.bucket = v
	return skipBlanks(b[q+1:]), true
}

// plainLabel reads a label's value (after its opening quote) into
// p.lineLabels, the previous line's value at the pair's place tried first.
func (p *fastParser) plainLabel(last *lastPair, b []byte) ([]byte, bool) {
	q := len(last.value)
	same := len(b) > q && b[q] == '"' && string(b[:q]) == last.value
	if !same {
		if q = valueEnd(b); q < 0 {
			return nil, false // cut, escaped or invalid: expfmt's to judge
		}
	}
	for _, lp := range p.lineLabels {
		if *lp.Name == last.name {
			return nil, false // duplicate label: expfmt's error
		}
	}
	if !same {
		last.value = p.values.intern(b[:q])
	}
	p.lineLabels = append(p.lineLabels, p.pair(last.name, last.value))
	return skipBlanks(b[q+1:]), true
}

// familyBounds returns where the bounds of a histogram family's series are
// remembered by place. Its key is the family's slot, which a page much
// like the last one gives the same family: a family in another slot only
// misses.
func (p *fastParser) familyBounds(mf *dto.MetricFamily) *[]leBound {
	if mf.GetType() != dto.MetricType_HISTOGRAM {
		return nil
	}
	memo := p.boundsOf[mf]
	if memo == nil {
		if len(p.boundsOf) >= maxBoundFamilies {
			clear(p.boundsOf)
		}
		memo = new([]leBound)
		p.boundsOf[mf] = memo
	}
	return memo
}

// labelPrefix is an accepted line's label set up to its last pair: the
// text after '{' through the ',' before that pair, and what it read to.
type labelPrefix struct {
	text   []byte // nil: no prefix
	isHist bool
	pairs  int
	labels int // how many of p.lineLabels it gave: they stay there until the next line's labels are read
	bucket float64
}

// valueEnd returns the index of the quote that closes the label value b
// starts with, or -1 when the value is cut, holds an escape or is not
// valid UTF-8. One pass over the bytes: most values that are not the
// previous line's are short (bucket bounds, engine numbers), where three
// calls would cost more than the scan.
func valueEnd(b []byte) int {
	ascii := true
	for i, c := range b {
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(b[:i]) {
				return -1
			}
			return i
		case c == '\\':
			return -1
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return -1
}

// pair returns a label pair from the slab. A slot mostly holds the same
// pair from page to page: it is only written where it differs, since every
// pointer written while the collector runs costs a write barrier.
func (p *fastParser) pair(name, value string) *dto.LabelPair {
	box := p.pairs.next()
	if box.lp.Name == nil {
		box.lp.Name, box.lp.Value = &box.name, &box.value
	}
	if box.name != name {
		box.name = name
	}
	if box.value != value {
		box.value = value
	}
	return &box.lp
}

// lastPair is a label name and value read at one position of a line, both
// found valid.
type lastPair struct{ name, value string }

// maxCachedLabels is how many label positions of a line labels remembers.
const maxCachedLabels = 16

// newMetric returns a cleared metric carrying the line's labels.
func (p *fastParser) newMetric() *dto.Metric {
	m := &p.metrics.next().m
	m.Label = append(m.Label[:0], p.lineLabels...)
	m.Gauge, m.Counter, m.Summary, m.Untyped, m.Histogram, m.TimestampMs = nil, nil, nil, nil, nil, nil
	return m
}

// histogramLine folds one line of a histogram family into its series, found
// by its labels in any order (expfmt's signature of the label set).
func (p *fastParser) histogramLine(mf *dto.MetricFamily, suf suffix, bucket, value float64) bool {
	box := p.series(mf).box
	switch {
	case suf == countSuffix:
		if !box.storeCount(value) {
			return false
		}
		p.sink(sinkCount, int(box.at))
	case suf == sumSuffix:
		box.storeSum(value)
		p.sink(sinkSum, int(box.at))
	case !math.IsNaN(bucket):
		return p.bucketLine(box, bucket, value)
	default:
		p.sink(sinkNone, 0) // a line of the family that holds no value of it
	}
	return true
}

// series returns the histogram series of mf the line's labels name.
func (p *fastParser) series(mf *dto.MetricFamily) histSlot {
	// Most lines continue the previous line's series with its labels in
	// the same order: comparing them with that series' labels costs less
	// than writing the key. (The same labels in the same order have the
	// same key; the series' labels are those its key was written from.)
	if p.lastSlot.gen == p.gen && p.lastSlotFamily == mf && sameLabels(p.lineLabels, p.lastSlot.metric.Label) {
		return p.lastSlot
	}
	key := p.seriesKey(mf.GetName())
	// The slots are pointers so that a series met on an earlier page is
	// renewed in place: assigning to the map would copy the key into a
	// new string on every page. A new slot's gen (0) is never the page's.
	sp := p.hists[string(key)]
	if sp == nil {
		sp = new(histSlot)
		p.hists[string(key)] = sp
	}
	if sp.gen != p.gen {
		*sp = p.newSeries(mf)
	}
	p.lastSlot, p.lastSlotFamily = *sp, mf
	return *sp
}

// bucketLine adds a bucket to a histogram series. A slot mostly holds the
// same bucket of the same series from page to page: its pointers are only
// written where they differ (see pair).
func (p *fastParser) bucketLine(box *histBox, bound, value float64) bool {
	bb := p.buckets.next()
	at := p.buckets.n - 1
	bb.bound = bound
	setPointer(&bb.b.UpperBound, &bb.bound)
	setPointer(&bb.b.Exemplar, nil)
	if !bb.store(value) {
		return false
	}
	h := &box.h
	// Lengthened in place when the slot past the end holds the pointer
	// already: a self-reslice writes no pointer.
	if n := len(h.Bucket); n < cap(h.Bucket) && h.Bucket[:n+1][n] == &bb.b {
		h.Bucket = h.Bucket[:n+1]
	} else {
		h.Bucket = append(h.Bucket, &bb.b)
	}
	if n := len(box.buckets); n < cap(box.buckets) && box.buckets[:n+1][n] == bb {
		box.buckets = box.buckets[:n+1]
	} else {
		box.buckets = append(box.buckets, bb)
	}
	p.sink(sinkBucket, at)
	return true
}

// sink notes where a line's value went, when recording.
func (p *fastParser) sink(kind valueSink, at int) {
	if p.record {
		p.sinks = append(p.sinks, kind<<sinkShift|valueSink(at))
	}
}

// storeCount sets the histogram's count as expfmt does: an integer as
// such, a fraction as a float; false for a negative fraction, which the
// fast path leaves to expfmt.
func (box *histBox) storeCount(value float64) bool {
	h := &box.h
	if u := uint64(value); value == float64(u) {
		box.count = u
		h.SampleCount = &box.count
		return true
	}
	if value < 0 {
		return false
	}
	box.countF = value
	h.SampleCountFloat = &box.countF
	return true
}

// storeSum sets the histogram's sum.
func (box *histBox) storeSum(value float64) {
	box.sum = value
	box.h.SampleSum = &box.sum
}

// store sets the bucket's cumulative count as storeCount sets a count.
func (bb *bucketBox) store(value float64) bool {
	if u := uint64(value); value == float64(u) {
		bb.count = u
		setPointer(&bb.b.CumulativeCount, &bb.count)
		setPointer(&bb.b.CumulativeCountFloat, nil)
		return true
	}
	if value < 0 {
		return false
	}
	bb.countF = value
	setPointer(&bb.b.CumulativeCount, nil)
	setPointer(&bb.b.CumulativeCountFloat, &bb.countF)
	return true
}

// setPointer sets *dst to p unless it holds p: a pointer written while
// the collector runs costs a write barrier.
func setPointer[T any](dst **T, p *T) {
	if *dst != p {
		*dst = p
	}
}

// newSeries starts a histogram series of mf with the line's labels.
func (p *fastParser) newSeries(mf *dto.MetricFamily) histSlot {
	slot := histSlot{metric: p.newMetric(), box: p.hist.next(), gen: p.gen}
	box := slot.box
	box.at = int32(p.hist.n - 1)
	box.h.SampleCount, box.h.SampleCountFloat, box.h.SampleSum = nil, nil, nil
	box.h.Bucket, box.buckets = box.h.Bucket[:0], box.buckets[:0]
	slot.metric.Histogram = &box.h
	p.made = append(p.made, box)
	mf.Metric = append(mf.Metric, slot.metric)
	return slot
}

// sameLabels reports whether two label lists are equal, in order.
func sameLabels(a, b []*dto.LabelPair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if *a[i].Name != *b[i].Name || *a[i].Value != *b[i].Value {
			return false
		}
	}
	return true
}

// seriesKey writes the family name and the line's labels sorted by name:
// the same key whatever order the labels come in.
func (p *fastParser) seriesKey(family string) []byte {
	p.order = p.order[:0]
	for i := range p.lineLabels {
		p.order = append(p.order, i)
	}
	for i := 1; i < len(p.order); i++ { // a handful of labels: insertion sort
		for j := i; j > 0 && *p.lineLabels[p.order[j]].Name < *p.lineLabels[p.order[j-1]].Name; j-- {
			p.order[j], p.order[j-1] = p.order[j-1], p.order[j]
		}
	}
	key := append(p.keyBuf[:0], family...)
	for _, i := range p.order {
		lp := p.lineLabels[i]
		key = append(key, 0xff)
		key = append(key, *lp.Name...)
		key = append(key, 0xfe)
		key = append(key, *lp.Value...)
	}
	p.keyBuf = key
	return key
}

// normalizeHistogram is expfmt's: when any count of a histogram is
// fractional, every count is given as a float. It reports whether one was.
func normalizeHistogram(box *histBox) bool {
	h := &box.h
	anyFloats := h.GetSampleCountFloat() != 0
	for _, b := range h.Bucket {
		if anyFloats {
			break
		}
		anyFloats = b.GetCumulativeCountFloat() != 0
	}
	if !anyFloats {
		return false
	}
	if h.GetSampleCountFloat() == 0 {
		box.countF = float64(h.GetSampleCount())
		h.SampleCountFloat, h.SampleCount = &box.countF, nil
	}
	for _, bb := range box.buckets {
		if bb.b.GetCumulativeCountFloat() == 0 {
			bb.countF = float64(bb.b.GetCumulativeCount())
			bb.b.CumulativeCountFloat, bb.b.CumulativeCount = &bb.countF, nil
		}
	}
	return true
}

// parseValue is expfmt's parseFloat: Go's syntax without hexadecimal
// mantissas or underscores, within range. It reads the values of the lines
// kept and checks those of the lines dropped.
func parseValue(v []byte) (float64, bool) {
	if len(v) > 0 && len(v) <= 16 {
		// Most values are counts, and most bucket bounds short decimals:
		// up to 15 digits a float holds the digits as an integer exactly,
		// and so a power of ten up to 1e15; one division of the two is
		// rounded once, to the number ParseFloat gives (its own fast path).
		n, digits, point := uint64(0), 0, -1
		for i, c := range v {
			switch {
			case c >= '0' && c <= '9':
				n = n*10 + uint64(c-'0')
				digits++
			case c == '.' && point < 0:
				point = i
			default:
				goto general
			}
		}
		if digits == 0 || digits > 15 {
			goto general
		}
		if point < 0 {
			return float64(n), true
		}
		return float64(n) / pow10[len(v)-point-1], true
	}
general:
	if len(v) == 0 || bytes.ContainsAny(v, "pP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// pow10 holds the powers of ten a float64 holds exactly that parseValue
// divides by.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// slabChunk is how many values a slab allocates at once. A chunk holds
// 6–22 KB; a target that keeps its memo keeps its chunks, and a quarter of
// the old 256 values left a page of eight engines some 130 KB less idle
// storage, at no cost to reading it.
const slabChunk = 64

// slab hands out values from chunks it keeps, so that the values of one
// page are reused for the next: pointers to them stay valid until reset.
type slab[T any] struct {
	chunks []*[slabChunk]T
	n      int
}

// next returns the next value; its previous contents are the caller's to
// clear.
func (s *slab[T]) next() *T {
	c, i := s.n/slabChunk, s.n%slabChunk
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, new([slabChunk]T))
	}
	s.n++
	return &s.chunks[c][i]
}

// reset makes every value available again.
func (s *slab[T]) reset() { s.n = 0 }

// at returns the value next handed out as the i-th since the reset.
func (s *slab[T]) at(i int) *T { return &s.chunks[i/slabChunk][i%slabChunk] }

// chunks returns how many chunks the parser's slabs hold.
func (p *fastParser) chunks() int {
	return len(p.families.chunks) + len(p.metrics.chunks) + len(p.pairs.chunks) +
		len(p.scalars.chunks) + len(p.hist.chunks) + len(p.buckets.chunks)
}

// interner returns one string per distinct byte sequence, so that the
// labels of every page share their strings. It forgets everything when
// full, so a page that invents new values cannot grow it without bound.
type interner struct {
	m   map[string]string
	max int
}

func newInterner(max int) interner { return interner{m: make(map[string]string), max: max} }

func (in *interner) intern(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	if len(in.m) >= in.max {
		clear(in.m)
	}
	s := string(b)
	in.m[s] = s
	return s
}

// store writes a value where the fast path wrote the line's, as it wrote
// it. It returns false where the fast path would have given up.
func (p *fastParser) store(v valueSink, x float64) bool {
	at := int(v & (1<<sinkShift - 1))
	switch v >> sinkShift {
	case sinkScalar:
		p.scalars.at(at).v = x
	case sinkBucket:
		bb := p.buckets.at(at)
		if !bb.store(x) {
			return false
		}
		p.fractions = p.fractions || bb.b.CumulativeCountFloat != nil
	case sinkCount:
		box := p.hist.at(at)
		if !box.storeCount(x) {
			return false
		}
		p.fractions = p.fractions || box.h.SampleCountFloat != nil
	case sinkSum:
		p.hist.at(at).storeSum(x)
	}
	return true
}

// replay reads a page of the memo's shape as values only, into the
// memo's families. It returns false, having perhaps written some values,
// when the page differs from the memo's in anything but its values, or
// holds a value the full reading would not take the same way: the page is
// then read in full, which starts the families over.
func (in *Ingester) replay(body []byte) bool {
	fp := in.s.fast
	for _, box := range fp.made {
		// As a new series starts: the lines set what they hold.
		box.h.SampleCount, box.h.SampleCountFloat, box.h.SampleSum = nil, nil, nil
	}
	fp.fractions = false // every value of the page is stored again
	lines, sinks := in.memo.lines, fp.sinks
	for len(body) > 0 {
		if len(lines) == 0 {
			return false
		}
		ml := &lines[0]
		lines = lines[1:]
		// The prefix is hashed before the line's end is looked for: it
		// holds no newline (the last page's did not), so only the value
		// is searched, not the whole line.
		n := int(ml.prefix)
		if len(body) < n || maphash.Bytes(memoSeed, body[:n]) != ml.hash {
			return false
		}
		var sink valueSink
		if ml.kind == lineKept {
			sink, sinks = sinks[0], sinks[1:]
		}
		var ok bool
		if body, ok = fp.replayValue(ml.kind, body, n, sink); !ok {
			return false
		}
	}
	if len(lines) > 0 {
		return false
	}
	if fp.fractions {
		for _, box := range fp.made {
			normalizeHistogram(box)
		}
	}
	return true
}

// replayValue reads what follows the prefix of n bytes that body starts
// with, as a line of the kind reads it, and returns what follows the line.
func (p *fastParser) replayValue(kind lineKind, body []byte, n int, sink valueSink) ([]byte, bool) {
	if n > 0 && body[n-1] == '\r' && (n == len(body) || body[n] == '\n') {
		return nil, false // cutLine would have taken this '\r' off the line
	}
	if kind != lineWhole {
		// Most values are counts: one pass finds the line's end, checks
		// the value and reads it.
		if v, end, ok := plainCount(body[n:]); ok {
			return body[n+end+1:], kind != lineKept || p.store(sink, v)
		}
	}
	tail, rest := cutValueLine(body[n:])
	switch kind {
	case lineWhole:
		return rest, len(tail) == 0
	case lineDropped: // a value the filter lets pass, so that the line may be dropped again
		return rest, valueShape(tail, false) == ""
	}
	v, ok := parseValue(tail)
	return rest, ok && p.store(sink, v)
}

// plainCount reads a count and the newline after it: at most
// maxPlainDigits digits, which a float holds exactly (as parseValue reads
// them, and as a dropped line's value passes the filter). end is the
// newline's index.
func plainCount(b []byte) (v float64, end int, ok bool) {
	var u uint64
	for i, c := range b {
		switch {
		case c-'0' < 10 && i < maxPlainDigits:
			u = u*10 + uint64(c-'0')
		case c == '\n' && i > 0:
			return float64(u), i, true
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// maxPlainDigits is the most digits plainCount reads.
const maxPlainDigits = 15

// cutValueLine is cutLine for what follows a line's prefix: mostly a short
// value, whose newline a plain scan finds sooner than a call of IndexByte.
func cutValueLine(b []byte) (line, rest []byte) {
	for i := range min(len(b), shortValue) {
		if b[i] == '\n' {
			line = b[:i]
			if i > 0 && line[i-1] == '\r' {
				line = line[:i-1]
			}
			return line, b[i+1:]
		}
	}
	line, rest, _ = cutLine(b)
	return line, rest
}

// shortValue is how far cutValueLine scans before it leaves the line to
// cutLine: past most values ("1.2345678e+09").
const shortValue = 24
