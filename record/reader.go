package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/safetext"
)

// Recording is a recording read back: its header, the index of its
// frames and ticks, and what was lost to damage. Frames are decoded on
// demand with a Cursor.
type Recording struct {
	Header Header
	// Damage says what could not be read.
	Damage Damage
	// InProgress is true when a recorder still holds the file: its tail
	// may be a record being written, not damage.
	InProgress bool

	w         *window  // the file, read by chunks while indexing
	file      *os.File // nil for Parse
	limits    Limits
	path      string        // as given to Open, safe to draw; "" for Parse
	refused   error         // why the recording cannot be read within limits
	start     int64         // Header.Start in UnixNano
	frames    [][]frameMeta // per target, in file order, decodable ones only
	infos     [][]Frame     // the same, for callers
	ticks     []Tick
	synthetic bool
	keep      time.Duration // how far back a made-up evaluation sees (Cut)
	end       int64         // the newest time in the file
}

// Frame describes one intact, decodable frame.
type Frame struct {
	Seq    int64
	Time   time.Time
	Failed bool // the scrape failed: the frame holds its error, no page
}

// Damage is what a reader could not use.
type Damage struct {
	// Records is how many records were damaged (bad checksum, cut, or
	// nonsense inside).
	Records int
	// Bytes is how many bytes they spanned.
	Bytes int
	// Skipped is how many intact frames could not be decoded because a
	// frame they depend on was damaged (until the target's next key frame).
	Skipped int
	// Tail is true when the damage runs to the end of the file: a cut.
	Tail bool
	// At is the time of the newest intact record before the first damage.
	At time.Time
}

// Any reports whether anything was lost.
func (d Damage) Any() bool { return d.Records > 0 || d.Skipped > 0 }

// String says what was lost, for the user: "recording ends at 03:12:41:
// 1 frame damaged".
func (d Damage) String() string {
	if !d.Any() {
		return ""
	}
	var parts []string
	if d.Records > 0 {
		parts = append(parts, plural(d.Records, "frame")+" damaged ("+plural(d.Bytes, "byte")+")")
	}
	if d.Skipped > 0 {
		parts = append(parts, plural(d.Skipped, "intact frame")+" skipped until the next key frame")
	}
	where := "damage after " + d.At.Format(human.Clock)
	if d.Tail && d.Skipped == 0 {
		where = "recording ends at " + d.At.Format(human.Clock)
	}
	return where + ": " + strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Open reads the recording at path within the default Limits. The error
// is an *Error.
func Open(path string) (*Recording, error) { return OpenWithin(path, Limits{}) }

// OpenWithin reads the recording at path within limits: a frame whose
// page would pass them refuses the recording (ExitData), naming the frame
// and the bound. The error is an *Error.
func OpenWithin(path string, limits Limits) (*Recording, error) {
	// O_NONBLOCK: opening a named pipe must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, usageErr("", err)
	}
	st, err := f.Stat()
	if err == nil {
		err = notAFile(st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, usageErr(path, err)
	}
	// A recorder holds an exclusive lock while it writes.
	inProgress := errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	rec, err := parse(f, st.Size(), limits)
	if err != nil {
		f.Close()
		var re *Error
		if errors.As(err, &re) {
			re.Path = path
		}
		return nil, err
	}
	rec.file, rec.InProgress, rec.path = f, inProgress, safetext.Sanitize(path)
	return rec, nil
}

// Close closes the recording's file. Its cursors cannot be used after.
func (r *Recording) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// notAFile says why what has mode m cannot be read as a recording: a
// reader goes back and forth in it, which only a regular file allows.
func notAFile(m os.FileMode) error {
	what := ""
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("a directory, not a recording")
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&os.ModeDevice != 0:
		what = "a device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	default:
		what = "not a regular file"
	}
	return errors.New(what + ", not a file: a recording is read from a file (save the stream to one first)")
}

// parse reads the recording of size bytes in src as a stream, keeping
// only its index: frames are read back from src when decoded.
func parse(src io.ReaderAt, size int64, limits Limits) (*Recording, error) {
	rec := &Recording{w: &window{src: src, size: size}, limits: limits.withDefaults()}
	pos, err := rec.readHeader(rec.readPrefix())
	if err != nil {
		return nil, err
	}
	rec.scan(pos)
	rec.w.buf = nil // frames are read back by the cursor, each into its own buffer
	if rec.refused != nil {
		return nil, dataErr("", rec.refused)
	}
	rec.index()
	return rec, nil
}

// readPrefix checks the magic and the format version, and returns what is
// wrong with them. readHeader decides: a prefix that is not a recording's
// is forgiven when a header follows, as one damaged byte there must not
// lose the recording.
func (r *Recording) readPrefix() *Error {
	d := r.w.at(0, prefixLen)
	var bad *Error
	switch {
	case len(d) == 0, len(d) < len(magic) && bytes.HasPrefix(magic[:], d):
		bad = dataErr("", ErrEmpty) // cut inside the magic: nothing was recorded
	case !bytes.HasPrefix(d, magic[:]):
		bad = usageErr("", ErrNotRecording)
	case len(d) < prefixLen:
		bad = dataErr("", ErrEmpty)
	default:
		switch v := int(binary.LittleEndian.Uint16(d[len(magic):])); {
		case v == 0:
			bad = usageErr("", ErrNotRecording)
		case v > FormatVersion:
			bad = dataErr("", newerFormat(v))
		default:
			return nil
		}
	}
	return bad
}

// readHeader reads the header record, which comes first, or its first
// intact copy when that one is damaged. It returns where the records to
// scan start. bad is what is wrong with the prefix: without a header
// after it, the file is not a recording (or an empty or newer one).
func (r *Recording) readHeader(bad *Error) (int64, error) {
	pos, limit := int64(prefixLen), r.w.size
	if bad != nil {
		if errors.Is(bad, ErrEmpty) {
			return 0, bad
		}
		// Not a recording, unless a header comes within the first frame.
		limit = min(limit, 2*(maxRecordLen+int64(prefixLen)))
	} else if pos >= r.w.size {
		return 0, dataErr("", ErrEmpty)
	}
	next, err := r.findHeader(pos, limit)
	switch {
	case err != nil && bad != nil:
		return 0, bad
	case err != nil:
		return 0, err
	case bad != nil:
		r.Damage.Records, r.Damage.Bytes = 1, prefixLen
	}
	if r.Header.Format > FormatVersion {
		return 0, dataErr("", newerFormat(r.Header.Format))
	}
	if len(r.Header.Targets) == 0 {
		return 0, dataErr("", ErrNoTargets)
	}
	if r.Header.Interval <= 0 {
		r.Header.Interval = time.Second
	}
	r.Header.sanitize()
	r.start = r.Header.Start.UnixNano()
	r.end = r.start
	r.frames = make([][]frameMeta, len(r.Header.Targets))
	if r.Damage.Records > 0 {
		r.Damage.At = r.timeOf(r.start)
	}
	return next, nil
}

// findHeader reads the header at pos or, when it is damaged, the first
// intact copy after it (from then on the scan counts the damage).
func (r *Recording) findHeader(pos, limit int64) (next int64, err error) {
	if kind, payload, _, next, ok := readRecord(r.w, pos); ok && kind == kindHeader {
		return next, r.unmarshalHeader(payload)
	}
	for p := pos; p < limit; {
		kind, payload, _, next, ok := readRecord(r.w, p)
		switch {
		case !ok:
			p, _ = nextIntact(r.w, p)
		case kind == kindCopy:
			return pos, r.unmarshalHeader(payload)
		default:
			p = next
		}
	}
	return 0, dataErr("", ErrNoHeader)
}

func (r *Recording) unmarshalHeader(payload []byte) error {
	var c countTargets
	if json.Unmarshal(payload, &c) == nil && c.Targets > MaxTargets {
		return dataErr("", tooManyTargets(int(c.Targets)))
	}
	if err := json.Unmarshal(payload, &r.Header); err != nil {
		return dataErr("", fmt.Errorf("%w: %v", ErrNoHeader, err))
	}
	return nil
}

// scan reads every record after the header, resynchronising on the next
// intact record after damage.
func (r *Recording) scan(pos int64) {
	for pos < r.w.size && r.refused == nil {
		kind, payload, at, next, ok := readRecord(r.w, pos)
		if ok && r.use(kind, payload, at) {
			pos = next
			continue
		}
		pos = r.skipDamage(pos)
	}
}

// skipDamage finds the next intact record after the damaged one at pos,
// counts what lies between, and returns where to go on.
func (r *Recording) skipDamage(pos int64) int64 {
	if r.Damage.Records == 0 {
		r.Damage.At = r.timeOf(r.end)
	}
	next, marks := nextIntact(r.w, pos)
	r.Damage.Records += max(1, marks)
	r.Damage.Bytes += int(next - pos)
	r.Damage.Tail = next == r.w.size
	return next
}

// use indexes one intact record; false means its content makes no sense
// (counted as damage).
func (r *Recording) use(kind byte, payload []byte, at int64) bool {
	switch kind {
	case kindFrame:
		return r.useFrame(payload, at)
	case kindTick:
		return r.useTick(payload)
	case kindHeader:
		return false // a second header: not written by a recorder
	case kindCopy:
		return true // the header's copy: read by findHeader when needed
	}
	return true // an unknown kind from a newer minor change: skipped
}

// timeOf turns a stored UnixNano into a time in the local zone, as live
// mode stamps its samples.
func (r *Recording) timeOf(ns int64) time.Time { return time.Unix(0, ns) }
