package scrape

import (
	"math/bits"
	"sync"
)

// The buffers pages are read into come in classes of eight sizes to a
// power of two (4 KB, 4.5 KB, 5 KB … 7.5 KB, 8 KB, 9 KB …): a page's
// buffer is at most an eighth larger than the page, where a power of two
// made the 296 KB page of eight engines a 512 KB buffer and a 43 KB page
// of one a 64 KB one, held from each fetch to its sample.
const (
	minShift, maxShift = 12, 22
	minBuffer          = 1 << minShift // the first buffer of a target, whose page size is not known yet, grown as the page needs
	maxPooledBuffer    = 1 << maxShift // the largest buffer kept for another scrape: one huge page must not pin its buffer for hours
	stepsPerDouble     = 8
	firstClass         = (minShift - 3) * stepsPerDouble // minBuffer's (8 << 9) index among every class's
)

// pageBuffers are the buffers pages are read into, shared by a poller's
// targets. A target holds one only from its fetch until its sample is in:
// with fifty simulated replicas on two cores, at most a dozen scrapes
// were between reading a body and pushing its sample at one time, while a
// buffer kept by every target (some 48 KB of vLLM page each) held about
// 2.5 MB. The buffers are pooled by size class, so that a fleet's one
// large page (a router's) does not make every buffer its size; a
// sync.Pool drops those left unused over two collections, so a burst (the
// first round, a Refresh) does not stay.
type pageBuffers struct {
	classes [(maxShift-minShift)*stepsPerDouble + 1]sync.Pool // each class's buffers, minBuffer's to maxPooledBuffer's
}

// bufferClass returns the smallest class size of at least n bytes (n
// rounded up to an eighth of its power of two) and the class's index in
// pageBuffers.classes, meaningful from minBuffer up.
func bufferClass(n int) (size, class int) {
	shift := max(bits.Len(uint(n))-4, 0) // n>>shift is in [8, 16)
	m := (n + 1<<shift - 1) >> shift     // in [8, 16]: 16 is the next power's first class
	return m << shift, shift*stepsPerDouble + m - stepsPerDouble - firstClass
}

// get returns an empty buffer with room for more than size bytes: the
// size of the target's last page. A page larger than the pool keeps is
// read from the smallest buffer each time, grown as it is read, so that
// each buffer it needs is counted in the pages' budget before it is made:
// sixteen targets each handed their last 16 MiB page's size at once held
// 256 MiB before any was counted.
func (b *pageBuffers) get(size int) *[]byte {
	n, c := bufferClass(minBuffer)
	if size < maxPooledBuffer {
		n, c = bufferClass(max(size+1, minBuffer))
	}
	if buf, ok := b.classes[c].Get().(*[]byte); ok {
		return buf
	}
	buf := make([]byte, 0, n)
	return &buf
}

// put gives buf back for another scrape, unless its capacity is not a
// class's (one cut to --max-body) or is outside the pool's. Its content
// must no longer be used.
func (b *pageBuffers) put(buf *[]byte) {
	size, c := bufferClass(cap(*buf))
	if size != cap(*buf) || size < minBuffer || size > maxPooledBuffer {
		return
	}
	*buf = (*buf)[:0]
	b.classes[c].Put(buf)
}
