package page

import (
	"hash/maphash"

	dto "github.com/prometheus/client_model/go"
)

// A server writes its page the same way on every scrape: the same lines in
// the same order, with the same names and labels, only the values moving
// (on two pages of an eight-engine replica a second apart, all 2,722 lines
// kept their name and labels in place). Such a page need not be filtered
// and parsed again: its values can be written into the families the last
// page was read into, and those families built into a Sample as before.
//
// The memo of a page is, for each of its lines, a hash of the bytes before
// its value (the whole line for a comment or a blank line) and what the
// line was (dropped, or read into the families, and then where its value
// went). A page is read as values only when each of its lines has the hash
// of the line at its place on the last page and a value the fast path
// reads, and a dropped line a value the filter would let pass; anything
// else, and the page is read in full, exactly as without the memo. The
// hash is seeded at random per process, so no server can aim at a
// collision; two different prefixes agree by chance once in 2^64 lines.
//
// The memo keeps the scratch set of the families, which costs a target
// the storage a page otherwise borrows from the free list while it is
// read. That pays only for a large page, so only a page of at least
// memoMinLines lines read into families keeps one.

// memoMinLines is the fewest lines read into families (buckets count) for
// which a page keeps its memo: some three engines of vLLM. A one-engine
// page (200–330 such lines) is read in full in about 55 µs, while its memo
// would hold some 100 KB for every target; eight engines' memo holds some
// 340 KB and saves 190 µs of every scrape (BENCHMARKS.md). Tests lower it
// to read small pages as values only.
var memoMinLines = 1024

var memoSeed = maphash.MakeSeed()

// pageMemo is what a target's last page left for reading the next one.
type pageMemo struct {
	s       *scratch // the families the page was read into (its fast path's), and the sinks of its values
	lines   []memoLine
	hasVLLM bool // a line of the page names a vllm: family
	dropped int  // lines of wanted families over maxKeptLines
}

// memoLine is one line of the memo's page.
type memoLine struct {
	hash   uint64 // of the line's first prefix bytes
	prefix int32  // the bytes before the value; the whole line when it has none
	kind   lineKind
}

// lineKind is what the filter did with a line.
type lineKind uint8

const (
	lineWhole   lineKind = iota // a comment or a blank line: nothing but its bytes
	lineDropped                 // a sample line the filter checked and dropped
	lineKept                    // a sample line read into the families
)

// valueSink is where the fast path wrote the value of one line read into
// the families: a scalar, a bucket, or a histogram's count or sum, as the
// kind in the top bits and the box's place in its slab below them (four
// bytes a line, where pointers took 32). A line of a histogram family
// that holds none of these has sinkNone.
type valueSink uint32

// The kinds of sink.
const (
	sinkNone valueSink = iota
	sinkScalar
	sinkBucket
	sinkCount
	sinkSum

	sinkShift = 29 // a page holds at most maxKeptLines boxes of a kind
)

// A page's boxes of a kind must fit below the kind's bits.
var _ [1<<sinkShift - maxKeptLines]struct{}

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

// readPage reads the page into families, as values only when the last
// page left a memo it matches, else in full (recording the page's memo
// when it is of the text format); keep says the scratch set may stay as
// the page's memo. keepOrRelease must follow, once the families are built.
func (in *Ingester) readPage(body []byte, om bool) (fams map[string]*dto.MetricFamily, keep bool, err error) {
	in.replayed = false
	if in.s = in.memo.s; in.s != nil {
		in.memo.s = nil
		if !om && in.replay(body) {
			in.replayed = true
			return in.s.fast.fams, true, nil
		}
	} else {
		in.s = getScratch()
	}
	// Recording costs a full reading a fifth more: a target whose last
	// page was too small to keep its memo does not record the next.
	record := !om && (in.lastKept < 0 || in.lastKept >= memoMinLines)
	p, fams, err := in.read(body, om, record)
	if err != nil {
		return nil, false, err
	}
	in.lastKept = p.kept
	in.memo.hasVLLM, in.memo.dropped = p.hasVLLM, p.dropped
	return fams, in.memoFits(p), nil
}

// memoFits reports whether the page a pass read whole may be kept as its
// memo: the pass recorded it (only a direct pass does, and only one that
// read the whole page says so), it is large enough, within the free
// list's bounds, and every line it kept left one sink, as replay relies on.
func (in *Ingester) memoFits(p pass) bool {
	return p.rec && p.kept == len(in.s.fast.sinks) && p.kept >= memoMinLines && in.s.keepable()
}

// keepOrRelease ends an Ingest: the scratch set stays with the Ingester
// as the memo of the page when keep is set (the page was read as values
// only, or in full with a memo that fits); else it goes back to the free
// list.
func (in *Ingester) keepOrRelease(keep bool) {
	s := in.s
	in.s = nil
	s.fast.prefix.text = nil // it points into the page, which goes now
	if keep {
		in.memo.s = s
		return
	}
	in.memo.lines = in.memo.lines[:0]
	putScratch(s)
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
		value, after := nextToken(tail)
		return rest, len(value) > 0 && validFloat(value) && tailShape(after, false) == ""
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
