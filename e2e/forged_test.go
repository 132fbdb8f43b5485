package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// forged describes a recording written from the format
// (record/FORMAT.md) as an attacker writes it, not as vtop records: its
// records are intact (their checksums hold), and what they hold is what
// the fields say. Its frames are key frames, each holding Page (or, when
// Page is nil, a page of one comment line repeated to Decoded bytes: a
// zstd bomb).
type forged struct {
	Targets int // listed in the header
	Framed  int // how many of them, the first, have frames (0: all)
	Frames  int // frames of each
	Page    []byte
	Decoded int
	// Declared is the decoded size each frame's head states; 0 states the
	// true one.
	Declared int
	// Unsized leaves the content's size out of its zstd frame, so that
	// nothing but decoding it tells how large it is.
	Unsized bool
}

// Write writes the recording and returns its path. A frame's content is
// compressed once, so that a bomb of gigabytes costs the test a second.
func (f forged) Write(t testing.TB) string {
	t.Helper()
	content := f.content()
	zst := compress(t, content, f.Unsized)
	declared := f.Declared
	if declared == 0 {
		declared = len(content)
	}
	out := append([]byte("\x89VTR\r\n\x1a\n"), 1, 0) // the magic and format version 1
	out = appendRecord(out, 'H', f.header(t))
	framed := f.Targets
	if f.Framed > 0 {
		framed = f.Framed
	}
	const flags = 1 | 2 | 4 | 16 // a key frame, a page follows, the whole page, in columns
	for n := range f.Frames {
		for tg := range framed {
			p := binary.AppendUvarint(nil, uint64(tg))
			p = binary.AppendUvarint(p, uint64(n+1))
			p = binary.AppendVarint(p, int64(time.Duration(n+1)*time.Second))
			p = append(p, flags)
			p = binary.AppendUvarint(p, uint64(declared))
			out = appendRecord(out, 'F', append(p, zst...))
		}
	}
	path := filepath.Join(t.TempDir(), "forged.vtrec")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// forgedContentType is the content type of a forged frame's page.
const forgedContentType = "text/plain; version=0.0.4"

// content is a frame's content: the page (f.Page, or comment lines of
// about f.Decoded bytes) as its column of keys, with no values: the lines
// of a page that end in no space or tab are kept whole in it.
func (f forged) content() []byte {
	page := f.Page
	if page == nil {
		line := "# " + string(bytes.Repeat([]byte("x"), 1021)) + "\n"
		page = bytes.Repeat([]byte(line), max(1, (f.Decoded-len(forgedContentType)-16)/len(line)))
	}
	content := append([]byte(forgedContentType+"\n"), binary.AppendUvarint(nil, uint64(len(page)))...)
	return append(content, page...)
}

// compress is content in a zstd frame, whose head leaves its size out
// when unsized.
func compress(t testing.TB, content []byte, unsized bool) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if !unsized {
		return enc.EncodeAll(content, nil)
	}
	// A stream's encoder does not know the size it will write.
	var b bytes.Buffer
	enc.Reset(&b)
	_, err = enc.Write(content)
	if err = errors.Join(err, enc.Close()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// header is the recording's header, in JSON: f.Targets loopback targets.
func (f forged) header(t testing.TB) []byte {
	h := record.Header{Format: record.FormatVersion, Vtop: "forged", Start: simrec.Start, Interval: time.Second, All: true, KeyEvery: 1}
	for i := range f.Targets {
		name := fmt.Sprintf("127.%d.%d.%d:8000", i>>16, (i>>8)&255, i&255+1)
		h.Targets = append(h.Targets, record.Target{Name: name, URL: "http://" + name + "/metrics"})
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// simulatedPage is the page of a healthy simulated replica.
func simulatedPage(t testing.TB) []byte {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	body, err := fleet.Replicas()[0].Render(expfmt.NewFormat(expfmt.TypeTextPlain))
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// appendRecord appends one record as the format lays it out: sync mark,
// kind, uvarint length, payload, CRC-32C of kind, length and payload.
func appendRecord(dst []byte, kind byte, payload []byte) []byte {
	dst = append(dst, 0xd5, 0x7e)
	start := len(dst)
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], crc32.MakeTable(crc32.Castagnoli)))
}
