// Package collect runs vtop's GPU readers: one long-lived nvidia-smi child
// process streaming CSV (plus a polled compute-apps query that maps
// processes to GPUs) and dcgm-exporter pages fetched over HTTP. Every
// reader keeps its latest GPUs and a note saying what is wrong; callers
// read a snapshot and are never blocked by a missing, failing or hanging
// source.
package collect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/gpu"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/safetext"
)

// SMIOptions configure the nvidia-smi reader. Zero values take defaults.
type SMIOptions struct {
	// Command is the program run, looked up on PATH (default "nvidia-smi").
	Command string
	// Interval is the streaming period, -lms (default 1 s).
	Interval time.Duration
	// StartTimeout is how long nvidia-smi may take to print its first row
	// (default 30 s: without persistence mode, initialising the driver
	// on a large host takes seconds). StallTimeout is how long a stream
	// may then go without a row (default 5 intervals, at least 5 s).
	// Either expired, the process is killed and restarted.
	StartTimeout, StallTimeout time.Duration
	// AppsInterval is how often compute processes are listed (default 5 s);
	// AppsTimeout bounds one listing (default 5 s).
	AppsInterval, AppsTimeout time.Duration
	// Backoff is the first wait before a restart (default 1 s); it doubles
	// after each failure up to MaxBackoff (default 1 min).
	Backoff, MaxBackoff time.Duration
	// Host is the name GPUs are reported under (default os.Hostname).
	Host string
	// Forget is how long a GPU may go unreported before it leaves the
	// snapshot (default 10 intervals, at least 10 s).
	Forget time.Duration
}

// MaxGPUs bounds the GPUs one host's nvidia-smi may report: rows naming
// further GPUs are dropped and the note says so.
const MaxGPUs = 64

func (o *SMIOptions) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Command == "" {
		o.Command = "nvidia-smi"
	}
	def(&o.Interval, time.Second)
	def(&o.StartTimeout, 30*time.Second)
	def(&o.StallTimeout, max(5*o.Interval, 5*time.Second))
	def(&o.AppsInterval, 5*time.Second)
	def(&o.AppsTimeout, 5*time.Second)
	def(&o.Backoff, time.Second)
	def(&o.MaxBackoff, time.Minute)
	def(&o.Forget, max(10*o.Interval, 10*time.Second))
	if o.Host == "" {
		h, _ := os.Hostname()
		o.Host = safetext.Sanitize(h)
	}
}

// Snapshot is what a reader knows now.
type Snapshot struct {
	// GPUs are the latest readings, sorted; each is a copy.
	GPUs []device.GPU
	// OK is true while the source answers.
	OK bool
	// Note says what is wrong (or, while starting, what is tried); ""
	// when all is well. Safe to draw.
	Note string
	// At is when the latest reading arrived (zero: none yet).
	At time.Time
}

// SMI reads GPUs from nvidia-smi. Safe for concurrent use.
type SMI struct {
	background
	opts SMIOptions

	mu    sync.Mutex
	gpus  map[string]device.GPU
	seen  map[string]time.Time // when each GPU was last reported
	over  time.Time            // when a row past MaxGPUs was last dropped
	procs []gpu.Process
	ok    bool
	note  string
	at    time.Time
}

// StartSMI starts reading in the background until ctx ends or Stop is
// called, and returns at once. When the program is not on PATH, the
// snapshot says so and nothing runs.
func StartSMI(ctx context.Context, opts SMIOptions) *SMI {
	opts.defaults()
	s := &SMI{background: newBackground(), opts: opts, gpus: map[string]device.GPU{}, seen: map[string]time.Time{}}
	path, err := exec.LookPath(opts.Command)
	if err != nil {
		s.setNote(false, opts.Command+" not found on PATH: no GPU figures from this host")
		return s
	}
	s.setNote(false, "starting "+opts.Command)
	s.run(ctx, func(ctx context.Context) { s.stream(ctx, path) }, func(ctx context.Context) { s.pollApps(ctx, path) })
	return s
}

// Snapshot returns what the reader knows now.
func (s *SMI) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(time.Now())
	gs := slices.Collect(maps.Values(s.gpus))
	gpu.AttachProcesses(gs, s.procs)
	device.Sort(gs)
	return Snapshot{GPUs: gs, OK: s.ok, Note: s.note, At: s.at}
}

func (s *SMI) setNote(ok bool, note string) {
	s.mu.Lock()
	s.ok, s.note = ok, note
	s.mu.Unlock()
	s.signal()
}

func (s *SMI) stream(ctx context.Context, path string) {
	wait, fields := s.opts.Backoff, gpu.SMIFields
	for {
		rows, err := s.runStream(ctx, path, fields)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errUnknownField) && len(fields) == len(gpu.SMIFields) {
			fields = gpu.SMIBaseFields // an older driver: ask for less
			continue
		}
		if rows > 0 {
			wait = s.opts.Backoff
		}
		s.setNote(false, fmt.Sprintf("%s; retrying in %s", err, wait))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, s.opts.MaxBackoff)
	}
}

var errUnknownField = errors.New("nvidia-smi refused a field")

// runStream runs one streaming nvidia-smi until it ends, stalls or ctx
// ends. It returns the rows read and why the stream ended.
func (s *SMI) runStream(ctx context.Context, path string, fields []string) (int, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, path, "--query-gpu="+strings.Join(fields, ","),
		"--format=csv,noheader,nounits", "-lms", strconv.FormatInt(s.opts.Interval.Milliseconds(), 10))
	cmd.WaitDelay = time.Second // a child that keeps the pipe open cannot hold us
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr capped
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("nvidia-smi: %s", safetext.Sanitize(err.Error()))
	}
	lines, scanErr := make(chan string), make(chan error, 1)
	go scanLines(stdout, lines, scanErr)
	rows, other, stalled := s.readRows(runCtx, lines, fields)
	cancel()
	go func() { // let the scanner finish once the killed child's pipe closes
		for range lines {
		}
	}()
	waitErr := cmd.Wait()
	select {
	case err := <-scanErr:
		if errors.Is(err, bufio.ErrTooLong) {
			return rows, errLineTooLong
		}
	default:
	}
	switch {
	case stalled && rows == 0:
		return rows, fmt.Errorf("nvidia-smi hung (no output in %s), killed", s.opts.StartTimeout)
	case stalled:
		return rows, fmt.Errorf("nvidia-smi hung (no output for %s), killed", s.opts.StallTimeout)
	case strings.Contains(other.String(), "is not a valid field to query"):
		return rows, errUnknownField
	}
	return rows, exitProblem(waitErr, other.String()+stderr.String())
}

// readRows reads rows until the stream ends or stalls. Lines that are not
// rows are kept: nvidia-smi writes its errors on stdout.
func (s *SMI) readRows(ctx context.Context, lines <-chan string, fields []string) (rows int, other capped, stalled bool) {
	timer := time.NewTimer(s.opts.StartTimeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return rows, other, false
		case <-timer.C:
			return rows, other, true
		case line, ok := <-lines:
			if !ok {
				return rows, other, false
			}
			timer.Reset(s.opts.StallTimeout)
			g, err := gpu.ParseSMIRow(fields, line, s.opts.Host)
			if err != nil {
				other.WriteString(line + "\n")
				continue
			}
			rows++
			s.store(g)
		}
	}
}

// store keeps one GPU's reading. A GPU beyond MaxGPUs is dropped, and
// the note says so while such rows keep coming.
func (s *SMI) store(g device.GPU) {
	now := time.Now()
	s.mu.Lock()
	k := g.Key()
	if _, ok := s.gpus[k]; !ok {
		s.forget(now)
		if len(s.gpus) >= MaxGPUs {
			s.over = now
		}
	}
	if s.over != now {
		s.gpus[k], s.seen[k] = g, now
	}
	s.ok, s.note, s.at = true, "", now
	if now.Sub(s.over) < s.opts.Forget {
		s.note = fmt.Sprintf("nvidia-smi reports more than %d GPUs: the rest are not shown", MaxGPUs)
	}
	s.mu.Unlock()
	s.signal()
}

// forget drops the GPUs not reported for Forget. The caller holds mu.
func (s *SMI) forget(now time.Time) {
	for k, at := range s.seen {
		if now.Sub(at) > s.opts.Forget {
			delete(s.gpus, k)
			delete(s.seen, k)
		}
	}
}

// errLineTooLong is why a stream ended on a line no row can be.
var errLineTooLong = errors.New("nvidia-smi printed a line over 64 KiB: not a row of its CSV; killed")

// scanLines sends r's lines to out, then why it stopped (nil at EOF) to
// errc, then closes out.
func scanLines(r io.Reader, out chan<- string, errc chan<- error) {
	defer close(out)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
	errc <- sc.Err()
}

// exitProblem says why nvidia-smi ended, in its own first words when it
// printed any ("Failed to initialize NVML: Driver/library version
// mismatch").
func exitProblem(err error, text string) error {
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	first = safetext.Sanitize(strings.TrimSpace(first))
	switch {
	case first != "" && err != nil:
		return fmt.Errorf("nvidia-smi failed: %s", first)
	case err != nil:
		return fmt.Errorf("nvidia-smi failed: %s", safetext.Sanitize(err.Error()))
	case first != "":
		return fmt.Errorf("nvidia-smi stopped: %s", first)
	}
	return errors.New("nvidia-smi stopped")
}

// pollApps lists compute processes every AppsInterval. A failure keeps
// the previous list: the stream's note already says what is wrong.
func (s *SMI) pollApps(ctx context.Context, path string) {
	for {
		if ps, err := s.listApps(ctx, path); err == nil {
			s.mu.Lock()
			s.procs = ps
			s.mu.Unlock()
			s.signal()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.AppsInterval):
		}
	}
}

func (s *SMI) listApps(ctx context.Context, path string) ([]gpu.Process, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.AppsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--query-compute-apps="+strings.Join(gpu.SMIComputeAppFields, ","),
		"--format=csv,noheader,nounits")
	cmd.WaitDelay = time.Second
	var out capped
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return gpu.ParseComputeApps(out.String()), nil
}

// capped is a buffer that keeps the first 64 KiB written to it: enough for
// any error text, bounded against a runaway child.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 64<<10 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
