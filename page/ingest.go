package page

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"mime"
	"slices"
	"strconv"
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

// Ingester reduces pages of one target to Samples. It keeps the buffers of
// the previous page for reuse and interns bucket bounds, the model name and
// engine names so that the samples of one target share them. Not safe for
// concurrent use: give each target its own.
type Ingester struct {
	parser   expfmt.TextParser
	reader   bytes.Reader
	s        *scratch // the buffers of the page being read, while Ingest runs
	noFast   bool     // expfmt only (tests compare the two)
	noDirect bool     // the fast path reads the filter's copy of the page (tests compare the two)
	memo     pageMemo // the last page's shape and families, to read the next as values only (memo.go)
	memoMin  int      // the fewest lines read into families a page must have for its memo to be kept
	replayed bool     // the last page was read as values only (tests)

	direct   *fastParser // during a direct pass (see read): the fast path the filter hands its lines to
	gaveUp   bool        // the direct pass met a line the fast path does not follow
	typeBuf  []byte      // a TYPE line, written for the direct pass
	names    nameTable   // the sample names of this target's pages (filterPass)
	typed    []bool      // per family row: a # TYPE line has been written
	pairs    []bucketPair
	stripper labelStripper // takes model_name and engine off the lines (strip.go)

	recording bool // the direct pass records the page's shape
	recorded  bool // the direct pass that read the page recorded its shape
	lastKept  int  // lines the filter kept of the last page it read whole, -1 before the first

	bounds    map[string][]float64
	rowBounds [][]float64 // per row of the alias table, the layout it read last
	keyBuf    []byte
	model     string // last model name, raw and sanitized
	modelOK   string
	engines   map[string]string

	contentType     string // the last page's Content-Type,
	media           string // its media type (mediaType)
	contentTypeRead bool

	countsHint   int       // bucket counts the last sample carved (build.go)
	countScratch []float64 // the counts of a histogram merged into another's
}

type bucketPair struct{ bound, count float64 }

// NewIngester returns an Ingester with empty state.
func NewIngester() *Ingester {
	return &Ingester{
		parser:    expfmt.NewTextParser(model.UTF8Validation),
		typed:     make([]bool, len(catalogue.Reads)),
		stripper:  newLabelStripper(),
		bounds:    make(map[string][]float64),
		rowBounds: make([][]float64, len(catalogue.Reads)),
		engines:   make(map[string]string),
		memoMin:   memoMinLines,
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
	s.fast.prefix.text = nil // it points into the page, which may go now
	select {
	case freeScratch <- s:
	default:
	}
}

// emptyBounds marks a histogram exported with _sum and _count but no
// buckets: present (the mean is known), quantiles n/a.
var emptyBounds = []float64{}

// Ingest parses one page. contentType is the response's Content-Type (may
// be empty). The returned Sample has no Time: the caller stamps it. An
// error means the page is not usable; its text is short and meant for the
// user ("parse error at line 12: ...").
//
// Duplicate series are summed (gauges running and waiting, counters,
// buckets) or averaged (KV cache usage), exactly as series of different
// engines are; a page with duplicates is malformed and this is the least
// surprising reading of it. NaN and ±Inf values are kept as given; negative
// gauges are dropped with a warning.
func (in *Ingester) Ingest(body []byte, contentType string) (catalogue.Sample, error) {
	om, err := in.pageFormat(body, contentType)
	if err != nil {
		return catalogue.Sample{}, err
	}
	if err := checkWhole(body, om); err != nil {
		return catalogue.Sample{}, err
	}
	hasVLLM, dropped, fams, err := in.readPage(body, om)
	defer in.keepOrRelease()
	if err != nil {
		return catalogue.Sample{}, err
	}
	b := builder{in: in, sample: catalogue.NewSample(time.Time{})}
	b.sample.HasVLLM = hasVLLM
	if dropped > 0 {
		b.warn(fmt.Sprintf("page has more than %d lines of vLLM series; %d were ignored", maxKeptLines, dropped))
	}
	b.build(fams)
	return b.finish(), nil
}

// errNotFast ends a direct pass: the fast path does not follow the page.
var errNotFast = errors.New("left to expfmt")

// read filters the page and parses what the filter keeps. The pre-filter
// and the fast path would each scan every label of every line; in a direct
// pass the filter hands each line it keeps to the fast path as it finds
// it, and the fast path takes the stripped labels off while it reads them,
// so each line is scanned once and no copy of the page is written. The
// families are those the fast path reads from the filter's copy. When the
// fast path does not follow a line, the page is read again the long way:
// the filter's copy, then the fast path or expfmt on it, so every page it
// leaves is read as before and every parse error is expfmt's.
func (in *Ingester) read(body []byte, om bool) (hasVLLM bool, dropped int, fams map[string]*dto.MetricFamily, err error) {
	if !in.noFast && !in.noDirect {
		in.direct = in.s.fast
		hasVLLM, dropped, err = in.filter(body, om)
		in.direct = nil
		if err == nil {
			return hasVLLM, dropped, in.s.fast.finish(), nil
		}
		if err != errNotFast {
			return false, 0, nil, err // the filter's own refusal, the same in both ways
		}
	}
	if hasVLLM, dropped, err = in.filter(body, om); err != nil {
		return false, 0, nil, err
	}
	if fams, err = in.parse(); err != nil {
		return false, 0, nil, in.parseError(err)
	}
	return hasVLLM, dropped, fams, nil
}

// parse reads the filtered lines into families: by the fast path when it
// follows every line, else (and for every error) by expfmt.
func (in *Ingester) parse() (map[string]*dto.MetricFamily, error) {
	if !in.noFast {
		if fams, ok := in.s.fast.parse(in.s.filtered); ok {
			return fams, nil
		}
	}
	in.reader.Reset(in.s.filtered)
	return in.parser.TextToMetricFamilies(&in.reader)
}

// pageFormat dispatches on the Content-Type and reports whether the body is
// OpenMetrics, or why it cannot be read at all.
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
		return true, nil
	}
	switch {
	case trimmed[0] == '<':
		return false, errHTML
	case trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}', trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']':
		return false, errJSON // a metrics page never starts and ends so
	}
	return bytes.HasSuffix(trimmed, []byte("# EOF")), nil
}

// mediaType is the media type of a Content-Type header, remembered for
// the last header: a server sends the same one on every scrape, and
// parsing it allocates its parameters each time.
func (in *Ingester) mediaType(contentType string) string {
	if !in.contentTypeRead || contentType != in.contentType {
		in.contentType, in.contentTypeRead = contentType, true
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

// filter copies the lines of wanted families into in.s.filtered, so the
// parser never sees the rest of the page. OpenMetrics is rewritten to text
// format on the way: counter families get their _total name, exemplars,
// # UNIT and # EOF go. HELP lines are dropped (vtop never reads them). A
// family whose samples come before any TYPE line gets one, so that an
// untyped histogram's buckets still assemble. The lines it drops are
// checked for the shape of a sample, so that garbage anywhere fails the
// page; the error names the first such line.
func (in *Ingester) filter(body []byte, om bool) (hasVLLM bool, dropped int, err error) {
	mask := in.stripper.allowed
	for {
		var refused uint8
		hasVLLM, dropped, refused, err = in.filterPass(body, om, mask)
		if refused == 0 || err != nil {
			return hasVLLM, dropped, err
		}
		mask &^= refused // another pass, keeping the labels it could not take off
	}
}

// filterPass is one pass of filter, stripping the labels of mask (see
// stripLabels). It stops early and returns the labels that cannot be
// stripped from this page, or the first malformed line it drops. In a
// direct pass (in.direct set) it hands the lines to the fast path instead
// of copying them, and stops with errNotFast where the fast path gives up.
func (in *Ingester) filterPass(body []byte, om bool, mask uint8) (hasVLLM bool, dropped int, refused uint8, err error) {
	in.stripper.reset()
	rec := in.direct != nil && in.recording
	in.recorded = false
	in.memo.lines = in.memo.lines[:0]
	if in.direct != nil {
		in.direct.reset()
		in.direct.record = rec
		in.gaveUp = false
	} else {
		in.s.filtered = in.s.filtered[:0]
		in.s.lineMap = in.s.lineMap[:0]
	}
	clear(in.typed)
	kept := 0
	in.names.cur = 0
	var last *sampleName // the previous sample's name; nil until the first sample line
	var lastRead bool    // the direct pass's fast path read the previous sample line
	for lineNo := int32(1); len(body) > 0; lineNo++ {
		raw, rest, hadNewline := cutLine(body)
		body = rest
		// expfmt skips leading blanks; so must the filter, or an indented
		// sample would be dropped, or an indented comment taken for garbage.
		line := skipBlanks(raw)
		if len(line) == 0 || line[0] == '#' {
			if rec {
				in.memo.note(raw, len(raw), lineWhole)
			}
			if len(line) > 0 && in.typeLine(line, lineNo, om) {
				hasVLLM = true
			}
			if in.gaveUp {
				return hasVLLM, dropped, 0, errNotFast
			}
			continue
		}
		// The lines of a family come together: most names are the
		// previous line's, and comparing the line's start with it (one
		// memory comparison) costs less than finding the name's end byte
		// by byte and looking it up. The previous name holds no '{' or
		// blank, so a line that starts with it and a delimiter has it for
		// name.
		var name []byte
		repeated := last != nil && sameName(line, last.name)
		if repeated {
			name = line[:len(last.name)]
		} else {
			last = in.lookupName(line)
			name = line[:len(last.name)]
			if bytes.HasPrefix(name, vllmPrefix) {
				hasVLLM = true
			}
		}
		idx, ok := last.row, last.read
		// The fast path's previous name is this one when it read the
		// previous line (and so found the name valid and ending where
		// SampleName ends it).
		repeated = repeated && lastRead
		lastRead = false
		if !ok || kept >= maxKeptLines {
			if problem := sampleShape(line, len(name), last.valid, om); problem != "" {
				return hasVLLM, dropped, 0, lineError(lineNo, problem, line)
			}
			last.valid = true
			if ok {
				dropped++
			}
			if rec {
				rec = in.memo.noteSample(raw, len(raw)-len(line)+len(name), lineDropped)
			}
			continue
		}
		kept++
		if !in.typed[idx] {
			// Untyped is the parser's default: only a histogram needs saying.
			in.typed[idx] = true
			if catalogue.Reads[idx].Kind.IsHistogram() {
				if in.emitType(lineNo, catalogue.Reads[idx].Name, "histogram"); in.gaveUp {
					return hasVLLM, dropped, 0, errNotFast
				}
			}
		}
		if om {
			line = stripExemplar(line, len(name))
		}
		if fp := in.direct; fp != nil {
			if !hadNewline {
				return hasVLLM, dropped, 0, errNotFast // a cut last line: expfmt's error
			}
			m := mask & rowStrip[idx]
			if m != 0 && (len(name) >= len(line) || line[len(name)] != '{') {
				return hasVLLM, dropped, m, nil // as strip refuses a line without its label set
			}
			ok, refused := fp.sampleLine(line, repeated, &in.stripper, m)
			if refused != 0 {
				return hasVLLM, dropped, refused, nil
			}
			if !ok {
				return hasVLLM, dropped, 0, errNotFast
			}
			if rec {
				rec = in.memo.noteSample(raw, len(raw)-len(line)+len(name), lineKept)
			}
			lastRead = true
			continue
		}
		if m := mask & rowStrip[idx]; m != 0 {
			var rebuilt bool
			// The stripped line is written straight into the filtered page.
			in.s.filtered, rebuilt, refused = in.stripper.strip(in.s.filtered, line, len(name), m)
			if refused != 0 {
				return hasVLLM, dropped, refused, nil
			}
			if rebuilt {
				in.emitEnd(lineNo, hadNewline)
				continue
			}
		}
		in.emitBytes(line, lineNo, hadNewline)
	}
	in.recorded, in.lastKept = rec, kept
	return hasVLLM, dropped, 0, nil
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

// typeLine handles a comment line: a # TYPE of a wanted family is copied
// (once), everything else dropped. It reports whether the line names a
// vllm: family.
func (in *Ingester) typeLine(line []byte, lineNo int32, om bool) (isVLLM bool) {
	keyword, rest := NextField(line[1:])
	if string(keyword) != "TYPE" && string(keyword) != "HELP" {
		return false
	}
	if string(keyword) != "TYPE" {
		// Only the prefix of a HELP line's name matters, and it holds no
		// blank: the name's end need not be found.
		return bytes.HasPrefix(skipBlanks(rest), vllmPrefix)
	}
	nameB, rest := NextField(rest)
	isVLLM = bytes.HasPrefix(nameB, vllmPrefix)
	typB, _ := NextField(rest)
	if om {
		name, typ := openMetricsType(string(nameB), string(typB))
		in.typeOf([]byte(name), typ, lineNo)
		return isVLLM
	}
	in.typeOf(nameB, string(typB), lineNo)
	return isVLLM
}

// typeOf copies the TYPE of a family in text format's terms, when vtop
// reads the family and has not typed it yet on this page.
func (in *Ingester) typeOf(name []byte, typ string, lineNo int32) {
	switch typ {
	case "counter", "gauge", "histogram", "summary", "untyped":
	default:
		typ = "untyped"
	}
	idx, ok := catalogue.LookupFamily(name)
	if !ok || in.typed[idx] {
		return
	}
	in.typed[idx] = true
	if typ != "gauge" && typ != "counter" && typ != "untyped" || catalogue.Reads[idx].Kind.IsHistogram() {
		// The builder reads a gauge, a counter and an untyped value alike,
		// so their TYPE lines would only cost the parser a family header.
		in.emitType(lineNo, catalogue.Reads[idx].Name, typ) // the row's name is the line's
	}
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

// emitType appends a "# TYPE name typ" line, attributed to the page's
// line lineNo.
func (in *Ingester) emitType(lineNo int32, name, typ string) {
	if in.direct != nil {
		// The fast path reads the very line the filter would have written.
		b := append(in.typeBuf[:0], "# TYPE "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, typ...)
		in.typeBuf = b
		if !in.direct.typeLine(b) {
			in.gaveUp = true
		}
		return
	}
	in.s.filtered = append(in.s.filtered, "# TYPE "...)
	in.s.filtered = append(in.s.filtered, name...)
	in.s.filtered = append(in.s.filtered, ' ')
	in.s.filtered = append(in.s.filtered, typ...)
	in.s.filtered = append(in.s.filtered, '\n')
	in.s.lineMap = append(in.s.lineMap, lineNo)
}

// emitBytes appends one line of the page. The final newline is kept only if
// the page had it, so a page cut mid-line fails to parse as it should.
func (in *Ingester) emitBytes(line []byte, lineNo int32, newline bool) {
	in.s.filtered = append(in.s.filtered, line...)
	in.emitEnd(lineNo, newline)
}

// emitEnd ends a line already appended to the filtered page.
func (in *Ingester) emitEnd(lineNo int32, newline bool) {
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

// NextField returns the next space-separated field of b and what follows:
// how the parser splits a comment line (# TYPE name type).
func NextField(b []byte) (field, rest []byte) {
	// Byte loops: the fields are short, and every comment line of a page
	// is split so (bytes.IndexAny was most of the cost of a HELP line).
	b = skipBlanks(b)
	for i, c := range b {
		if c == ' ' || c == '\t' {
			return b[:i], b[i:]
		}
	}
	return b, nil
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

// internBounds returns the shared copy of a list of bounds, so that every
// sample of a target points at one slice per histogram. row is the alias
// table's row the histogram was read by.
func (in *Ingester) internBounds(row int, pairs []bucketPair) []float64 {
	if len(pairs) == 0 {
		return emptyBounds
	}
	// A histogram keeps its buckets from page to page: comparing with the
	// row's last layout costs less than writing the key of the map below.
	if b := in.rowBounds[row]; sameBounds(b, pairs) {
		return b
	}
	b := in.internBoundsByKey(pairs)
	in.rowBounds[row] = b
	return b
}

// sameBounds reports whether b holds the bounds of pairs, bit for bit (as
// the map's key tells them apart).
func sameBounds(b []float64, pairs []bucketPair) bool {
	if len(b) != len(pairs) {
		return false
	}
	for i, p := range pairs {
		if math.Float64bits(b[i]) != math.Float64bits(p.bound) {
			return false
		}
	}
	return true
}

// internBoundsByKey interns a layout by the text of its bounds.
func (in *Ingester) internBoundsByKey(pairs []bucketPair) []float64 {
	in.keyBuf = in.keyBuf[:0]
	for _, p := range pairs {
		in.keyBuf = strconv.AppendUint(in.keyBuf, math.Float64bits(p.bound), 36)
		in.keyBuf = append(in.keyBuf, ',')
	}
	if b, ok := in.bounds[string(in.keyBuf)]; ok {
		return b
	}
	if len(in.bounds) >= maxInternedBounds {
		clear(in.bounds)
	}
	b := make([]float64, len(pairs))
	for i, p := range pairs {
		b[i] = p.bound
	}
	in.bounds[string(in.keyBuf)] = b
	return b
}

// internModel returns the sanitized model name, reusing the last one.
func (in *Ingester) internModel(raw string) string {
	if raw != in.model {
		in.model, in.modelOK = raw, safetext.Sanitize(raw)
	}
	return in.modelOK
}

// internEngine returns the sanitized engine name.
func (in *Ingester) internEngine(raw string) string {
	if s, ok := in.engines[raw]; ok {
		return s
	}
	if len(in.engines) >= 4*MaxEngines {
		clear(in.engines)
	}
	s := safetext.Sanitize(raw)
	in.engines[raw] = s
	return s
}

// labelValue returns the value of the named label, or "".
func labelValue(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// scalarValue reads a gauge, counter or untyped value; ok is false for
// other types.
func scalarValue(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch {
	case t == dto.MetricType_GAUGE && m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case t == dto.MetricType_COUNTER && m.Counter != nil:
		return m.Counter.GetValue(), true
	case t == dto.MetricType_UNTYPED && m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

func byBound(a, b bucketPair) int { return cmp.Compare(a.bound, b.bound) }

// sortedPairs fills in.pairs with the buckets of h sorted by bound, equal
// bounds (le="1" and le="1.0") coalesced by summing, as Prometheus does.
func (in *Ingester) sortedPairs(h *dto.Histogram) []bucketPair {
	pairs := in.pairs[:0]
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		pairs = append(pairs, bucketPair{b.GetUpperBound(), c})
	}
	// A page lists its buckets in order: checking costs less than the sort.
	if !slices.IsSortedFunc(pairs, byBound) {
		slices.SortStableFunc(pairs, byBound)
	}
	out := pairs[:0]
	for _, p := range pairs {
		if n := len(out); n > 0 && out[n-1].bound == p.bound {
			out[n-1].count += p.count
			continue
		}
		out = append(out, p)
	}
	in.pairs = pairs
	return out
}
