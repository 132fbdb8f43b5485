package scrape

import "github.com/vtop-dev/vtop/analysis"

// Ring keeps the newest samples of one target, up to a fixed capacity, so
// that memory stays flat however long vtop runs. Not safe for concurrent
// use; the poller guards each ring with its target's lock.
type Ring struct {
	buf   []analysis.Sample
	start int // index of the oldest sample
	n     int
}

// NewRing returns an empty ring holding at most capacity samples (at least
// two: a rate needs two readings).
func NewRing(capacity int) *Ring {
	return &Ring{buf: make([]analysis.Sample, max(capacity, 2))}
}

// Len returns how many samples the ring holds.
func (r *Ring) Len() int { return r.n }

// Cap returns the capacity.
func (r *Ring) Cap() int { return len(r.buf) }

// Push adds a sample, dropping the oldest when full.
func (r *Ring) Push(s analysis.Sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// Samples appends the samples, oldest first, to dst[:0] and returns it.
// Pass the previous result back to avoid allocating.
func (r *Ring) Samples(dst []analysis.Sample) []analysis.Sample {
	dst = dst[:0]
	for i := range r.n {
		dst = append(dst, r.buf[(r.start+i)%len(r.buf)])
	}
	return dst
}

// Latest returns the newest sample.
func (r *Ring) Latest() (analysis.Sample, bool) {
	if r.n == 0 {
		return analysis.Sample{}, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}

// Grow raises the capacity, keeping the samples. It never shrinks.
func (r *Ring) Grow(capacity int) {
	if capacity <= len(r.buf) {
		return
	}
	buf := r.Samples(make([]analysis.Sample, 0, capacity))
	r.buf, r.start = buf[:capacity], 0
}
