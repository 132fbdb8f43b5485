// Package ring is a fixed-capacity ring buffer: the newest values of one
// series, so that memory stays flat however long vtop runs. The screen
// keeps each replica's points in one. (The scraper keeps each target's raw
// samples in a window of its own, which it can lend to the analysis
// without a copy.)
package ring

// Ring keeps the newest values up to a capacity. Not safe for concurrent
// use: its owner guards it.
type Ring[T any] struct {
	buf   []T
	start int // index of the oldest value
	n     int
}

// New returns an empty ring holding at most capacity values (at least one).
func New[T any](capacity int) *Ring[T] {
	return &Ring[T]{buf: make([]T, max(capacity, 1))}
}

// Len returns how many values the ring holds.
func (r *Ring[T]) Len() int { return r.n }

// Cap returns the capacity.
func (r *Ring[T]) Cap() int { return len(r.buf) }

// Push adds a value, dropping the oldest when full.
func (r *Ring[T]) Push(v T) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// At returns the i-th value, oldest first (0 ≤ i < Len).
func (r *Ring[T]) At(i int) T { return r.buf[r.Slot(i)] }

// Slot returns where the i-th value, oldest first, is stored: an index
// below Cap that stays that value's until it is dropped (or Grow moves
// every value), so that an owner can keep more of each value in arrays of
// its own beside the ring. Slot(Len()) is where the next Push goes.
func (r *Ring[T]) Slot(i int) int { return (r.start + i) % len(r.buf) }

// AppendTo appends the values, oldest first, to dst[:0] and returns it.
// Pass the previous result back to avoid allocating.
func (r *Ring[T]) AppendTo(dst []T) []T {
	dst = dst[:0]
	for i := range r.n {
		dst = append(dst, r.At(i))
	}
	return dst
}

// Latest returns the newest value.
func (r *Ring[T]) Latest() (T, bool) {
	if r.n == 0 {
		var zero T
		return zero, false
	}
	return r.At(r.n - 1), true
}

// Grow raises the capacity, keeping the values. It never shrinks.
func (r *Ring[T]) Grow(capacity int) {
	if capacity <= len(r.buf) {
		return
	}
	buf := r.AppendTo(make([]T, 0, capacity))
	r.buf, r.start = buf[:capacity], 0
}
