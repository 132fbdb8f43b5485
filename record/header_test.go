package record

import (
	"bytes"
	"fmt"
	"testing"
)

// TestDamagedHeader: one damaged byte anywhere in the prefix or the
// header, or one damaged region from the start of the file, loses at most
// the frames it touches (and those that depend on them until the next key
// frame): the reader takes the header's copy.
func TestDamagedHeader(t *testing.T) {
	path, fed := smallRecording(t)
	data := readFile(t, path)
	w := &window{src: bytes.NewReader(data), size: int64(len(data))}
	_, _, _, headerEnd, _ := readRecord(w, int64(prefixLen))
	ends, _, _ := recordEnds(t, data)
	damage := func(from, to int) []byte {
		bad := append([]byte(nil), data...)
		for i := from; i < to; i++ {
			bad[i] ^= 0x5a
		}
		return bad
	}
	type tc struct {
		name       string
		data       []byte
		wantFrames int
	}
	var cases []tc
	for i := range int(headerEnd) {
		cases = append(cases, tc{fmt.Sprintf("byte %d", i), damage(i, i+1), len(fed)})
	}
	cases = append(cases, tc{"prefix, header and first frame", damage(0, ends[0]), len(fed) - 1})
	for _, c := range cases {
		rec, err := Parse(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Frames after a lost one wait for their target's next key frame.
		n := len(rec.Frames(0)) + len(rec.Frames(1)) + rec.Damage.Skipped
		if n != c.wantFrames || !rec.Damage.Any() {
			t.Fatalf("%s: %d frames, damage %q; want %d frames and the damage said", c.name, n, rec.Damage, c.wantFrames)
		}
	}
}

// withoutCopies returns a recording without the header's copies: as vtop
// wrote before it kept them.
func withoutCopies(t *testing.T, data []byte) []byte {
	t.Helper()
	w := &window{src: bytes.NewReader(data), size: int64(len(data))}
	_, _, _, pos, _ := readRecord(w, int64(prefixLen))
	out := append([]byte(nil), data[:pos]...)
	for pos < int64(len(data)) {
		kind, _, _, next, ok := readRecord(w, pos)
		if !ok {
			t.Fatalf("record at %d unreadable in an intact file", pos)
		}
		if kind != kindCopy {
			out = append(out, data[pos:next]...)
		}
		pos = next
	}
	return out
}

// TestOldRecordingReads: a recording without the header's copies (vtop
// before them) reads as before, frame for frame; only its header has no
// second chance.
func TestOldRecordingReads(t *testing.T) {
	path, fed := smallRecording(t)
	data := readFile(t, path)
	old := withoutCopies(t, data)
	if len(old) == len(data) {
		t.Fatal("the recording has no copy of its header")
	}
	rec, err := Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, rec, wantSamples(fed, 2), nil)
	if rec.Damage.Any() {
		t.Errorf("damage %q in an intact old recording", rec.Damage)
	}
}
