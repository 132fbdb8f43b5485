package record

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// chunkLen is how much of a recording a reader holds while it scans: the
// file is read as a stream, so memory does not grow with its size.
const chunkLen = 1 << 20

// window reads a file by chunks, holding one chunk (or one record, when
// a record is larger) at a time.
type window struct {
	src  io.ReaderAt
	size int64
	off  int64  // where buf starts in the file
	buf  []byte // file[off:off+len(buf)]
}

// at returns up to n bytes of the file from pos, fewer at its end (or
// where it cannot be read). The slice is valid until the next call.
func (w *window) at(pos int64, n int) []byte {
	n = int(min(int64(n), w.size-pos))
	if n <= 0 {
		return nil
	}
	if pos >= w.off && pos+int64(n) <= w.off+int64(len(w.buf)) {
		return w.buf[pos-w.off:][:n]
	}
	want := int(min(int64(max(n, chunkLen)), w.size-pos))
	if cap(w.buf) < want {
		w.buf = make([]byte, want)
	}
	got, _ := w.src.ReadAt(w.buf[:want], pos) // a short read is a cut
	w.off, w.buf = pos, w.buf[:got]
	return w.buf[:min(n, got)]
}

// readRecord reads the record at pos: its kind, its payload (valid until
// the window's next read) and where that starts in the file, where the
// next record starts, and whether it is intact.
func readRecord(w *window, pos int64) (kind byte, payload []byte, at, next int64, ok bool) {
	head := w.at(pos, len(syncMark)+1+binary.MaxVarintLen64)
	if len(head) < len(syncMark)+1 || head[0] != syncMark[0] || head[1] != syncMark[1] {
		return 0, nil, 0, 0, false
	}
	n, vw := binary.Uvarint(head[len(syncMark)+1:])
	if vw <= 0 || n > maxRecordLen {
		return 0, nil, 0, 0, false
	}
	start := len(syncMark)
	end := start + 1 + vw + int(n) // where the CRC starts
	rec := w.at(pos, end+4)
	if len(rec) < end+4 || crc32.Checksum(rec[start:end], castagnoli) != binary.LittleEndian.Uint32(rec[end:]) {
		return 0, nil, 0, 0, false
	}
	return rec[start], rec[start+1+vw : end], pos + int64(start+1+vw), pos + int64(end+4), true
}

// nextIntact finds the first intact record after pos and counts the sync
// marks in between that begin none (pos's own included).
func nextIntact(w *window, pos int64) (next int64, marks int) {
	if b := w.at(pos, len(syncMark)); bytes.Equal(b, syncMark[:]) {
		marks++
	}
	for i := pos + 1; i < w.size; {
		chunk := w.at(i, chunkLen)
		if len(chunk) < len(syncMark) {
			break
		}
		j := bytes.Index(chunk, syncMark[:])
		if j < 0 {
			i += int64(len(chunk) - len(syncMark) + 1) // a mark may straddle the chunk's end
			continue
		}
		if _, _, _, _, ok := readRecord(w, i+int64(j)); ok {
			return i + int64(j), marks
		}
		marks++
		i += int64(j) + 1
	}
	return w.size, marks
}
