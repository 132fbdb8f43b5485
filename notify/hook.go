package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vtop-dev/vtop/safetext"
)

// HookConfig configures a command run per state change.
type HookConfig struct {
	// Command is run as sh -c Command, the change as JSON on its stdin.
	Command string
	// Timeout is how long a run may take before its process group is
	// killed (DefaultHookTimeout when zero).
	Timeout time.Duration
	// PerMinute is how many runs may start in any minute
	// (DefaultHookPerMinute when zero); the changes past it are counted
	// and said, not run.
	PerMinute int
	// Concurrent is how many runs may be under way at once
	// (DefaultHookConcurrent when zero); a change that comes while that
	// many run is counted and said, not queued.
	Concurrent int
	// Say receives a notice, on a goroutine of the hook's: a run that
	// failed, changes not run. Nil says nothing.
	Say func(string)
	// Now is the clock of the rate limit (time.Now when nil).
	Now func() time.Time
}

// Defaults of HookConfig: ten runs a minute, enough for every change of a
// small fleet, few enough that a flapping fleet does not page someone a
// hundred times; ten seconds, long for a notification, short enough that
// hung ones do not pile up.
const (
	DefaultHookTimeout    = 10 * time.Second
	DefaultHookPerMinute  = 10
	DefaultHookConcurrent = 4
)

// maxHookOutput is how much of a failed run's output is kept to say why.
const maxHookOutput = 4 << 10

// Hook runs a command per state change on a goroutine of its own: Fire
// never waits, and a failure of the command is said, never an error of
// vtop's.
type Hook struct {
	cfg HookConfig
	ctx context.Context
	wg  sync.WaitGroup

	mu      sync.Mutex
	starts  []time.Time // the starts of the last minute, oldest first
	running int
	stats   HookStats
	// refusalSaid: a refused change was said since the last run, so that
	// a flapping fleet gets one notice per run, not one per change.
	refusalSaid bool
}

// HookStats count what the hook did.
type HookStats struct {
	// Runs counts the runs started, Failed those that failed or timed out.
	Runs, Failed int
	// RateLimited counts changes not run for the rate limit, Busy those not
	// run because Concurrent runs were under way.
	RateLimited, Busy int
}

// NewHook prepares a hook whose runs end (killed) when ctx ends.
func NewHook(ctx context.Context, cfg HookConfig) (*Hook, error) {
	if strings.TrimSpace(cfg.Command) == "" {
		return nil, errors.New("empty command")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultHookTimeout
	}
	if cfg.PerMinute <= 0 {
		cfg.PerMinute = DefaultHookPerMinute
	}
	if cfg.Concurrent <= 0 {
		cfg.Concurrent = DefaultHookConcurrent
	}
	if cfg.Say == nil {
		cfg.Say = func(string) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Hook{cfg: cfg, ctx: ctx}, nil
}

// Wait waits for the runs under way (killed once the hook's context ends).
func (h *Hook) Wait() { h.wg.Wait() }

// Fire runs the command for c unless the rate limit or the runs under way
// forbid it, and returns at once.
func (h *Hook) Fire(c Change) {
	input, err := json.Marshal(c)
	if err != nil {
		return // unreachable: a Change always encodes
	}
	now := h.cfg.Now()
	h.mu.Lock()
	for len(h.starts) > 0 && now.Sub(h.starts[0]) >= time.Minute {
		h.starts = h.starts[1:]
	}
	var refused string
	switch {
	case len(h.starts) >= h.cfg.PerMinute:
		h.stats.RateLimited++
		refused = fmt.Sprintf("on-change: %s %s not run: %d runs in the last minute already (%d changes not run for the rate so far)",
			c.Replica, strings.ToUpper(c.State), h.cfg.PerMinute, h.stats.RateLimited)
	case h.running >= h.cfg.Concurrent:
		h.stats.Busy++
		refused = fmt.Sprintf("on-change: %s %s not run: %d runs still under way (%d changes not run for it so far)",
			c.Replica, strings.ToUpper(c.State), h.running, h.stats.Busy)
	default:
		h.starts = append(h.starts, now)
		h.running++
		h.stats.Runs++
		h.refusalSaid = false
	}
	quiet := refused != "" && h.refusalSaid // one notice per run of refusals
	h.refusalSaid = h.refusalSaid || refused != ""
	h.mu.Unlock()
	if quiet {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if refused != "" {
			// Said on a goroutine: saying may wait for the screen.
			h.cfg.Say(refused)
			return
		}
		err := h.run(c, input)
		h.mu.Lock()
		h.running--
		if err != nil {
			h.stats.Failed++
		}
		h.mu.Unlock()
		if err != nil && h.ctx.Err() == nil {
			h.cfg.Say(fmt.Sprintf("on-change for %s %s: %v", c.Replica, strings.ToUpper(c.State), err))
		}
	}()
}

// run runs the command once with input on stdin and the change in the
// environment, in a process group of its own that a timeout kills whole.
func (h *Hook) run(c Change, input []byte) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", h.cfg.Command)
	cmd.Stdin = bytes.NewReader(input)
	out := &cappedBuffer{limit: maxHookOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(),
		"VTOP_REPLICA="+c.Replica,
		"VTOP_STATE="+strings.ToUpper(c.State),
		"VTOP_FROM="+strings.ToUpper(c.From),
		"VTOP_SEVERITY="+c.Severity,
		"VTOP_TEXT="+c.Text)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// The output pipes close when the group is killed; WaitDelay bounds
	// the wait for a child that escaped the group and holds them.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("killed after %s", h.cfg.Timeout)
	}
	text := strings.TrimSpace(safetext.Sanitize(out.String()))
	if text != "" {
		return fmt.Errorf("%v: %s", err, text)
	}
	return err
}

// cappedBuffer keeps the first limit bytes written to it.
type cappedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
