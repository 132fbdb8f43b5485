package page

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"mime"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// Limits that keep a hostile or enormous page from costing unbounded CPU or
// memory. Whatever they drop is named in Sample.Warnings.
const (
	// MaxEngines is how many distinct engine label values one page may
	// carry; series of further engines are ignored.
	MaxEngines = 64
	// MaxSeries is how many series of wanted families (a histogram counts
	// once) are read from one page.
	MaxSeries = 2000
	// maxKeptLines caps the lines handed to the parser (buckets count).
	maxKeptLines = 50000
	// maxInternedBounds caps the bucket-bound lists remembered per target,
	// so a page that invents new buckets on every scrape cannot grow it.
	maxInternedBounds = 64
)

// Problems of a page, as shown to the user.
var (
	errEmptyBody = errors.New("empty body")
	errHTML      = errors.New("HTML page, not Prometheus metrics")
	errJSON      = errors.New("JSON, not Prometheus metrics")
	errProtobuf  = errors.New("protobuf exposition is not supported")
)

// Ingester reduces pages of one target to Samples. It is the target's
// cache, as Prometheus's scrape cache is, held by whatever reads the
// target (scrape, a recording's cursor): what one page leaves for reading
// the next (the memo, the sample names, bucket bounds, label values) is
// keyed by the bytes of the page, so nothing it keeps can be stale. Not
// safe for concurrent use: give each target its own.
type Ingester struct {
	parser expfmt.TextParser
	reader bytes.Reader
	s      *scratch // the buffers of the page being read, while Ingest runs

	// The target's cache, kept from page to page.
	memo      pageMemo             // the last page's shape and families, to read the next as values only (memo.go)
	lastKept  int                  // lines the filter kept of the last page it read whole, -1 before the first
	replayed  bool                 // the last page was read as values only
	names     nameTable            // the sample names of the target's pages (pass.sampleName)
	bounds    map[string][]float64 // bucket bound lists, by their bits (internBounds)
	rowBounds [][]float64          // per row of the alias table, the layout it read last
	labels    map[string]string    // model and engine names as shown, by their raw text
	media     string               // the media type of the last page's Content-Type (mediaType),
	content   string               // that Content-Type

	// The page being read.
	typeBuf []byte // a TYPE line the filter writes
	typed   []bool // per family row: a # TYPE line has been written
	pairs   []bucketPair
	keyBuf  []byte
	seen    seriesSeen // the series of the page (duplicate.go)

	countsHint   int       // bucket counts the last sample carved (build.go), a hint for the next
	countScratch []float64 // the counts of a histogram merged into another's
}

// NewIngester returns an Ingester with empty state.
func NewIngester() *Ingester {
	return &Ingester{
		parser:    expfmt.NewTextParser(model.UTF8Validation),
		typed:     make([]bool, len(catalogue.Reads)),
		bounds:    make(map[string][]float64),
		rowBounds: make([][]float64, len(catalogue.Reads)),
		labels:    make(map[string]string),
		lastKept:  -1,
	}
}

// scratch holds the buffers one Ingest needs only while it runs: the
// filtered page and the fast path's storage. They are shared through a
// small free list instead of kept by every Ingester, so a fleet of a
// hundred targets keeps a few sets, not a hundred.
type scratch struct {
	filtered []byte  // the lines of wanted families, rewritten to text format
	lineMap  []int32 // original line number of each filtered line
	fast     *fastParser
}

// Bounds of the free list of scratch sets.
const (
	// maxFreeScratch is how many sets are kept between pages: more than
	// the cores that ingest at once.
	maxFreeScratch = 8
	// maxScratchBytes is the largest filtered page whose set is kept, and
	// maxScratchChunks the most slab chunks of its fast path, so one huge
	// page does not pin its buffers for hours (a page of eight engines
	// takes about 40 chunks).
	maxScratchBytes  = 4 << 20
	maxScratchChunks = 256
)

var freeScratch = make(chan *scratch, maxFreeScratch)

// keepable reports whether a set is within the bounds of what is kept
// between pages, by the free list or by a memo.
func (s *scratch) keepable() bool {
	return cap(s.filtered) <= maxScratchBytes && s.fast.chunks() <= maxScratchChunks
}

func getScratch() *scratch {
	select {
	case s := <-freeScratch:
		return s
	default:
		return &scratch{fast: newFastParser()}
	}
}

func putScratch(s *scratch) {
	if !s.keepable() {
		return
	}
	select {
	case freeScratch <- s:
	default:
	}
}

// Ingest parses one page. contentType is the response's Content-Type (may
// be empty). The returned Sample has no Time: the caller stamps it. An
// error means the page is not usable; its text is short and meant for the
// user ("parse error at line 12: ...").
//
// A page holding one series twice is refused, naming the series and its
// line (duplicate.go). A value out of its figure's domain (NaN, ±Inf,
// past 2^53, a negative count, a fraction outside 0–1: catalogue.Fold.Refusal)
// is not read: the figure is n/a, with a warning naming the family.
func (in *Ingester) Ingest(body []byte, contentType string) (catalogue.Sample, error) {
	om, err := in.pageFormat(body, contentType)
	if err != nil {
		return catalogue.Sample{}, err
	}
	fams, keep, err := in.readPage(body, om)
	defer func() { in.keepOrRelease(keep) }()
	if err != nil {
		return catalogue.Sample{}, err
	}
	return in.sample(body, om, fams, &keep)
}

// sample builds the Sample of the families a page was read into, once
// the page is found to hold no series twice. A page read as values only
// has the lines of a page that passed; any other is checked (duplicate.go),
// and its scratch set then is not kept.
func (in *Ingester) sample(body []byte, om bool, fams map[string]*dto.MetricFamily, keep *bool) (catalogue.Sample, error) {
	if !in.replayed && in.mayRepeat(fams) {
		*keep = false // the line-by-line reading writes over the memo's lines
		if err := in.duplicateLine(body, om); err != nil {
			return catalogue.Sample{}, err
		}
	}
	b := builder{in: in, acc: catalogue.NewAccumulator(time.Time{}, nil)}
	b.acc.MaxEngines = MaxEngines
	b.acc.Sample.HasVLLM = in.memo.hasVLLM
	if d := in.memo.dropped; d > 0 {
		b.warn(fmt.Sprintf("page has more than %d lines of vLLM series; %d were ignored", maxKeptLines, d))
	}
	b.read(fams)
	return b.finish(), nil
}

// errNotFast ends a direct pass: the fast path does not follow the page.
var errNotFast = errors.New("left to expfmt")

// read filters the page and parses what the filter keeps. The pre-filter
// and the fast path would each scan every label of every line; in a direct
// pass the filter hands each line it keeps to the fast path as it finds
// it, so each line is scanned once and no copy of the page is written;
// record says the pass notes the page's memo. When the fast path does not
// follow a line, the page is read the long way (readCopy), so every parse
// error is expfmt's. The pass returned is the one that read the page.
func (in *Ingester) read(body []byte, om, record bool) (pass, map[string]*dto.MetricFamily, error) {
	p, err := in.filter(body, om, in.s.fast, record)
	switch err {
	case nil:
		return p, in.s.fast.finish(), nil
	case errNotFast:
		return in.readCopy(body, om)
	}
	return p, nil, err // the filter's own refusal, the same in both ways
}

// readCopy is the long way: the filter's copy of the page, parsed by
// expfmt. The fast path reads the copy's lines as it reads them in a
// direct pass, so it is not tried again here.
func (in *Ingester) readCopy(body []byte, om bool) (pass, map[string]*dto.MetricFamily, error) {
	p, err := in.filter(body, om, nil, false)
	if err != nil {
		return p, nil, err
	}
	in.reader.Reset(in.s.filtered)
	fams, err := in.parser.TextToMetricFamilies(&in.reader)
	if err != nil {
		return p, nil, in.parseError(err)
	}
	return p, fams, nil
}

// pageFormat dispatches on the Content-Type and reports whether the body is
// OpenMetrics, or why it cannot be read at all (checkWhole included).
func (in *Ingester) pageFormat(body []byte, contentType string) (openMetrics bool, err error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return false, errEmptyBody
	}
	switch in.mediaType(contentType) {
	case "text/html", "application/xhtml+xml":
		return false, errHTML
	case "application/json":
		return false, errJSON
	case "application/vnd.google.protobuf":
		return false, errProtobuf
	case "application/openmetrics-text":
		return true, checkWhole(body, true)
	}
	switch {
	case trimmed[0] == '<':
		return false, errHTML
	case trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}', trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']':
		return false, errJSON // a metrics page never starts and ends so
	}
	om := bytes.HasSuffix(trimmed, eofMarker)
	return om, checkWhole(body, om)
}

// mediaType is the media type of a Content-Type header, remembered for
// the last header: a server sends the same one on every scrape, and
// parsing it allocates its parameters each time. (The zero Ingester holds
// the media type of an empty header, none.)
func (in *Ingester) mediaType(contentType string) string {
	if contentType != in.content {
		in.content = contentType
		in.media, _, _ = mime.ParseMediaType(contentType)
	}
	return in.media
}

// parseError turns the parser's error into "parse error at line N: ...",
// with N the line of the original page.
func (in *Ingester) parseError(err error) error {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		line := pe.Line
		if line >= 1 && line <= len(in.s.lineMap) {
			line = int(in.s.lineMap[line-1])
		}
		return fmt.Errorf("parse error at line %d: %s", line, safetext.Sanitize(pe.Msg))
	}
	return fmt.Errorf("parse error: %s", safetext.Sanitize(err.Error()))
}

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
// stops with errNotFast where the fast path does not follow the page.
func (in *Ingester) filter(body []byte, om bool, fp *fastParser, record bool) (pass, error) {
	p := pass{in: in, om: om, fp: fp, rec: record && fp != nil}
	in.memo.lines = in.memo.lines[:0]
	if fp != nil {
		fp.reset()
		fp.record = p.rec
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

// pass is one filter pass over a page.
type pass struct {
	in       *Ingester
	om       bool
	fp       *fastParser // a direct pass's fast path; nil: the lines are copied
	rec      bool        // the pass notes the page's memo, until a line cannot be noted
	hasVLLM  bool        // a line names a vllm: family
	dropped  int         // lines of wanted families over maxKeptLines
	kept     int         // lines kept
	last     *sampleName // the previous sample's name; nil until the first sample line
	lastRead bool        // the fast path read the previous sample line
}

// line filters one line of the page, raw as cutLine gives it.
func (p *pass) line(raw []byte, lineNo int32, hadNewline bool) error {
	// expfmt skips leading blanks; so must the filter, or an indented
	// sample would be dropped, or an indented comment taken for garbage.
	line := skipBlanks(raw)
	if len(line) == 0 || line[0] == '#' {
		return p.comment(raw, line, lineNo)
	}
	name, repeated := p.sampleName(line)
	if !p.last.read || p.kept >= maxKeptLines {
		return p.drop(raw, line, len(name), lineNo)
	}
	p.kept++
	if err := p.typeOnce(p.last.row, lineNo); err != nil {
		return err
	}
	if p.om {
		line = stripExemplar(line, len(name))
	}
	if p.fp == nil {
		p.in.emitBytes(line, lineNo, hadNewline)
		return nil
	}
	if !hadNewline || !p.fp.sampleLine(line, repeated) {
		return errNotFast // a cut last line is expfmt's error
	}
	p.note(raw, len(raw)-len(line)+len(name), lineKept)
	p.lastRead = true
	return nil
}

// sampleName finds the name of a sample line, and says whether the fast
// path knows it for the name of the line it read before. The lines of a
// family come together: most names are the previous line's, and comparing
// the line's start with it (one memory comparison) costs less than
// finding the name's end byte by byte and looking it up. The previous
// name holds no '{' or blank, so a line that starts with it and a
// delimiter has it for name.
func (p *pass) sampleName(line []byte) (name []byte, repeated bool) {
	repeated = p.last != nil && sameName(line, p.last.name)
	if !repeated {
		p.last = p.in.lookupName(line)
		if bytes.HasPrefix(p.last.name, vllmPrefix) {
			p.hasVLLM = true
		}
	}
	// The fast path's previous name is this one when it read the previous
	// line (and so found the name valid and ending where SampleName ends
	// it).
	repeated = repeated && p.lastRead
	p.lastRead = false
	return line[:len(p.last.name)], repeated
}

// drop checks the shape of a sample line the filter does not keep.
func (p *pass) drop(raw, line []byte, nameLen int, lineNo int32) error {
	if problem := sampleShape(line, nameLen, p.last.valid, p.om); problem != "" {
		return lineError(lineNo, problem, line)
	}
	p.last.valid = true
	if p.last.read {
		p.dropped++
	}
	p.note(raw, len(raw)-len(line)+nameLen, lineDropped)
	return nil
}

// note adds a line to the memo being recorded, if any: a hash of its bytes
// before the value, after the name that ends at nameEnd, the label set and
// the blanks around them, as the fast path reads them (all of a comment or
// blank line). A sample line whose value cannot be found (never one the
// filter accepted) ends the recording: the page keeps no memo.
func (p *pass) note(raw []byte, nameEnd int, kind lineKind) {
	if !p.rec {
		return
	}
	at := len(raw)
	if kind != lineWhole {
		at = len(raw) - len(skipBlanks(raw[nameEnd:]))
		if at < len(raw) && raw[at] == '{' {
			end := labelSetEnd(raw[at:])
			if p.rec = end >= 0; !p.rec {
				return
			}
			at += end
		}
		at = len(raw) - len(skipBlanks(raw[at:]))
	}
	m := &p.in.memo
	m.lines = append(m.lines, memoLine{hash: maphash.Bytes(memoSeed, raw[:at]), prefix: int32(at), kind: kind})
}

// comment filters a comment or a blank line: a # TYPE of a wanted family
// is kept (once), everything else dropped.
func (p *pass) comment(raw, line []byte, lineNo int32) error {
	p.note(raw, len(raw), lineWhole)
	if len(line) == 0 {
		return nil
	}
	c := readComment(line)
	p.hasVLLM = p.hasVLLM || c.isVLLM
	if !c.isType {
		return nil
	}
	return p.typeOf(c.name, string(c.typ), lineNo)
}

// typeOnce writes the TYPE of a wanted family whose sample comes before
// any TYPE line of it. Untyped is the parser's default: only a histogram
// needs saying.
func (p *pass) typeOnce(row int, lineNo int32) error {
	if p.in.typed[row] {
		return nil
	}
	p.in.typed[row] = true
	if !catalogue.Reads[row].Kind.IsHistogram() {
		return nil
	}
	return p.emitType(lineNo, catalogue.Reads[row].Name, "histogram")
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
	valid bool // the name passed sampleShape's check
}

// lookupName returns the entry of the name of a sample line whose name
// differs from the previous line's.
func (in *Ingester) lookupName(line []byte) *sampleName {
	t := &in.names
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
		r := sampleName{name: slices.Clone(name)}
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

// comment is what a comment line says to the filters (the pass, and Keep).
type comment struct {
	isVLLM bool   // a # TYPE or # HELP line of a vllm: family
	isType bool   // a # TYPE line, of family name and type typ
	name   []byte // of a # TYPE line only
	typ    []byte
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

// typeOf keeps the TYPE of a family in text format's terms, when vtop
// reads the family (keptType) and has not typed it yet on this page.
func (p *pass) typeOf(name []byte, typ string, lineNo int32) error {
	idx, typ, ok := keptType(name, typ, p.om)
	if !ok || p.in.typed[idx] {
		return nil
	}
	p.in.typed[idx] = true
	if (typ == "gauge" || typ == "counter" || typ == "untyped") && !catalogue.Reads[idx].Kind.IsHistogram() {
		// The builder reads a gauge, a counter and an untyped value alike,
		// so their TYPE lines would only cost the parser a family header.
		return nil
	}
	return p.emitType(lineNo, catalogue.Reads[idx].Name, typ) // the row's name is the line's
}

// emitType keeps a "# TYPE name typ" line, attributed to the page's line
// lineNo: in the filter's copy, or read by a direct pass's fast path
// (errNotFast where it does not follow it).
func (p *pass) emitType(lineNo int32, name, typ string) error {
	in := p.in
	b := append(in.typeBuf[:0], "# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	in.typeBuf = b
	if p.fp == nil {
		in.emitBytes(b, lineNo, true)
		return nil
	}
	if !p.fp.typeLine(b) {
		return errNotFast
	}
	return nil
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
