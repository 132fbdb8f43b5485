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

// readPage reads the page into families, as values only when the last
// page left a memo it matches, else in full: in a direct pass, the pass
// that filters the page hands each line it keeps to the fast path as it
// finds it, so no copy of the page is written (and, when the page is of
// the text format, records the page's memo); where the fast path does not
// follow a line, the page is read the long way (readCopy), so every parse
// error is expfmt's. keep says the scratch set may stay as the page's
// memo. keepOrRelease must follow, once the families are built.
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
	p, err := in.filter(body, om, in.s.fast, record)
	switch err {
	case nil:
		fams = in.s.fast.finish()
	case errNotFast:
		p, fams, err = in.readCopy(body, om)
	}
	if err != nil {
		return nil, false, err // the filter's own refusal is the same both ways
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
	return p.fp != nil && p.fp.record && p.kept == len(in.s.fast.sinks) && p.kept >= memoMinLines && in.s.keepable()
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
