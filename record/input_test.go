package record

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUnreadableInputRefused: what is not a regular file (a named pipe,
// a shell's <(…), a device) is refused at once with what it is, never
// waited on nor called an empty recording.
func TestUnreadableInputRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rec.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tests := []struct {
		name, path, want string
	}{
		{"named pipe", fifo, "a named pipe, not a file"},
		{"a shell's <(cat file)", "/dev/fd/" + strconv.Itoa(int(r.Fd())), "a named pipe, not a file"},
		{"a device", os.DevNull, "a device, not a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Open(tt.path); done <- err }()
			select {
			case err := <-done:
				if ExitCode(err, 1) != ExitUsage || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrEmpty) {
					t.Errorf("error %v (exit %d), want %q and exit %d", err, ExitCode(err, 1), tt.want, ExitUsage)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Open(%s) still waiting after 5 s", tt.path)
			}
		})
	}
}

// withTicks returns an intact recording of 2 targets with one tick after
// each round of frames.
func withTicks(t *testing.T) []byte {
	data := readFile(t, mustSmall(t))
	rec, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data...)
	for i, f := range rec.Frames(1) {
		tk := Tick{Time: f.Time, Window: 5 * time.Second, Cuts: []Cut{{Seq: rec.Frames(0)[i].Seq, Count: 1}, {Seq: f.Seq, Count: 1}}}
		out = appendRecord(out, kindTick, appendTick(nil, tk, rec.Header.Start))
	}
	return out
}

func mustSmall(t *testing.T) string { p, _ := smallRecording(t); return p }

// TestDuplicatedChunk: a stretch of the file copied again (frames and
// ticks) never makes time go backwards; the copy counts as damage.
func TestDuplicatedChunk(t *testing.T) {
	data := withTicks(t)
	ends, _, _ := recordEnds(t, data)
	n := len(ends)
	for _, c := range []struct {
		name     string
		from, to int
	}{
		{"ticks copied", ends[n-20], ends[n-10]},
		{"frames copied", ends[5], ends[15]},
		{"frames and ticks copied", ends[n-40], ends[n-5]},
	} {
		t.Run(c.name, func(t *testing.T) {
			dup := append(append(append([]byte(nil), data[:c.to]...), data[c.from:c.to]...), data[c.to:]...)
			rec, err := Parse(dup)
			if err != nil {
				t.Fatal(err)
			}
			ticks := rec.Ticks()
			for i := 1; i < len(ticks); i++ {
				if !ticks[i].Time.After(ticks[i-1].Time) {
					t.Fatalf("tick %d at %v after one at %v", i, ticks[i].Time, ticks[i-1].Time)
				}
			}
			if !rec.Damage.Any() {
				t.Errorf("the copy went unreported")
			}
		})
	}
}
