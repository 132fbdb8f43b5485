package record

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
)

// DefaultKeyEvery is how many frames of a target go between two key
// frames: a seek decodes at most this many, and damage costs at most this
// many frames of one target.
const DefaultKeyEvery = 60

// ErrMaxSize ends a recording that reached Options.MaxBytes.
var ErrMaxSize = errors.New("the recording reached its maximum size")

// Options configure a Recorder.
type Options struct {
	// Vtop is the version of vtop, kept in the header.
	Vtop string
	// Interval is the scrape interval.
	Interval time.Duration
	// Targets are the targets in the order the poller was given them.
	Targets []scrape.Target
	// Args are the command-line arguments, kept in the header.
	Args []string
	// All keeps whole pages instead of the families vtop reads.
	All bool
	// KeyEvery is the key-frame distance (default DefaultKeyEvery).
	KeyEvery int
	// MaxBytes stops recording before the file would grow past it
	// (0: no limit).
	MaxBytes int64
	// Config is the analysis configuration of live mode.
	Config analysis.Config
	// Start is the recording's time origin (default: now).
	Start time.Time
}

// Recorder appends scrapes and evaluations to a recording. Page and Tap
// are safe for concurrent use; each record reaches the file in one write
// as soon as it is made, so a killed recorder leaves every complete
// record readable.
type Recorder struct {
	path     string
	start    time.Time
	keyEvery int
	all      bool
	maxBytes int64
	index    map[string]int // target URL → index in the header
	byName   map[string]int // target name → index in the header
	targets  []*targetEnc   // one per target, used by its goroutine only

	mu     sync.Mutex // guards everything below
	file   *os.File
	size   int64
	err    error // why recording stopped; nil while it runs
	done   chan struct{}
	frames int64
	buf    []byte
	copy   []byte // the header's copy record
	copyAt int64  // the size after which the next copy is written
}

// Create starts a recording in a new file at path and writes its header.
// The file must not exist: O_EXCL makes sure a recording is never
// overwritten, not even by a second recorder started on the same name at
// the same instant. The recorder also holds an exclusive flock on the file
// while it writes, so that a reader can tell a recording still in progress
// (whose tail is being written) from one that was cut.
func Create(path string, opts Options) (*Recorder, error) {
	if len(opts.Targets) == 0 {
		return nil, usageErr(path, ErrNoTargets)
	}
	if len(opts.Targets) > MaxTargets {
		return nil, usageErr(path, fmt.Errorf("%d targets, more than a recording may hold (%d): its readers would refuse it", len(opts.Targets), MaxTargets))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, usageErr(path, errors.New("file exists: a recording is never overwritten; choose another name"))
		}
		return nil, usageErr("", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, usageErr(path, fmt.Errorf("locked by another recorder: %w", err))
	}
	r := newRecorder(path, f, opts)
	if err := r.writeHeader(opts); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func newRecorder(path string, f *os.File, opts Options) *Recorder {
	if opts.KeyEvery <= 0 {
		opts.KeyEvery = DefaultKeyEvery
	}
	if opts.Start.IsZero() {
		opts.Start = time.Now()
	}
	r := &Recorder{
		path: path, file: f, start: opts.Start, keyEvery: opts.KeyEvery, all: opts.All,
		maxBytes: opts.MaxBytes, index: make(map[string]int), byName: make(map[string]int), done: make(chan struct{}),
	}
	for i, t := range opts.Targets {
		r.index[t.URL] = i
		r.byName[t.Name] = i
		r.targets = append(r.targets, &targetEnc{index: i})
	}
	return r
}

// writeHeader writes the prefix and the header record.
func (r *Recorder) writeHeader(opts Options) error {
	h := Header{
		Format: FormatVersion, Vtop: opts.Vtop, Start: r.start, Interval: opts.Interval,
		Args: opts.Args, All: opts.All, KeyEvery: r.keyEvery, Config: opts.Config,
	}
	for _, t := range opts.Targets {
		// A target's address may hold a server's text (a store's
		// instance label): vtop's secrets are not kept.
		h.Targets = append(h.Targets, Target{Name: safetext.Redact(t.Name), URL: safetext.Redact(t.URL)})
	}
	js, err := json.Marshal(h)
	if err != nil {
		return err
	}
	b := append(magic[:0:0], magic[:]...)
	b = binary.LittleEndian.AppendUint16(b, FormatVersion)
	b = appendRecord(b, kindHeader, js)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.copy = appendRecord(nil, kindCopy, js)
	return r.writeLocked(b)
}

// Page records one scrape: give it to scrape.Options.OnPage. Pages of
// targets the recorder was not told of are ignored. A page that holds a
// secret of vtop's (a label echoing the token it was sent) is kept with
// the secret redacted: a recording is shared.
func (r *Recorder) Page(p scrape.Page) {
	i, ok := r.index[p.Target.URL]
	if !ok || r.Stopped() {
		return
	}
	p.Body = safetext.RedactPage(p.Body)
	enc := r.targets[i]
	payload := enc.frame(p, r.start, r.all, r.keyEvery)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = appendRecord(r.buf[:0], kindFrame, payload)
	if r.writeLocked(r.buf) == nil {
		r.frames++
	}
	if r.size >= r.copyAt && r.writeLocked(r.copy) == nil {
		r.copyAt = r.size + copyEvery
	}
}

// Tap records which frames a live report saw: give it to
// monitor.Monitor.Tap. Targets the recorder was not told of are ignored.
func (r *Recorder) Tap(ev monitor.Evaluation) {
	if r.Stopped() {
		return
	}
	cuts := make([]Cut, len(r.targets))
	for _, rd := range ev.Readings {
		i, ok := r.byName[rd.Target]
		if !ok {
			continue
		}
		cuts[i] = r.targets[i].cut(rd.Samples)
	}
	r.Tick(Tick{Time: ev.Now, Window: ev.Config.Window, Cuts: cuts})
}

// writeLocked appends b to the file in one write, unless that would pass
// the size limit, which stops the recording.
func (r *Recorder) writeLocked(b []byte) error {
	if r.err != nil {
		return r.err
	}
	if r.maxBytes > 0 && r.size+int64(len(b)) > r.maxBytes {
		r.stopLocked(ErrMaxSize)
		return r.err
	}
	n, err := r.file.Write(b)
	r.size += int64(n)
	if err != nil {
		r.stopLocked(fmt.Errorf("writing %s: %w", r.path, err))
	}
	return err
}

// stopLocked ends the recording with the reason err.
func (r *Recorder) stopLocked(err error) {
	if r.err != nil {
		return
	}
	r.err = err
	close(r.done)
	if r.file != nil {
		r.file.Close() // also releases the lock
		r.file = nil
	}
}

// Stopped reports whether the recording has ended.
func (r *Recorder) Stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Done is closed when the recording stops by itself (ErrMaxSize, a write
// error) or is closed.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Err returns why the recording stopped: nil while it runs and after a
// plain Close, ErrMaxSize at the limit, or the write error.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(r.err, errClosed) {
		return nil
	}
	return r.err
}

// Size returns the bytes written so far.
func (r *Recorder) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.size
}

// Frames returns the number of frames written so far.
func (r *Recorder) Frames() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frames
}

var errClosed = errors.New("recording closed")

// Close ends the recording. The file needs no trailer: it is complete
// after every record.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.file != nil {
		err = r.file.Sync()
	}
	r.stopLocked(errClosed)
	return err
}
