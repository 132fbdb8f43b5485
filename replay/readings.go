// Package replay plays a recording back through the same page parser and
// analysis as live mode: a monitor.Source whose steps set the pace (the
// reports fall at the recorded evaluation times whatever the speed), with
// the controls of the replay screen, and Reports for the non-interactive
// modes.
package replay

import (
	"runtime"
	"sync"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
)

// reader turns ticks into readings: the samples each recorded report saw,
// decoded with cursors and kept while later ticks still need them. The
// targets are shared among a few cursors, one per core up to maxCursors,
// decoding side by side: a jump decodes a whole window of every target.
type reader struct {
	rec   *record.Recording
	curs  []*record.Cursor           // target i is decoded by curs[i%len(curs)]
	cache []map[int]catalogue.Sample // per target: frame index → sample
}

// maxCursors bounds the cursors of a reader (each holds a decoder).
const maxCursors = 4

func newReader(rec *record.Recording) *reader {
	r := &reader{rec: rec}
	for range min(runtime.GOMAXPROCS(0), maxCursors, max(len(rec.Targets()), 1)) {
		r.curs = append(r.curs, record.NewCursor(rec))
	}
	for range rec.Targets() {
		r.cache = append(r.cache, map[int]catalogue.Sample{})
	}
	return r
}

// readings returns what the report of tick t was computed from, in a new
// slice (a step carries it to the monitor while the reader moves on).
func (r *reader) readings(t record.Tick) []catalogue.Readings {
	targets := r.rec.Targets()
	out := make([]catalogue.Readings, len(targets))
	var wg sync.WaitGroup
	for c := range r.curs {
		wg.Go(func() {
			for i := c; i < len(targets); i += len(r.curs) {
				out[i] = r.target(i, t)
			}
		})
	}
	wg.Wait()
	return out
}

// analyze is the report of tick t as live mode computed it, from what it
// read, with the tick's window unless cfg sets its own.
func (r *reader) analyze(t record.Tick, cfg analysis.Config, prev *analysis.Report) analysis.Report {
	if cfg.Window <= 0 {
		cfg.Window = t.Window
	}
	return analysis.Analyze(t.Time, r.readings(t), cfg, prev)
}

// target is the readings of target i at tick t; only the cursor of i
// touches i's cache.
func (r *reader) target(i int, t record.Tick) catalogue.Readings {
	lo, hi := r.rec.Span(i, r.rec.Cut(t, i))
	rd := catalogue.Readings{Target: r.rec.Targets()[i].Name, Samples: make([]catalogue.Sample, 0, hi-lo)}
	for k := lo; k < hi; k++ {
		rd.Samples = append(rd.Samples, r.sample(i, k))
	}
	r.prune(i, lo, hi)
	return rd
}

// sample decodes frame k of target i once.
func (r *reader) sample(i, k int) catalogue.Sample {
	if s, ok := r.cache[i][k]; ok {
		return s
	}
	s := r.curs[i%len(r.curs)].Sample(i, k)
	r.cache[i][k] = s
	return s
}

// prune forgets the samples of target i outside [lo, hi).
func (r *reader) prune(i, lo, hi int) {
	for k := range r.cache[i] {
		if k < lo || k >= hi {
			delete(r.cache[i], k)
		}
	}
}

func (r *reader) close() {
	for _, c := range r.curs {
		c.Close()
	}
}
