package scrape

import (
	"bytes"
	"context"
	"testing"
)

// Whatever buffers were given back, get returns an empty one with room
// for more than the size asked, and not an eighth more than it needs: a
// page as large as the target's last one is read without growing it, and
// its buffer held between its fetch and its sample is not much larger
// than the page. A page larger than the pool keeps gets the smallest
// buffer: the buffers it grows into are counted in the pages' budget
// before they are made.
func TestPageBuffersRoomForTheLastPage(t *testing.T) {
	var b pageBuffers
	sizes := []int{0, 1, 4095, 4096, 42_632, 65_535, 65_536, 100_000, 1 << 21, maxPooledBuffer - 1, maxPooledBuffer, 9 << 20}
	for round := range 3 {
		for _, size := range sizes {
			buf := b.get(size)
			want, most := size+1, max(size+1+(size+1)/8, minBuffer)
			if size >= maxPooledBuffer {
				want, most = minBuffer, minBuffer
			}
			if len(*buf) != 0 || cap(*buf) < want || cap(*buf) > most {
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

// A body is read into a buffer of a class's capacity, the class the pool
// files it under and hands out again for a page of that size; a body whose
// length is announced is read with one allocation, into a buffer not an
// eighth larger than it, and one that is not by doubling a buffer. An
// announcement is a hint only: a server that announces more than it sends,
// or more than the pool keeps, costs no more than its real body.
func TestReadCappedGrowsToPoolClasses(t *testing.T) {
	const limit = 16 << 20
	cases := []struct {
		name     string
		body     int
		size     int64 // Content-Length, -1 when not sent
		maxCap   int   // the largest capacity the read may end with
		oneAlloc bool
	}{
		{"announced", 294_000, 294_000, 294_000 * 9 / 8, true},
		{"announced, a power of two", 1 << 16, 1 << 16, 1<<16 + 1<<13, true},
		{"not announced", 294_000, -1, 1 << 19, false},
		{"empty", 0, 0, 1, true},
		{"announced more than sent", 10_000, 3 << 20, 1 << 22, true},
		{"announced past the pool", 10_000, maxPooledBuffer, 1 << 14, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tc.body)
			got, err := readHeld(context.Background(), bytes.NewReader(body), nil, limit, tc.size, nil)
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("read %d bytes, err %v; want the %d of the body", len(got), err, len(body))
			}
			if c := cap(got); c > tc.maxCap || c >= minBuffer && bufferSize(c, limit) != int64(c) {
				t.Errorf("capacity %d, want a class's up to %d", c, tc.maxCap)
			}
			// A page read by doubling ends in a buffer up to twice its
			// size, left to the pool to drop: the next scrape of it gets
			// one of its class.
			if honest := tc.size == int64(tc.body); honest && tc.body > 0 {
				var b pageBuffers
				b.put(&got)
				if again := b.get(tc.body); cap(*again) != cap(got) {
					t.Errorf("the pool does not hand the buffer out again for a page of %d bytes", tc.body)
				}
			}
			r := bytes.NewReader(body)
			allocs := testing.AllocsPerRun(5, func() {
				r.Reset(body)
				readHeld(context.Background(), r, nil, limit, tc.size, nil)
			})
			if tc.oneAlloc && allocs > 1 {
				t.Errorf("%v allocations, want one", allocs)
			}
		})
	}
}

// A body past the limit fails, announced or not.
func TestReadCappedLimit(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 5000)
	for _, size := range []int64{-1, 5000, 100} {
		if _, err := readHeld(context.Background(), bytes.NewReader(body), nil, 4096, size, nil); err != errTooLarge {
			t.Errorf("Content-Length %d: err %v, want errTooLarge", size, err)
		}
	}
}
