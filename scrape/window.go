package scrape

import "github.com/vtop-dev/vtop/catalogue"

// windowSlack is how many samples a window takes beyond its capacity
// before it must move them back to the front of its buffer: room for the
// pushes between two reads (one per interval, and a Refresh or two).
const windowSlack = 4

// sampleWindow is one target's newest samples up to a capacity, oldest
// first, kept in order in one buffer so that View can lend them to the
// analysis instead of copying them. A sample is some 1.2 KB of struct; a
// ring beside the monitor's copy of it held each target's window twice,
// about 4 MB for fifty targets and a thirty-second window, and the copy
// was remade every interval. Pushes write past the values lent, and a
// push that finds no room moves the values to a new buffer while they are
// lent, so a View stays as it was until the next View. Not safe for
// concurrent use: its owner guards it.
type sampleWindow struct {
	buf        []catalogue.Sample // capacity + windowSlack
	start, end int                // buf[start:end] are the values
	capacity   int
	// lent is set while the last View may still be read: buf[:end] must
	// not change, so the values move to a new buffer if they must move.
	lent bool
}

// newSampleWindow returns an empty window of at most capacity samples (at
// least one).
func newSampleWindow(capacity int) *sampleWindow {
	capacity = max(capacity, 1)
	return &sampleWindow{buf: make([]catalogue.Sample, capacity+windowSlack), capacity: capacity}
}

// Len returns how many samples the window holds.
func (w *sampleWindow) Len() int { return w.end - w.start }

// Cap returns the capacity.
func (w *sampleWindow) Cap() int { return w.capacity }

// Push adds a sample, dropping the oldest when full, its histograms
// marked against the newest good sample (MarkRising). The slot of the
// sample dropped is cleared when the values next move: a View may still
// be reading it.
func (w *sampleWindow) Push(s catalogue.Sample) {
	s.MarkRising(w.lastGood())
	if w.end == len(w.buf) {
		w.move(len(w.buf))
	}
	w.buf[w.end] = s
	w.end++
	if w.end-w.start > w.capacity {
		w.start++
	}
}

// lastGood returns the newest good sample, nil when there is none.
func (w *sampleWindow) lastGood() *catalogue.Sample {
	for i := w.end - 1; i >= w.start; i-- {
		if w.buf[i].OK() {
			return &w.buf[i]
		}
	}
	return nil
}

// View returns the samples, oldest first, in the window's own buffer:
// they stay as they are until the next View, which may move them, however
// many Push calls come in between. The caller must not modify them.
func (w *sampleWindow) View() []catalogue.Sample {
	w.lent = false // the previous view is no longer read
	if w.start > 0 {
		w.move(len(w.buf))
	}
	w.lent = true
	return w.buf[:w.end:w.end]
}

// Grow raises the capacity, keeping the samples. It never shrinks.
func (w *sampleWindow) Grow(capacity int) {
	if capacity <= w.capacity {
		return
	}
	w.capacity = capacity
	w.move(capacity + windowSlack)
}

// move puts the values at the front of a buffer of size samples: the
// same buffer when it keeps that size and no View is lent, a new one
// otherwise. The slots the values leave are cleared, so that the samples
// dropped do not hold their histograms.
func (w *sampleWindow) move(size int) {
	buf := w.buf
	if w.lent || size != len(w.buf) {
		buf = make([]catalogue.Sample, size)
		w.lent = false
	}
	n := copy(buf, w.buf[w.start:w.end])
	if &buf[0] == &w.buf[0] {
		clear(buf[n:w.end])
	}
	w.buf, w.start, w.end = buf, 0, n
}
