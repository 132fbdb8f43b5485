package ui

// ring keeps the newest items up to a fixed capacity, oldest first, so that
// memory stays flat for a process that runs for days. It depends on nothing
// but the language, so it can move to a package of its own unchanged. Not
// safe for concurrent use.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest item
	n     int
}

// newRing returns an empty ring holding at most capacity items; a ring of
// capacity zero or less holds nothing.
func newRing[T any](capacity int) *ring[T] {
	return &ring[T]{buf: make([]T, max(capacity, 0))}
}

// Len returns how many items the ring holds.
func (r *ring[T]) Len() int { return r.n }

// Cap returns the capacity.
func (r *ring[T]) Cap() int { return len(r.buf) }

// Push adds an item, dropping the oldest when full.
func (r *ring[T]) Push(v T) {
	if len(r.buf) == 0 {
		return
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// At returns the i-th item, oldest first; i must be in [0, Len()).
func (r *ring[T]) At(i int) T { return r.buf[(r.start+i)%len(r.buf)] }

// Items appends the items, oldest first, to dst[:0] and returns it. Pass
// the previous result back to avoid allocating.
func (r *ring[T]) Items(dst []T) []T {
	dst = dst[:0]
	for i := range r.n {
		dst = append(dst, r.At(i))
	}
	return dst
}

// Latest returns the newest item, and false when the ring is empty.
func (r *ring[T]) Latest() (T, bool) {
	if r.n == 0 {
		var zero T
		return zero, false
	}
	return r.At(r.n - 1), true
}

// Grow raises the capacity, keeping the items. It never shrinks: a smaller
// capacity would have to choose which items to drop.
func (r *ring[T]) Grow(capacity int) {
	if capacity <= len(r.buf) {
		return
	}
	buf := r.Items(make([]T, 0, capacity))
	r.buf, r.start = buf[:capacity], 0
}
