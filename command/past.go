package command

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
)

// The past of the fleet, read from --prometheus chunk by chunk, is
// written as a recording (each scrape Prometheus made, as a page, and one
// evaluation per --interval) and played by the replay's screens, or kept
// (`vtop record --prometheus --from --to -o FILE`).

// pastFlags ask for a stretch of the past instead of the present.
type pastFlags struct {
	At   string `placeholder:"TIME" help:"With --prometheus: the fleet at TIME in the past: RFC 3339, relative (-8h, -90m), or local time (03:10, 03:10:30: the most recent one; 2026-12-05 03:10). The screen opens paused at TIME, over the 10 minutes either side; --once, --json and --jsonl give the report at TIME."`
	From string `placeholder:"TIME" help:"With --prometheus: replay the fleet's past from TIME (as --at) to --to, one report per --interval, on the replay's screen (time keys, pause, jumps) or as --jsonl."`
	To   string `placeholder:"TIME" help:"With --from: the end of the stretch (default: now)."`
}

func (f pastFlags) asked() bool { return f.At != "" || f.From != "" || f.To != "" }

// maxPastRange is the longest stretch read at once, and the longest
// window read before its first report: one read asks for at most twice
// that (and two intervals), 577 chunks of 5 minutes.
const maxPastRange = 24 * time.Hour

// atAround is how far either side of --at the screen reaches.
const atAround = 10 * time.Minute

// pastStretch is a stretch of the past to report on: a report at each
// of times, each over window.
type pastStretch struct {
	at       bool      // --at: one time asked
	focus    time.Time // --at's time
	reports  []time.Time
	window   time.Duration
	interval time.Duration
}

// keep is how far before a report its readings reach, as a live
// monitor's (the window and two intervals); start is where the samples of
// the stretch start, end the last report's time.
func (p pastStretch) keep() time.Duration { return p.window + 2*p.interval }
func (p pastStretch) start() time.Time    { return p.reports[0].Add(-p.keep()) }
func (p pastStretch) end() time.Time      { return p.reports[len(p.reports)-1] }

// stretch reads the flags into the stretch of the past, now being the
// present; screen says whether a screen will show it (--at then reaches
// either side). Errors name the flag.
func (f pastFlags) stretch(now time.Time, window, interval time.Duration, screen bool) (pastStretch, error) {
	p := pastStretch{window: window, interval: interval}
	if err := f.boundWindow(now, window, interval); err != nil {
		return p, err
	}
	switch {
	case f.At != "" && (f.From != "" || f.To != ""):
		return p, usagef("--at and --from/--to exclude each other: one time, or a stretch")
	case f.To != "" && f.From == "":
		return p, usagef("--to goes with --from")
	}
	// The newest second may still be being written by Prometheus.
	now = now.Add(-time.Second).Truncate(time.Millisecond)
	if f.At != "" {
		at, err := parsePastTime("--at", f.At, now)
		if err != nil {
			return p, err
		}
		p.at, p.focus = true, at.Truncate(time.Millisecond)
		if !screen {
			p.reports = []time.Time{p.focus}
			return p, nil
		}
		// The grid goes through --at, so that a report is at it exactly.
		before := atAround / interval * interval
		end := p.focus.Add(atAround)
		if end.After(now) {
			end = now
		}
		p.every(p.focus.Add(-before), end)
		return p, nil
	}
	from, err := parsePastTime("--from", f.From, now)
	if err != nil {
		return p, err
	}
	to, err := parsePastTime("--to", cmp.Or(f.To, "now"), now)
	if err != nil {
		return p, err
	}
	switch {
	case !from.Before(to):
		return p, usagef("--from %s (%s) is not before --to %s (%s)", f.From, from.Format(time.RFC3339), cmp.Or(f.To, "now"), to.Format(time.RFC3339))
	case to.Sub(from) > maxPastRange:
		return p, usagef("--from %s --to %s: %s is over the %s a stretch may span; narrow it", f.From, cmp.Or(f.To, "now"), to.Sub(from).Round(time.Second), maxPastRange)
	}
	p.every(from, to)
	return p, nil
}

// boundWindow refuses a window of the past longer than maxPastRange: the
// read starts that far before the first report, and a --window of 1000h
// was 36,000 chunks to read (2562047h started the read in 1734).
func (f pastFlags) boundWindow(now time.Time, window, interval time.Duration) error {
	if window <= maxPastRange {
		return nil
	}
	flag, stretch := "--at", time.Duration(0)
	if f.At == "" {
		flag = "--from"
		from, err := parsePastTime("--from", f.From, now)
		to, errTo := parsePastTime("--to", cmp.Or(f.To, "now"), now)
		if err == nil && errTo == nil && to.After(from) {
			stretch = to.Sub(from)
		}
	}
	read := "past the longest duration"
	if window <= math.MaxInt64/2-stretch-2*interval {
		read = (window + 2*interval + stretch).String()
	}
	return usagef("%s %s with %s: the read of the past would span %s (the window and two intervals before the report, to the last); a window of the past is at most %s: narrow --window",
		"--window", window, flag, read, maxPastRange)
}

// every sets a report every interval from from to to (included).
func (p *pastStretch) every(from, to time.Time) {
	from, to = from.Truncate(time.Millisecond), to.Truncate(time.Millisecond)
	for t := from; !t.After(to); t = t.Add(p.interval) {
		p.reports = append(p.reports, t)
	}
}

// openStretch finds the targets of the stretch, and says its warnings on
// stderr.
func openStretch(ctx context.Context, env *Env, src *promsource.Source, p pastStretch) (*promsource.Past, error) {
	past, err := src.Past(ctx, p.start(), p.end())
	switch {
	case errors.Is(err, promsource.ErrNoPast):
		return nil, p.noData(src)
	case err != nil:
		// Nothing of the past could be read: nothing to judge (exit 3),
		// as a live watch whose server never answers.
		return nil, noData(err.Error())
	}
	for _, w := range past.Warnings {
		fmt.Fprintf(env.Stderr, "vtop: %s\n", w)
	}
	return past, nil
}

// recordPast writes the stretch read from src into a new recording at
// path, and returns how many pages it holds. A stretch without any
// series vtop reads is a no-data error naming the flags.
func recordPast(ctx context.Context, env *Env, src *promsource.Source, p pastStretch, cfg analysis.Config, path string, maxBytes int64) (pastCounts, error) {
	past, err := openStretch(ctx, env, src, p)
	if err != nil {
		return pastCounts{}, err
	}
	targets := make([]scrape.Target, len(past.Targets))
	for i, t := range past.Targets {
		targets[i] = scrape.Target{Name: t.Name, URL: src.Name() + "#" + t.Job + "/" + t.Instance}
	}
	cfg.Window = p.window
	rec, err := record.Create(path, record.Options{
		Vtop: env.Version, Interval: p.interval, Targets: targets, Args: redactArgs(env.Args),
		Config: cfg, Start: p.start(), MaxBytes: maxBytes,
	})
	if err != nil {
		return pastCounts{}, err
	}
	w := newPastWriter(rec, targets, p)
	err = pastReadError(ctx, past.Read(ctx, w.chunk))
	if err == nil {
		_ = w.through(p.end())
	}
	stopped := rec.Err()
	counts := pastCounts{rec.Frames(), w.made, rec.Size()}
	if cerr := rec.Close(); err == nil {
		err = cmp.Or(stopped, cerr)
	}
	if err == nil && w.made == 0 {
		err = p.noData(src)
	}
	if err != nil && counts.frames == 0 {
		// A header naming targets of which nothing was kept is no
		// recording: nothing is left behind.
		_ = os.Remove(path)
	}
	return counts, err
}

// pastReadError is the error of a read of the past that stopped: what
// the server could not give (no answer, answers past the memory budget)
// leaves nothing to judge (exit 3), as when the stretch cannot be opened;
// vtop's own failures, and a stop asked for, stay what they are.
func pastReadError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && promsource.IsServerError(err) {
		return noData(err.Error())
	}
	return err
}

// pastCounts is what a recording of the past holds, and its size.
type pastCounts struct {
	frames  int64
	reports int
	size    int64
}

// noData is the error of a stretch where Prometheus holds nothing to
// report on.
func (p pastStretch) noData(src *promsource.Source) error {
	flags := " (--from/--to)"
	if p.at {
		flags = " (--at)"
	}
	return noData(fmt.Sprintf("Prometheus %s holds no series vtop reads from %s to %s%s", src.Name(),
		p.start().Format(time.RFC3339), p.end().Format(time.RFC3339), flags))
}

// pastGrid makes the reports of a stretch as each target's items (frames
// written, samples read) arrive, oldest first: a report is made once the
// items up to its time are in, over those a live monitor's window holds
// (heldAt), and the items no later report needs are forgotten. Reports
// before any target's first item are not made: Prometheus held nothing
// yet.
type pastGrid[T any] struct {
	p      pastStretch
	timeOf func(T) time.Time
	items  [][]T // per target
	next   int   // the next report
	made   int
	report func(at time.Time, held [][]T) error
}

func newPastGrid[T any](p pastStretch, targets int, timeOf func(T) time.Time, report func(time.Time, [][]T) error) *pastGrid[T] {
	return &pastGrid[T]{p: p, timeOf: timeOf, items: make([][]T, targets), report: report}
}

// through makes the reports at or before t.
func (g *pastGrid[T]) through(t time.Time) error {
	for ; g.next < len(g.p.reports) && !g.p.reports[g.next].After(t); g.next++ {
		at := g.p.reports[g.next]
		held := make([][]T, len(g.items))
		seen := g.made > 0
		for i, xs := range g.items {
			lo, hi := heldAt(xs, g.timeOf, at, g.p.keep())
			held[i] = xs[lo:hi]
			seen = seen || hi > 0
		}
		if !seen {
			continue
		}
		g.made++
		if err := g.report(at, held); err != nil {
			return err
		}
	}
	if g.next < len(g.p.reports) {
		from := g.p.reports[g.next].Add(-g.p.keep())
		for i, xs := range g.items {
			g.items[i] = neededFrom(xs, g.timeOf, from)
		}
	}
	return nil
}

// pastWriter writes the pages of the stretch and, on its grid, the
// evaluations between them (ticks).
type pastWriter struct {
	*pastGrid[frameAt]
	rec     *record.Recorder
	targets []scrape.Target
	seq     []int64 // per target: the last frame's sequence number
	workers int
}

// frameAt is one frame written: its time and sequence number.
type frameAt struct {
	t   time.Time
	seq int64
}

func (f frameAt) time() time.Time { return f.t }

func newPastWriter(rec *record.Recorder, targets []scrape.Target, p pastStretch) *pastWriter {
	w := &pastWriter{rec: rec, targets: targets, seq: make([]int64, len(targets)), workers: max(1, min(runtime.GOMAXPROCS(0), 4))}
	w.pastGrid = newPastGrid(p, len(targets), frameAt.time, func(at time.Time, held [][]frameAt) error {
		tick := record.Tick{Time: at, Window: p.window, Cuts: make([]record.Cut, len(held))}
		for i, fs := range held {
			tick.Cuts[i] = cutOf(fs)
		}
		w.rec.Tick(tick)
		return nil
	})
	return w
}

// chunk writes one chunk's pages, the targets shared among workers (a
// target's frames are compressed against each other, so each target is
// written by one), then the ticks the chunk completes.
func (w *pastWriter) chunk(pages []promsource.PastPage) error {
	if len(pages) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	for k := range w.workers {
		wg.Go(func() {
			for _, pg := range pages {
				if pg.Target%w.workers == k {
					w.page(pg)
				}
			}
		})
	}
	wg.Wait()
	_ = w.through(pages[len(pages)-1].Time)
	if err := w.rec.Err(); err != nil {
		return fmt.Errorf("writing the recording: %w", err)
	}
	return nil
}

// page writes one page and notes its frame.
func (w *pastWriter) page(pg promsource.PastPage) {
	w.rec.Page(scrape.Page{Target: w.targets[pg.Target], Time: pg.Time, Body: pg.Body,
		ContentType: promsource.PastContentType, Err: pg.Err})
	w.seq[pg.Target]++
	w.items[pg.Target] = append(w.items[pg.Target], frameAt{pg.Time, w.seq[pg.Target]})
}

// cutOf is the cut of a tick over the frames it holds of a target.
func cutOf(held []frameAt) record.Cut {
	if len(held) == 0 {
		return record.Cut{}
	}
	return record.Cut{Seq: held[len(held)-1].seq, Count: len(held)}
}

// heldAt is the span [lo, hi) of xs (oldest first, at times timeOf) that
// a report at at holds: the newest at or before it and those within keep
// before it, as a live monitor's window holds its scrapes. Empty (0, 0)
// when none is at or before at.
func heldAt[T any](xs []T, timeOf func(T) time.Time, at time.Time, keep time.Duration) (lo, hi int) {
	hi = len(xs)
	for hi > 0 && timeOf(xs[hi-1]).After(at) {
		hi--
	}
	if hi == 0 {
		return 0, 0
	}
	lo = hi - 1
	for lo > 0 && !timeOf(xs[lo-1]).Before(at.Add(-keep)) {
		lo--
	}
	return lo, hi
}

// neededFrom is xs (oldest first) without what no report held from from
// on needs: all before from but the newest of them.
func neededFrom[T any](xs []T, timeOf func(T) time.Time, from time.Time) []T {
	k := 0
	for k+1 < len(xs) && timeOf(xs[k+1]).Before(from) {
		k++
	}
	return xs[k:]
}

// openPast writes the stretch to a recording in a temporary directory
// and opens it; the file goes with the recording's close.
func openPast(ctx context.Context, env *Env, src *promsource.Source, p pastStretch, cfg analysis.Config) (*record.Recording, error) {
	dir, err := os.MkdirTemp("", "vtop-past-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // the open recording keeps its file
	path := filepath.Join(dir, "past.vtrec")
	if _, err := recordPast(ctx, env, src, p, cfg, path, 0); err != nil {
		return nil, err
	}
	return record.Open(path)
}

// runPast is the watch of a stretch of the past: the replay's screen,
// --jsonl or --once over the recording of it.
func (w *Watch) runPast(ctx context.Context, env *Env) error {
	if err := w.validatePast(); err != nil {
		return err
	}
	screen := !w.Once && !w.JSONL
	if screen && (!isTerminal(env.Stdin) || !isTerminal(env.Stdout)) {
		return errNoTerminal
	}
	p, src, cfg, err := w.pastSource(screen)
	if err != nil {
		return err
	}
	if !screen {
		return w.printPast(ctx, env, src, p, cfg)
	}
	fmt.Fprintf(env.Stderr, "vtop: reading the past of Prometheus %s from %s to %s (%s)…\n", src.Name(),
		p.reports[0].Format(human.DateClock), p.end().Format(human.Clock), zoneNote(p.reports[0]))
	rec, err := untilDone(ctx, func() (*record.Recording, error) { return openPast(ctx, env, src, p, cfg) })
	if rec == nil {
		return err
	}
	defer rec.Close()
	r := &Replay{File: "the past of Prometheus " + src.Name(), Speed: 1}
	r.note = pastNote(p.reports[0], p.end())
	r.pauseAt = p.focus
	return r.runScreen(ctx, rec, env.Version)
}

// pastSource is the stretch the flags ask for (screen: as pastFlags.stretch
// says), the Prometheus source that holds it and the configuration of its
// reports.
func (w *Watch) pastSource(screen bool) (pastStretch, *promsource.Source, analysis.Config, error) {
	p, err := w.pastFlags.stretch(time.Now(), w.Window, w.Interval, screen)
	if err != nil {
		return p, nil, analysis.Config{}, err
	}
	src, err := w.prometheusSource()
	return p, src, w.config(w.Window, analysis.DefaultConfig().Hysteresis), err
}

// validatePast rejects the flags of the past that do not go with it.
func (w *Watch) validatePast() error {
	switch {
	case w.Prometheus == "":
		return usagef("%s goes with --prometheus: the past is read from the fleet's Prometheus (a recording of vtop's own replays with vtop replay FILE)", w.pastFlag())
	case w.Record != "":
		return usagef("--record: to keep a stretch of the past, run vtop record --prometheus URL --from … --to … -o FILE")
	case w.Duration != 0:
		return usagef("--duration: %s reads a stretch that ends by itself", w.pastFlag())
	}
	return nil
}

// pastFlag names the flag of the past given.
func (f pastFlags) pastFlag() string {
	switch {
	case f.At != "":
		return "--at"
	case f.From != "":
		return "--from"
	}
	return "--to"
}

// runPast is `vtop record --prometheus URL --from … --to … -o FILE`: the
// stretch of the past written to FILE, as the watch of it replays it.
func (r *Record) runPast(ctx context.Context, env *Env) error {
	switch {
	case r.Prometheus == "":
		return usagef("%s goes with --prometheus: vtop record reads the past from the fleet's Prometheus", r.pastFlag())
	case !r.pastFlags.asked():
		return usagef("--prometheus: vtop record reads a stretch of its past: give --from TIME [--to TIME], or --at TIME")
	case r.Demo || len(r.Targets) > 0 || r.File != "":
		return usagef("--prometheus reads the fleet from the server: give no targets and no --demo")
	case r.Duration != 0:
		return usagef("--duration: %s records a stretch that ends by itself", r.pastFlag())
	}
	w := &Watch{Interval: r.Interval, Timeout: r.Timeout, Window: r.Window, analysisFlags: r.analysisFlags, clientFlags: r.clientFlags,
		prometheusFlags: r.prometheusFlags, pastFlags: r.pastFlags, memoryFlags: r.memoryFlags, gpuFlags: gpuFlags{NoGPUs: true}}
	if err := w.validatePrometheus(); err != nil {
		return err
	}
	maxBytes, err := parseSize(r.MaxSize)
	if err != nil {
		return usagef("--max-size: %v", err)
	}
	p, src, cfg, err := w.pastSource(true)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "vtop: recording the past of Prometheus %s from %s to %s (%s) to %s\n", src.Name(),
		p.reports[0].Format(human.DateClock), p.end().Format(human.DateClock), zoneNote(p.reports[0]), r.Output)
	n, err := untilDone(ctx, func() (pastCounts, error) { return recordPast(ctx, env, src, p, cfg, r.Output, maxBytes) })
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "vtop: recorded %d scrapes and %d reports in %s (%s)\n", n.frames, n.reports, r.Output, human.Bytes(n.size))
	return nil
}
