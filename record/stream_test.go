package record

import (
	"os"
	"runtime"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

// TestLargeFileBoundedMemory: a recording followed by a long stretch of
// zeros (a sparse file of 1 GiB) opens and replays its frames with the
// heap bounded, whatever the file's size: the file is read as a stream,
// never whole.
func TestLargeFileBoundedMemory(t *testing.T) {
	testutil.SkipShort(t, "a sparse file of 1 GiB read through")
	path, fed := smallRecording(t)
	intact, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	for _, tt := range []struct {
		name     string
		size     int64
		maxAlloc uint64 // bytes allocated, all told, to open and read every frame
	}{
		{"as recorded", 0, 32 << 20},
		{"a sparse GiB of zeros after it", size, 32 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.size > 0 {
				if err := os.Truncate(path, tt.size); err != nil {
					t.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rec, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			c := NewCursor(rec)
			defer c.Close()
			frames := 0
			for tg := range rec.Targets() {
				for i := range rec.Frames(tg) {
					if s := c.Sample(tg, i); !s.OK() {
						t.Fatalf("frame %d of target %d: %s", i, tg, s.Err)
					}
					frames++
				}
			}
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d frames of %d; %d MiB allocated", frames, len(fed), alloc>>20)
			if frames != len(fed) || len(rec.Ticks()) != len(intact.Ticks()) {
				t.Errorf("%d frames and %d ticks, want %d and %d", frames, len(rec.Ticks()), len(fed), len(intact.Ticks()))
			}
			if alloc > tt.maxAlloc {
				t.Errorf("%d MiB allocated, want at most %d", alloc>>20, tt.maxAlloc>>20)
			}
		})
	}
}
