package record

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
)

// FuzzReadRecording feeds the reader arbitrary bytes: it must never
// panic, and whatever it accepts must decode without panicking either.
func FuzzReadRecording(f *testing.F) {
	path := tempPath(f)
	recordFleet(f, path, simFleet(f, sim.Options{Replicas: 2, Scenario: sim.Mixed}), 6, time.Second, Options{KeyEvery: 3})
	good := readFile(f, path)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:prefixLen+40])
	f.Add([]byte{})
	f.Add(magic[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse(data)
		if err != nil {
			return
		}
		_ = rec.Damage.String()
		cur := NewCursor(rec)
		defer cur.Close()
		for ti := range rec.Targets() {
			for i := range rec.Frames(ti) {
				cur.Sample(ti, i)
			}
		}
		for _, tk := range rec.Ticks() {
			for ti, c := range tk.Cuts {
				rec.Span(ti, c)
			}
		}
	})
}
