package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
)

// fuzzLimits are the bounds the fuzzer reads within: a page cap of 2 MiB
// keeps each input's decoding cheap.
var fuzzLimits = Limits{MaxMemory: 32 << 20}

// FuzzReadRecording feeds the reader arbitrary bytes: it must never
// panic, and whatever it accepts must decode without panicking either,
// each frame to no more than the page cap whatever the file's size (a
// zstd bomb of a few KiB decodes to megabytes), with no more than the
// cursor's share held between frames. The seeds hold bombs: a frame
// stating a page over the cap, one stating less than its zstd frame,
// one decoding past what it states without saying so, and one at the cap.
func FuzzReadRecording(f *testing.F) {
	path := tempPath(f)
	recordFleet(f, path, simFleet(f, sim.Options{Replicas: 2, Scenario: sim.Mixed}), 6, time.Second, Options{KeyEvery: 3})
	good := readFile(f, path)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:prefixLen+40])
	f.Add([]byte{})
	f.Add(magic[:])
	bomb := commentPage(8 << 20)
	f.Add(forged(f, 2, forgedFrame{seq: 1, page: bomb}))
	f.Add(forged(f, 2, forgedFrame{seq: 1, page: bomb, stated: 4 << 10}))
	f.Add(forged(f, 2, forgedFrame{seq: 1, page: bomb, stated: 64 << 10, unsized: true}, forgedFrame{target: 1, seq: 1, page: bomb, stated: 1 << 20, unsized: true}))
	f.Add(forged(f, 2, forgedFrame{seq: 1, page: commentPage(fuzzLimits.pageCap() - 64)}, forgedFrame{target: 1, seq: 1, page: commentPage(1 << 20)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := parse(bytes.NewReader(data), int64(len(data)), fuzzLimits)
		if err != nil {
			return
		}
		_ = rec.Damage.String()
		cur := NewCursor(rec)
		defer cur.Close()
		for ti := range rec.Targets() {
			for i := range rec.Frames(ti) {
				cur.Sample(ti, i)
				if n := len(cur.last[ti].content); n > fuzzLimits.pageCap() {
					t.Fatalf("frame %d of target %d decoded to %d bytes, past the page cap %d (a file of %d bytes)", i, ti, n, fuzzLimits.pageCap(), len(data))
				}
				if cur.held > fuzzLimits.heldCap() {
					t.Fatalf("the cursor holds %d bytes, past its %d", cur.held, fuzzLimits.heldCap())
				}
			}
		}
		for _, tk := range rec.Ticks() {
			for ti := range rec.Targets() {
				rec.Span(ti, rec.Cut(tk, ti))
			}
		}
	})
}
