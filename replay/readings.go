// Package replay plays a recording back through the same page parser and
// analysis as live mode: a monitor.Source (Paced, so the reports fall at
// the recorded evaluation times whatever the speed) with the controls of
// the replay screen, and Reports for the non-interactive modes.
package replay

import (
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
)

// reader turns ticks into readings: the samples each recorded report saw,
// decoded with a cursor and kept while later ticks still need them.
type reader struct {
	rec   *record.Recording
	cur   *record.Cursor
	cache []map[int]catalogue.Sample // per target: frame index → sample
}

func newReader(rec *record.Recording) *reader {
	r := &reader{rec: rec, cur: record.NewCursor(rec)}
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
	for i, tg := range targets {
		out[i].Target = tg.Name
		lo, hi := r.rec.Span(i, r.rec.Cut(t, i))
		out[i].Samples = make([]catalogue.Sample, 0, hi-lo)
		for k := lo; k < hi; k++ {
			out[i].Samples = append(out[i].Samples, r.sample(i, k))
		}
		r.prune(i, lo, hi)
	}
	return out
}

// sample decodes frame k of target i once.
func (r *reader) sample(i, k int) catalogue.Sample {
	if s, ok := r.cache[i][k]; ok {
		return s
	}
	s := r.cur.Sample(i, k)
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

func (r *reader) close() { r.cur.Close() }
