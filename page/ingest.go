package page

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
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
	names     nameTable            // the sample names of the target's pages (nameTable.lookup)
	bounds    map[string][]float64 // bucket bound lists, by their bits (internBounds)
	rowBounds [][]float64          // per row of the alias table, the layout it read last
	labels    map[string]string    // model and engine names as shown, by their raw text
	media     string               // the media type of the last page's Content-Type (mediaType),
	content   string               // that Content-Type

	// The page being read.
	typeBuf []byte // a TYPE line the filter writes, or the name of one it hands the fast path
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
