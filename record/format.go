package record

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

// FormatVersion is the version of the file format this package writes. A
// reader refuses a file of a newer version.
const FormatVersion = 1

// magic opens every recording; like PNG's, its first byte is not ASCII
// and it holds a CR LF pair, so a text-mode copy that mangles it shows.
var magic = [8]byte{0x89, 'V', 'T', 'R', '\r', '\n', 0x1a, '\n'}

// prefixLen is the magic plus the little-endian uint16 format version.
const prefixLen = len(magic) + 2

// syncMark starts every record, so that a reader can find the next
// record after a damaged one.
var syncMark = [2]byte{0xd5, 0x7e}

// The record kinds.
const (
	kindHeader byte = 'H' // JSON Header, the first record
	kindFrame  byte = 'F' // one scrape of one target
	kindTick   byte = 'T' // one evaluation: which frames a live report saw
	// kindCopy is a copy of the header, written after the first frame and
	// then every copyEvery bytes, so that a damaged header loses nothing
	// more. Readers before it skip it as an unknown kind.
	kindCopy byte = 'C'
)

// copyEvery is how many bytes of records go between two copies of the
// header.
const copyEvery = 1 << 20

// maxRecordLen bounds one record's payload: a page is capped at 16 MiB by
// the client, and a larger length is damage, not data.
const maxRecordLen = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends one record: sync mark, kind, uvarint payload
// length, payload, then CRC-32C of kind, length and payload. The CRC comes
// last, so a record cut by a crash never checks out.
func appendRecord(dst []byte, kind byte, payload []byte) []byte {
	dst = append(dst, syncMark[:]...)
	start := len(dst)
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Frame flags.
const (
	flagKey     byte = 1 << iota // compressed without a dictionary
	flagPage                     // a page follows (else the fetch failed)
	flagWhole                    // the whole page, not only the families vtop reads
	flagErr                      // the scrape's error follows
	flagColumns                  // the page is split in columns (columns.go)
)

// frameMeta is what the index keeps of one frame: enough to find it,
// order it and decide whether it can be decoded.
type frameMeta struct {
	off, end int   // payload bounds in the file
	seq      int64 // 1 for the target's first frame
	time     int64 // UnixNano
	flags    byte
}

// Tick is one evaluation of live mode: the time of the report and, per
// target, the frames its readings held.
type Tick struct {
	Time   time.Time
	Window time.Duration
	// Cuts are per target, in header order; none for the evaluations a
	// reader makes up (Recording.Cut finds them).
	Cuts []Cut
}

// Cut says which frames of one target a report's readings held: Count
// frames ending with frame Seq (Seq 0: none).
type Cut struct {
	Seq   int64
	Count int
}
