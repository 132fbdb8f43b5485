package ui

import (
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/ring"
)

// pointHistory is one replica's screen history: its newest points up to a
// capacity, oldest first, kept without pointers. An analysis.Point is
// 144 bytes with three pointers (the time's location and two slices) and
// its prompt-length column a separate allocation; fifty replicas of fifteen
// minutes made that the largest part of the dashboard's live heap, and all
// of it had to be scanned by every collection. Here a point is 80 bytes of
// plain values and its column a stride of one flat array, so the history
// is about two thirds of the size and the collector skips it. Points come
// back out exactly as they went in (the time without its monotonic
// reading, which nothing on the screen compares).
type pointHistory struct {
	points *ring.Ring[storedPoint]

	locs    []*time.Location // the points' time zones, in practice one
	layouts [][]float64      // the prompt-length bounds met, in practice one
	// The prompt-length column of the point in each of the ring's slots
	// (ring.Slot) is at slot×stride of counts while every value met is a
	// whole number of requests below 256 (a second's requests in one
	// bucket), and of deltas from the first that is not. The counts are a
	// quarter of the size: at fifteen buckets a column of float32 was 60
	// bytes beside the point's 80, some 2 MB of fifty replicas' fifteen
	// minutes. A column of another length (the server changed) goes to
	// wide.
	counts []uint8
	deltas []float32
	stride int
	wide   map[int][]float32
}

// storedPoint is an analysis.Point without pointers: the time as seconds
// and nanoseconds with an index into locs, the bounds as an index into
// layouts (0: none), the column in the history's arrays.
type storedPoint struct {
	sec     int64
	figures [16]float32
	nsec    int32
	state   analysis.State
	loc     uint8
	layout  uint8
	columns uint8 // noColumn, inline (in deltas) or wideColumn
}

// How a stored point's prompt-length column is kept.
const (
	noColumn     = iota // nil
	inlineColumn        // deltas[slot*stride:][:stride]
	wideColumn          // wide[slot]
)

// newPointHistory returns an empty history of at most capacity points (at
// least one).
func newPointHistory(capacity int) *pointHistory {
	return &pointHistory{points: ring.New[storedPoint](capacity)}
}

func (h *pointHistory) Len() int { return h.points.Len() }

func (h *pointHistory) Cap() int { return h.points.Cap() }

// Push adds a point, dropping the oldest when full.
func (h *pointHistory) Push(p analysis.Point) {
	slot := h.points.Slot(h.Len()) // the point's, and its column's
	delete(h.wide, slot)
	sp := storedPoint{
		sec: p.Time.Unix(), nsec: int32(p.Time.Nanosecond()), state: p.State,
		figures: [16]float32{
			p.Running, p.Waiting, p.KVCacheUsage, p.RequestsPerSecond,
			p.PromptTokensPerSecond, p.GenerationTokensPerSecond, p.PreemptionsPerSecond,
			p.TTFTP50, p.TTFTP90, p.TTFTP99, p.ITLP50, p.ITLP90, p.ITLP99,
			p.E2EP50, p.E2EP90, p.E2EP99,
		},
	}
	// Past 255 zones (never: one clock stamps a replica's points) the
	// last index is reused for the newest zone.
	sp.loc = indexIn(&h.locs, p.Time.Location(), func(a, b *time.Location) bool { return a == b }, 255)
	if p.PromptLengthBounds != nil {
		// The analysis shares one bounds slice while the server's buckets
		// stay the same, so the pointer usually answers. Past 254 layouts
		// (buckets changing every few seconds) the older points that carry
		// the last index show the newest bounds.
		sp.layout = indexIn(&h.layouts, p.PromptLengthBounds, sameLayout, 254) + 1
	}
	switch d := p.PromptLengthDeltas; {
	case d == nil:
		sp.columns = noColumn
	case h.stride == 0 && len(d) > 0 || len(d) == h.stride && h.stride > 0:
		if h.stride == 0 {
			h.stride = len(d)
			h.counts = make([]uint8, h.Cap()*h.stride)
		}
		h.putColumn(slot, d)
		sp.columns = inlineColumn
	default:
		if h.wide == nil {
			h.wide = map[int][]float32{}
		}
		h.wide[slot] = slices.Clone(d)
		sp.columns = wideColumn
	}
	h.points.Push(sp)
}

// putColumn stores d, of length stride, as the column of slot: as counts
// while they hold it exactly, else as deltas, to which every column held
// moves the first time.
func (h *pointHistory) putColumn(slot int, d []float32) {
	if h.deltas == nil {
		at := h.counts[slot*h.stride:]
		for i, v := range d {
			c := uint8(v)
			if float32(c) != v || math.Signbit(float64(v)) {
				h.deltas = make([]float32, len(h.counts))
				for j, c := range h.counts {
					h.deltas[j] = float32(c)
				}
				h.counts = nil
				break
			}
			at[i] = c
		}
	}
	if h.deltas != nil {
		copy(h.deltas[slot*h.stride:(slot+1)*h.stride], d)
	}
}

// column appends the column of slot to dst.
func (h *pointHistory) column(dst []float32, slot int) []float32 {
	if h.deltas != nil {
		return append(dst, h.deltas[slot*h.stride:(slot+1)*h.stride]...)
	}
	for _, c := range h.counts[slot*h.stride : (slot+1)*h.stride] {
		dst = append(dst, float32(c))
	}
	return dst
}

// sameLayout reports whether two bucket layouts are equal, by pointer first.
func sameLayout(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// indexIn returns the index of the first element of *list that same
// finds like v, appending v when none does; once the list holds limit
// elements, the last one is replaced by v instead.
func indexIn[T any](list *[]T, v T, same func(a, b T) bool, limit int) uint8 {
	for i, x := range *list {
		if same(x, v) {
			return uint8(i)
		}
	}
	if len(*list) == limit {
		(*list)[limit-1] = v
		return uint8(limit - 1)
	}
	*list = append(*list, v)
	return uint8(len(*list) - 1)
}

// At returns the i-th point, oldest first (0 ≤ i < Len), with a copy of
// its prompt-length column.
func (h *pointHistory) At(i int) analysis.Point {
	return h.appendPoint(nil, i, nil)[0]
}

// appendPoint appends the i-th point to dst, its column taken from the
// end of column's capacity (allocated when short), and returns dst.
func (h *pointHistory) appendPoint(dst []analysis.Point, i int, column *[]float32) []analysis.Point {
	slot, sp := h.points.Slot(i), h.points.At(i)
	f := &sp.figures
	p := analysis.Point{
		Time:    time.Unix(sp.sec, int64(sp.nsec)).In(h.locs[sp.loc]),
		State:   sp.state,
		Running: f[0], Waiting: f[1], KVCacheUsage: f[2], RequestsPerSecond: f[3],
		PromptTokensPerSecond: f[4], GenerationTokensPerSecond: f[5], PreemptionsPerSecond: f[6],
		TTFTP50: f[7], TTFTP90: f[8], TTFTP99: f[9], ITLP50: f[10], ITLP90: f[11], ITLP99: f[12],
		E2EP50: f[13], E2EP90: f[14], E2EP99: f[15],
	}
	if sp.layout > 0 {
		p.PromptLengthBounds = h.layouts[sp.layout-1]
	}
	if sp.columns != noColumn {
		n := h.stride
		if sp.columns == wideColumn {
			n = len(h.wide[slot])
		}
		var c []float32
		if column != nil && cap(*column)-len(*column) >= n {
			c = (*column)[len(*column) : len(*column) : len(*column)+n]
			*column = (*column)[:len(*column)+n]
		} else {
			c = make([]float32, 0, n)
		}
		if sp.columns == inlineColumn {
			c = h.column(c, slot)
		} else {
			c = append(c, h.wide[slot]...)
		}
		p.PromptLengthDeltas = c
	}
	return append(dst, p)
}

// timeAt returns the time of the i-th point, oldest first.
func (h *pointHistory) timeAt(i int) time.Time {
	sp := h.points.At(i)
	return time.Unix(sp.sec, int64(sp.nsec)).In(h.locs[sp.loc])
}
