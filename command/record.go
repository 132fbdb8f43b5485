package command

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
)

// Record is `vtop record`: scrape the targets into a recording, without a
// screen and without analysis, until interrupted, --duration or
// --max-size. `vtop replay` then evaluates it once per interval.
type Record struct {
	Targets []string `arg:"" optional:"" name:"target" help:"host:port or http(s)://host:port[/path], as for watching. None: http://localhost:8000/metrics."`
	File    string   `short:"f" type:"existingfile" placeholder:"FILE" help:"Read targets from FILE, one per line (# comments)."`
	Output  string   `short:"o" required:"" placeholder:"FILE" help:"Write the recording to FILE (it must not exist: a recording is never overwritten)."`

	Duration time.Duration `help:"Stop recording after this long (default: until interrupted)."`
	MaxSize  string        `default:"1GiB" placeholder:"SIZE" help:"Stop recording before the file grows past SIZE (default 1GiB)."`
	All      bool          `name:"record-all" help:"Keep whole pages, not only the vLLM families vtop reads."`

	Interval time.Duration `help:"Time between two scrapes of a target (default 1s; with --prometheus, between two reports of the stretch: default 5s)."`
	Timeout  time.Duration `help:"Timeout of one scrape (default: 80% of --interval)."`
	Window   time.Duration `default:"${window}" help:"Window of the reports a replay computes."`

	analysisFlags
	clientFlags

	Demo         bool   `help:"Record a simulated vLLM fleet served on loopback."`
	DemoFleet    int    `default:"6" placeholder:"N" help:"With --demo: how many simulated replicas."`
	DemoScenario string `default:"mixed" enum:"healthy,full,slow,preempting,spike,mixed,idle" placeholder:"S" help:"With --demo: the scenario (${enum})."`

	// The past of a Prometheus server, recorded instead of scrapes
	// (past.go): --prometheus with --from/--to or --at.
	prometheusFlags
	pastFlags
	memoryFlags
}

// Run records until ctx ends, --duration passes or the recording stops by
// itself, and says on stderr what it kept.
func (r *Record) Run(ctx context.Context, env *Env) error {
	if r.Interval == 0 {
		r.Interval = defaultInterval(r.Prometheus)
	}
	if err := r.validate(); err != nil {
		return err
	}
	if r.Prometheus != "" || r.pastFlags.asked() {
		return r.runPast(ctx, env)
	}
	// Targets resolved, and the demo started, as for watching; GPUs are
	// not recorded.
	w := &Watch{Targets: r.Targets, File: r.File, clientFlags: r.clientFlags,
		Demo: r.Demo, DemoFleet: r.DemoFleet, DemoScenario: r.DemoScenario, gpuFlags: gpuFlags{NoGPUs: true}}
	clientOpts, err := w.options()
	if err != nil {
		return err
	}
	targets, _, err := w.targets(ctx)
	if err != nil {
		return err
	}
	flags := recordFlags{Record: r.Output, RecordAll: r.All, RecordMaxSize: r.MaxSize, size: "--max-size"}
	opts := scrape.Options{Interval: r.Interval, Timeout: r.Timeout, Client: clientOpts}
	poller, err := flags.poller(env, targets, r.config(r.Window, analysis.DefaultConfig().Hysteresis), opts)
	if err != nil {
		return err
	}
	until := " until interrupted (ctrl+c)"
	if r.Duration > 0 {
		until = " for " + r.Duration.String()
	}
	fmt.Fprintf(env.Stderr, "vtop: recording %d targets to %s%s\n", len(targets), r.Output, until)
	runCtx, cancel := flags.untilStopped(ctx, r.Duration)
	defer cancel()
	_ = poller.Run(runCtx)
	return flags.finish(env)
}

// validate rejects what the parser cannot see.
func (r *Record) validate() error {
	if err := checkScrapeTiming(r.Interval, r.Timeout, r.Window); err != nil {
		return err
	}
	switch {
	case r.Duration < 0:
		return usagef("--duration %s: want a positive duration", r.Duration)
	case r.Demo && (len(r.Targets) > 0 || r.File != ""):
		return usagef("--demo records its own simulated fleet: give no targets")
	case r.DemoFleet < 1 || r.DemoFleet > 500:
		return usagef("--demo-fleet %d: want 1 to 500", r.DemoFleet)
	}
	return r.analysisFlags.validate()
}

// recordFlags keep the evidence of a watch (`vtop --record FILE`): every
// page the poller keeps and every evaluation the monitor makes, so that a
// replay computes the same reports. The unexported fields are the running
// recording.
type recordFlags struct {
	Record        string `placeholder:"FILE" help:"Also record every scrape (and which ones each report saw) to FILE, for vtop replay, export and diff. FILE must not exist."`
	RecordAll     bool   `name:"record-all" help:"With --record: keep whole pages, not only the vLLM families vtop reads."`
	RecordMaxSize string `default:"1GiB" placeholder:"SIZE" help:"With --record: stop recording (watching goes on) before FILE grows past SIZE (default 1GiB)."`

	rec     *record.Recorder
	targets int
	size    string // the size flag's name, when not --record-max-size
}

// sizeFlag names the flag of the size limit in messages.
func (f *recordFlags) sizeFlag() string { return cmp.Or(f.size, "--record-max-size") }

// validateRecord rejects --record where there are no scrapes to keep.
func (f *recordFlags) validateRecord(w *Watch) error {
	switch {
	case f.Record == "" && f.RecordAll:
		return usagef("--record-all goes with --record FILE")
	case f.Record == "":
		return nil
	case w.Prometheus != "":
		return usagef("--record: a watch through --prometheus%s is not recorded; vtop record --prometheus URL --from TIME --to TIME -o FILE records a stretch of its past, or give the targets and vtop scrapes and records them itself", fromEnv(w))
	case w.Once:
		return usagef("--record goes with the dashboard or --jsonl, not --once")
	}
	return nil
}

// fromEnv names the environment variable when --prometheus came from it.
func fromEnv(w *Watch) string {
	if w.promFromEnv {
		return " (from $" + prometheusEnv + ")"
	}
	return ""
}

// poller is the poller of targets, with the recording, when asked for,
// hooked into its options: every kept page, on the wall clock to the
// millisecond, so that live reports compute with the very times the file
// keeps and a replay gives the same figures.
func (f *recordFlags) poller(env *Env, targets []scrape.Target, cfg analysis.Config, opts scrape.Options) (*scrape.Poller, error) {
	if f.Record != "" {
		maxBytes, err := parseSize(f.RecordMaxSize)
		if err != nil {
			return nil, usagef("%s: %v", f.sizeFlag(), err)
		}
		f.rec, err = record.Create(f.Record, record.Options{
			Vtop: env.Version, Interval: cmp.Or(opts.Interval, scrape.DefaultInterval), Targets: targets, Args: redactArgs(env.Args),
			All: f.RecordAll, MaxBytes: maxBytes, Config: cfg,
		})
		if err != nil {
			return nil, err
		}
		f.targets = len(targets)
		opts.OnPage, opts.Now = f.rec.Page, record.WallClock
	}
	poller, err := scrape.NewPoller(targets, opts)
	if err != nil {
		if f.rec != nil {
			_ = f.rec.Close()
		}
		// Only the client's options can fail here: a CA file, a token
		// file or a header given on the command line.
		return nil, usagef("%v", err)
	}
	return poller, nil
}

// tap makes the recorder note which readings each report saw.
func (f *recordFlags) tap(mon *monitor.Monitor) {
	if f.rec != nil {
		mon.Tap(f.rec.Tap)
	}
}

// onStop calls notify, on a goroutine of its own, with the reason when the
// recording stops by itself before ctx ends (the size limit, a full disk):
// watching goes on.
func (f *recordFlags) onStop(ctx context.Context, notify func(reason string)) {
	if f.rec == nil {
		return
	}
	go func() {
		select {
		case <-f.rec.Done():
			if err := f.rec.Err(); err != nil {
				notify(f.stopReason(err))
			}
		case <-ctx.Done():
		}
	}()
}

// stopReason says why the recording stopped, in one line.
func (f *recordFlags) stopReason(err error) string {
	if errors.Is(err, record.ErrMaxSize) {
		return fmt.Sprintf("recording stopped at %s %s", f.sizeFlag(), f.RecordMaxSize)
	}
	return fmt.Sprintf("recording stopped: %v", err)
}

// untilStopped is ctx ended also by d (when positive) and by the
// recording stopping by itself: `vtop record` has nothing else to do.
func (f *recordFlags) untilStopped(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cancelTimeout := context.CancelFunc(func() {})
	if d > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, d)
	}
	ctx, cancel := context.WithCancel(ctx)
	f.onStop(ctx, func(string) { cancel() })
	return ctx, func() { cancel(); cancelTimeout() }
}

// finish closes the recording and says on stderr what it holds. A write
// error ends the command with it (exit 70): evidence was lost. The size
// limit is the recording's own end, not a failure.
func (f *recordFlags) finish(env *Env) error {
	if f.rec == nil {
		return nil
	}
	stopped := f.rec.Err()
	closeErr := f.rec.Close()
	out := env.Stderr
	fmt.Fprintf(out, "vtop: recorded %d scrapes of %d targets in %s (%s)\n", f.rec.Frames(), f.targets, f.Record, human.Bytes(f.rec.Size()))
	switch {
	case stopped != nil && !errors.Is(stopped, record.ErrMaxSize):
		return fmt.Errorf("--record: %w", stopped)
	case stopped != nil:
		fmt.Fprintf(out, "vtop: %s\n", f.stopReason(stopped))
	case closeErr != nil:
		return fmt.Errorf("--record: %w", closeErr)
	}
	return nil
}

// redactArgs is the command line as a recording keeps it: the values of
// --header, which may carry a credential, replaced (tokens and passwords
// are only ever given as files).
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && args[i-1] == "--header":
			out[i] = "REDACTED"
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=REDACTED"
		default:
			out[i] = a
		}
	}
	return out
}
