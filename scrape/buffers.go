package scrape

import (
	"math/bits"
	"sync"
)

// maxPooledBuffer is the largest page buffer kept for another scrape
// (4 MB): one huge page must not pin its buffer for hours.
const (
	maxPooledClass  = 22
	maxPooledBuffer = 1 << maxPooledClass
)

// pageBuffers are the buffers pages are read into, shared by a poller's
// targets. A target holds one only from its fetch until its sample is in:
// with fifty simulated replicas on two cores, at most a dozen scrapes
// were between reading a body and pushing its sample at one time, while a
// buffer kept by every target (some 48 KB of vLLM page each) held about
// 2.5 MB. The buffers are pooled by size, in powers of two, so that a
// fleet's one large page (a router's) does not make every buffer its size;
// a sync.Pool drops those left unused over two collections, so a burst
// (the first round, a Refresh) does not stay.
type pageBuffers struct {
	// classes[c] holds buffers of a capacity of at least 1<<c bytes and
	// less than 2<<c.
	classes [maxPooledClass + 1]sync.Pool
}

// minBufferClass is the class of the first buffer of a target, whose page
// size is not known yet: 4 KB, grown as the page needs.
const minBufferClass = 12

// get returns an empty buffer with room for more than size bytes: the
// size of the target's last page. A page larger than the pool keeps is
// read from the smallest buffer each time, grown as it is read, so that
// each buffer it needs is counted in the pages' budget before it is made:
// sixteen targets each handed their last 16 MiB page's size at once held
// 256 MiB before any was counted.
func (b *pageBuffers) get(size int) *[]byte {
	c := minBufferClass
	if size < maxPooledBuffer {
		c = max(bits.Len(uint(size)), minBufferClass)
	}
	if buf, ok := b.classes[c].Get().(*[]byte); ok {
		return buf
	}
	buf := make([]byte, 0, 1<<c)
	return &buf
}

// put gives buf back for another scrape, unless it is larger than
// maxPooledBuffer. Its content must no longer be used.
func (b *pageBuffers) put(buf *[]byte) {
	if cap(*buf) == 0 || cap(*buf) > maxPooledBuffer {
		return
	}
	*buf = (*buf)[:0]
	b.classes[bits.Len(uint(cap(*buf)))-1].Put(buf)
}
