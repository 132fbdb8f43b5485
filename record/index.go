package record

import (
	"encoding/binary"
	"slices"
	"sort"
	"time"

	"github.com/vtop-dev/vtop/safetext"
)

// sanitize cleans the text of a header read from a file: target names
// are drawn on the screen.
func (h *Header) sanitize() {
	h.Vtop = safetext.Sanitize(h.Vtop)
	for i := range h.Targets {
		h.Targets[i].Name = safetext.Sanitize(h.Targets[i].Name)
		h.Targets[i].URL = safetext.Sanitize(h.Targets[i].URL)
	}
}

// varReader reads the varints of a payload; a read past the end sets bad.
type varReader struct {
	d   []byte
	pos int
	bad bool
}

func (v *varReader) uvarint() uint64 {
	x, n := binary.Uvarint(v.d[v.pos:])
	return v.took(x, n)
}

func (v *varReader) varint() int64 {
	x, n := binary.Varint(v.d[v.pos:])
	return int64(v.took(uint64(x), n))
}

// took moves past a varint of n bytes holding x, or marks v bad.
func (v *varReader) took(x uint64, n int) uint64 {
	if n <= 0 {
		v.bad = true
		return 0
	}
	v.pos += n
	return x
}

func (v *varReader) byte() byte {
	if v.pos >= len(v.d) {
		v.bad = true
		return 0
	}
	v.pos++
	return v.d[v.pos-1]
}

// skipString skips a uvarint-length string and returns its bounds.
func (v *varReader) skipString() (int, int) {
	n := v.uvarint()
	if v.bad || n > uint64(len(v.d)-v.pos) {
		v.bad = true
		return 0, 0
	}
	start := v.pos
	v.pos += int(n)
	return start, v.pos
}

// frameHead is the decoded head of a frame payload.
type frameHead struct {
	target           int
	meta             frameMeta
	errStart, errEnd int
	rawLen           int
	zst              int // where the compressed content starts
}

// parseFrame reads a frame's head from d[payload:end].
func parseFrame(d []byte, payload, end, targets int) (frameHead, bool) {
	v := varReader{d: d[:end], pos: payload}
	var h frameHead
	t := v.uvarint()
	h.meta.seq = int64(v.uvarint())
	h.meta.time = v.varint()
	h.meta.flags = v.byte()
	if v.bad || t >= uint64(targets) || h.meta.seq == 0 {
		return h, false
	}
	h.target = int(t)
	if h.meta.flags&flagErr != 0 {
		h.errStart, h.errEnd = v.skipString()
	}
	if h.meta.flags&flagPage != 0 {
		n := v.uvarint()
		if n > maxPageLen {
			return h, false
		}
		h.rawLen = int(n)
	}
	h.zst = v.pos
	h.meta.off, h.meta.end = payload, end
	return h, !v.bad
}

// useFrame indexes a frame record whose payload starts at file offset at.
func (r *Recording) useFrame(payload []byte, at int64) bool {
	h, ok := parseFrame(payload, 0, len(payload), len(r.frames))
	if !ok {
		return false
	}
	if h.meta.flags&flagPage != 0 {
		if h.rawLen > r.limits.pageCap() {
			r.refused = r.limits.tooLarge(h.meta.seq, r.Header.Targets[h.target].Name, uint64(h.rawLen))
			return true
		}
		// The size zstd's frame states, when it states one, is the size
		// its decoder holds to: one that disagrees with the frame's is
		// not vtop's writing.
		if n, ok := contentSize(payload[h.zst:]); ok && n != uint64(h.rawLen) || len(payload)-h.zst > compressBound(h.rawLen) {
			return false
		}
	}
	h.meta.off, h.meta.end = int(at), int(at)+len(payload)
	h.meta.time += r.start
	fs := r.frames[h.target]
	if n := len(fs); n > 0 && (fs[n-1].seq >= h.meta.seq || fs[n-1].time > h.meta.time) {
		return false // frames of a target only move forward: a copy is damage
	}
	r.frames[h.target] = append(fs, h.meta)
	r.end = max(r.end, h.meta.time)
	return true
}

// useTick indexes a tick record.
func (r *Recording) useTick(payload []byte) bool {
	v := varReader{d: payload}
	t := Tick{Time: r.timeOf(r.start + v.varint()), Window: time.Duration(v.uvarint())}
	n := v.uvarint()
	if v.bad || n != uint64(len(r.frames)) {
		return false
	}
	t.Cuts = make([]Cut, n)
	for i := range t.Cuts {
		t.Cuts[i] = Cut{Seq: int64(v.uvarint()), Count: int(v.uvarint())}
	}
	if v.bad || v.pos != len(payload) || t.Window <= 0 {
		return false
	}
	if n := len(r.ticks); n > 0 && !t.Time.After(r.ticks[n-1].Time) {
		return false // evaluations only move forward: a copy is damage
	}
	r.ticks = append(r.ticks, t)
	r.end = max(r.end, t.Time.UnixNano())
	return true
}

// index drops the frames that cannot be decoded (a delta whose previous
// frame was lost) and makes the ticks when none were recorded.
func (r *Recording) index() {
	r.infos = make([][]Frame, len(r.frames))
	for t, fs := range r.frames {
		kept := fs[:0]
		chain := false // the previous kept frame is the one before, with a page
		var prevSeq int64
		for _, f := range fs {
			hasPage := f.flags&flagPage != 0
			ok := !hasPage || f.flags&flagKey != 0 || (chain && prevSeq == f.seq-1)
			if !ok {
				r.Damage.Skipped++
				chain = false
				continue
			}
			kept = append(kept, f)
			chain, prevSeq = hasPage, f.seq
			r.infos[t] = append(r.infos[t], Frame{Seq: f.seq, Time: r.timeOf(f.time), Failed: !hasPage})
		}
		r.frames[t] = kept
	}
	if len(r.ticks) == 0 {
		r.synthesizeTicks()
	}
}

// synthesizeTicks makes one evaluation per interval when the recording
// has none (vtop record runs no analysis): each sees the frames up to its
// time within the window, the last one every frame. Stretches without
// frames longer than maxGapIntervals intervals are skipped: the recorder
// was not scraping (each interval gives every target a frame, a failed
// scrape's too), and a gap costs no ticks, however small the interval a
// header states.
func (r *Recording) synthesizeTicks() {
	r.synthetic = true
	times := r.allFrameTimes()
	if len(times) == 0 {
		return
	}
	iv := min(max(r.Header.Interval, time.Millisecond), time.Hour)
	window := r.Header.Config.Window
	if window <= 0 || window > 24*time.Hour {
		window = 30 * time.Second
	}
	r.keep = window + 2*iv
	k := 0
	for at := times[0].Add(iv); ; at = at.Add(iv) {
		for k < len(times) && !times[k].After(at) {
			k++
		}
		r.ticks = append(r.ticks, Tick{Time: at, Window: window}) // its cuts: Cut
		if k == len(times) {
			return
		}
		if times[k].Sub(at) > min(r.keep, maxGapIntervals*iv) {
			at = times[k].Add(-iv)
		}
	}
}

// maxGapIntervals is the longest stretch without frames, in intervals,
// that made-up evaluations go through: a scrape may come late by most of
// an interval (its timeout is shorter), so between two intervals' frames
// there are less than two.
const maxGapIntervals = 3

// cutAt is what a made-up evaluation at time at sees of target i: its
// frames up to at, back to r.keep before it.
func (r *Recording) cutAt(i int, at time.Time) Cut {
	fs := r.infos[i]
	hi := sort.Search(len(fs), func(k int) bool { return fs[k].Time.After(at) })
	lo := sort.Search(hi, func(k int) bool { return !fs[k].Time.Before(at.Add(-r.keep)) })
	if hi == 0 {
		return Cut{}
	}
	return Cut{Seq: fs[hi-1].Seq, Count: int(fs[hi-1].Seq - fs[min(lo, hi-1)].Seq + 1)}
}

// allFrameTimes returns the times of every frame, sorted.
func (r *Recording) allFrameTimes() []time.Time {
	var ts []time.Time
	for _, fs := range r.infos {
		for _, f := range fs {
			ts = append(ts, f.Time)
		}
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// Ticks returns the evaluations of the recording, in order: those live
// mode recorded, or one per interval when it recorded none.
func (r *Recording) Ticks() []Tick { return r.ticks }

// Frames returns the decodable frames of target i, oldest first.
func (r *Recording) Frames(i int) []Frame { return r.infos[i] }

// Targets returns the recorded targets.
func (r *Recording) Targets() []Target { return r.Header.Targets }

// Start and End bound the recording in time.
func (r *Recording) Start() time.Time { return r.timeOf(r.start) }

// End is the time of the newest intact record.
func (r *Recording) End() time.Time { return r.timeOf(r.end) }

// Span returns, for target i, the index range [lo, hi) of its frames
// that a cut covers.
func (r *Recording) Span(i int, c Cut) (lo, hi int) {
	fs := r.infos[i]
	hi = sort.Search(len(fs), func(k int) bool { return fs[k].Seq > c.Seq })
	if c.Seq == 0 {
		hi = 0
	}
	// Frames lost to damage are not there: count back by sequence.
	lo = sort.Search(hi, func(k int) bool { return fs[k].Seq > c.Seq-int64(c.Count) })
	return lo, hi
}

// Cut says which frames of target i the evaluation t saw: recorded with
// it, or, for the evaluations made up (a plain vtop record runs no
// analysis), found from the frames' times when asked, so that they cost
// nothing per target: a header of 10,000 targets over frames of one of
// them took 160 KB an evaluation.
func (r *Recording) Cut(t Tick, i int) Cut {
	switch {
	case r.synthetic && i < len(r.infos):
		return r.cutAt(i, t.Time)
	case i < len(t.Cuts):
		return t.Cuts[i]
	}
	return Cut{}
}
