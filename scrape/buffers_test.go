package scrape

import "testing"

// Whatever buffers were given back, get returns an empty one with room
// for more than the size asked: a page as large as the target's last one
// is read without growing it.
func TestPageBuffersRoomForTheLastPage(t *testing.T) {
	var b pageBuffers
	sizes := []int{0, 1, 4095, 4096, 42_632, 65_535, 65_536, 100_000, 1 << 21, maxPooledBuffer - 1, maxPooledBuffer, 9 << 20}
	for round := range 3 {
		for _, size := range sizes {
			buf := b.get(size)
			if len(*buf) != 0 || cap(*buf) <= size {
				t.Fatalf("round %d: get(%d) = len %d cap %d", round, size, len(*buf), cap(*buf))
			}
			*buf = append(*buf, make([]byte, size)...)
			if round == 1 {
				*buf = append(*buf, make([]byte, size/3+1)...) // a page that grew
			}
			b.put(buf)
		}
	}
}
