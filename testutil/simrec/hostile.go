package simrec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// Bomb describes a zstd-bombed recording: intact records (their checksums
// hold) whose key frames decode to far more than any page, as an attacker
// writes them from the format (record/FORMAT.md), not as vtop records.
type Bomb struct {
	Targets int // targets in the header, each with Frames key frames
	Frames  int
	// Decoded is what each frame's content decodes to: a page of one
	// comment line repeated.
	Decoded int
	// Declared is the decoded size each frame's head states; 0 states the
	// true one.
	Declared int
}

// Write writes the bombed recording and returns its path. The content is
// compressed once, so that a bomb of gigabytes costs the test a second.
func (b Bomb) Write(t testing.TB) string {
	t.Helper()
	const contentType = "text/plain; version=0.0.4"
	line := "# " + string(bytes.Repeat([]byte("x"), 1021)) + "\n"
	keys := bytes.Repeat([]byte(line), max(1, (b.Decoded-len(contentType)-16)/len(line)))
	content := append([]byte(contentType+"\n"), binary.AppendUvarint(nil, uint64(len(keys)))...)
	content = append(content, keys...)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	zst := enc.EncodeAll(content, nil)
	declared := b.Declared
	if declared == 0 {
		declared = len(content)
	}
	h := record.Header{Format: record.FormatVersion, Vtop: "bomb", Start: Start, Interval: time.Second, All: true, KeyEvery: 1}
	for i := range b.Targets {
		name := fmt.Sprintf("127.0.%d.%d:8000", i/250, i%250+1)
		h.Targets = append(h.Targets, record.Target{Name: name, URL: "http://" + name + "/metrics"})
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte("\x89VTR\r\n\x1a\n"), 1, 0) // the magic and format version 1
	out = appendRecord(out, 'H', js)
	const flags = 1 | 2 | 4 | 16 // a key frame, a page follows, the whole page, in columns
	for f := range b.Frames {
		for tg := range b.Targets {
			p := binary.AppendUvarint(nil, uint64(tg))
			p = binary.AppendUvarint(p, uint64(f+1))
			p = binary.AppendVarint(p, int64(time.Duration(f+1)*time.Second))
			p = append(p, flags)
			p = binary.AppendUvarint(p, uint64(declared))
			out = appendRecord(out, 'F', append(p, zst...))
		}
	}
	path := filepath.Join(t.TempDir(), "bomb.vtrec")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
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

// ManyTargets records, as vtop record does, one scrape of a simulated
// replica under a header that lists n targets, and returns its path.
func ManyTargets(t testing.TB, n int) string {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	targets := make([]scrape.Target, n)
	for i := range targets {
		name := fmt.Sprintf("10.%d.%d.%d:8000", i>>16, (i>>8)&255, i&255)
		targets[i] = scrape.Target{Name: name, URL: "http://" + name + "/metrics"}
	}
	path := filepath.Join(t.TempDir(), "many.vtrec")
	rec, err := record.Create(path, record.Options{Targets: targets, Interval: time.Second, Start: Start})
	if err != nil {
		t.Fatal(err)
	}
	body, err := fleet.Replicas()[0].Render(expfmt.NewFormat(expfmt.TypeTextPlain))
	if err != nil {
		t.Fatal(err)
	}
	rec.Page(scrape.Page{Target: targets[0], Time: Start.Add(time.Second), Body: body, ContentType: "text/plain; version=0.0.4"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
