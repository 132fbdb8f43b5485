package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/replay"
	"github.com/vtop-dev/vtop/ui"
)

// Replay is `vtop replay FILE`: the dashboard over a recording, through
// the same analysis as live data, with time controls; or, without a
// screen, its reports at once.
type Replay struct {
	File  string `arg:"" placeholder:"FILE" help:"The recording (vtop record, or vtop --record FILE)."`
	JSONL bool   `name:"jsonl" help:"No screen: print every report of the recording, in order and without waiting, one JSON line each."`
	Once  bool   `help:"No screen: print the recording's last report (exit code by state, as --once)."`
	JSON  bool   `help:"With --once: print the report as one JSON object."`
	Speed int    `default:"1" enum:"1,10,60" help:"Speed at start: 1, 10 or 60 times the recorded pace (< and > change it)."`
	recordingMemoryFlags

	// note is added to the replay line (the past of a Prometheus server
	// says its zone); pauseAt, when set, opens the screen paused at the
	// first report at or after it.
	note    string
	pauseAt time.Time
}

// Run replays the recording on the screen, or prints its reports.
func (r *Replay) Run(ctx context.Context, env *Env) error {
	switch {
	case r.JSON && !r.Once:
		return usagef("--json goes with --once (use --jsonl for every report)")
	case r.Once && r.JSONL:
		return usagef("--once and --jsonl exclude each other")
	}
	if !r.JSONL && !r.Once {
		rec, err := untilDone(ctx, func() (*record.Recording, error) { return r.open(r.File, env) })
		if rec == nil {
			return err
		}
		defer rec.Close()
		return r.runScreen(ctx, rec, env.Version)
	}
	_, err := untilDone(ctx, func() (struct{}, error) {
		rec, err := r.open(r.File, env)
		if err != nil {
			return struct{}{}, err
		}
		defer rec.Close()
		cfg := replay.Config(rec)
		if r.JSONL { // every report, as live --jsonl printed it
			return struct{}{}, dataError(r.File, replay.Reports(rec, cfg, jsonLines(env.Stdout)))
		}
		last, err := replay.Last(rec, cfg)
		if err != nil {
			return struct{}{}, dataError(r.File, err)
		}
		return struct{}{}, printReport(env.Stdout, last, r.JSON)
	})
	return err
}

// untilDone runs f, but returns when ctx ends (SIGTERM, Ctrl-C) even if f
// cannot: it may be reading a large file or writing to a reader that
// stopped reading. An interrupted run ends quietly, as live mode does.
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, nil
	}
}

// recordingMemoryFlags are --max-memory for the readers of a recording:
// replay, export and diff.
type recordingMemoryFlags struct {
	MaxMemory string `default:"256MiB" placeholder:"SIZE" help:"The bound on vtop's memory (default 256MiB): a frame of the recording may hold a page of a sixteenth of it (16 MiB, --max-body's default), checked before it is decoded, and the pages kept between frames take a quarter; a recording with a larger page is refused, naming its frame. The runtime collects garbage before it passes seven eighths of it (unless GOMEMLIMIT is set)."`
}

// open opens a recording within the bound, which also becomes the
// runtime's soft memory limit, and says on stderr what of it was lost or
// is still being written.
func (f recordingMemoryFlags) open(path string, env *Env) (*record.Recording, error) {
	n, err := memoryFlags(f).maxMemory()
	if err != nil {
		return nil, err
	}
	softLimit(n)
	rec, err := record.OpenWithin(path, record.Limits{MaxMemory: n})
	if err != nil {
		return nil, err
	}
	if rec.InProgress {
		fmt.Fprintf(env.Stderr, "vtop: %s is still being recorded; replaying what is written so far\n", path)
	}
	if rec.Damage.Any() {
		fmt.Fprintf(env.Stderr, "vtop: %s: %s\n", path, rec.Damage)
	}
	return rec, nil
}

// dataError marks a recording with nothing to replay as unusable (65).
func dataError(path string, err error) error {
	if errors.Is(err, replay.ErrNoReports) {
		return &record.Error{Code: ExitData, Path: path, Err: err}
	}
	return err
}

// runScreen opens the dashboard over the recording: a paced source, which
// the screen's keys drive.
func (r *Replay) runScreen(ctx context.Context, rec *record.Recording, version string) error {
	cfg := replay.Config(rec)
	src, err := replay.New(rec, cfg)
	if err != nil {
		return dataError(r.File, err)
	}
	src.SetSpeed(r.Speed)
	if !r.pauseAt.IsZero() {
		src.StepBy(tickAt(rec.Ticks(), r.pauseAt))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pl := player{src}
	ticks := rec.Ticks()
	var program *tea.Program
	send := func(msg tea.Msg) { program.Send(msg) }
	mon := monitor.New(src.Paced(), cfg, replayOutput(ticks, pl, send))
	// The events of each report the analysis ahead computes: the replay's
	// event log, read once.
	src.OnReport(func(r *analysis.Report) {
		if len(r.Events) > 0 {
			send(ui.EventsMsg{Came: r.Time, Events: r.Events})
		}
	})
	model := ui.New(ui.Options{
		Interval:   rec.Header.Interval,
		Window:     ticks[0].Window,
		Version:    version,
		Player:     pl,
		ReplayNote: r.note,
		Judgement:  cfg,
	})
	program = tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx))
	return runBeside(ctx, cancel, program, mon)
}

// jumpHistory is how many reports before a jump's position the charts are
// filled with: a wide terminal's chart, 4 minutes of a 1 s recording, 20 of
// the past read every 5 s.
const jumpHistory = 240

// replayOutput hands each replayed report to the screen with the replay
// line (the report's position while playing, the one paused at when
// paused). A report that is not the one after the last (a jump, or --at)
// restarts the screen's history, and the stretch before it follows, so
// that the charts show the minutes that led there.
func replayOutput(ticks []record.Tick, pl player, send func(tea.Msg)) monitor.Output {
	last := -1
	return func(rep analysis.Report) error {
		i := tickAt(ticks, rep.Time)
		jumped := i != last+1
		st := pl.Status()
		if !st.Paused {
			st = pl.StatusAt(rep.Time)
		}
		last = i
		send(ui.ReportMsg{Report: rep, Replay: &ui.ReplayMsg{Status: st.String(), Position: st.Time, Restart: jumped, At: rep.Time}})
		if jumped && i > 0 {
			go func() { send(ui.HistoryMsg{Points: pl.PointsBefore(rep.Time, jumpHistory), At: rep.Time}) }()
		}
		return nil
	}
}

// player is a replay as the screen drives it.
type player struct {
	*replay.Source
}

var _ ui.Player = player{}

// ChangeSpeed steps through replay.Speeds, staying at either end.
func (p player) ChangeSpeed(dir int) { p.SetSpeed(nextSpeed(p.Status().Speed, dir)) }

// Position is the recorded time the replay stands at.
func (p player) Position() time.Time { return p.Status().Time }

// StatusLine is the header's replay line.
func (p player) StatusLine() string { return p.Status().String() }

// tickAt is the index of the first tick at or after t (the last when
// none is).
func tickAt(ticks []record.Tick, t time.Time) int {
	i := sort.Search(len(ticks), func(k int) bool { return !ticks[k].Time.Before(t) })
	return min(i, len(ticks)-1)
}

// nextSpeed is the speed after cur in replay.Speeds in the direction dir,
// from the nearest one when cur is not among them.
func nextSpeed(cur, dir int) int {
	speeds := replay.Speeds
	i, found := slices.BinarySearch(speeds, cur)
	switch {
	case dir > 0 && found:
		i++
	case dir < 0:
		i--
	}
	return speeds[min(max(i, 0), len(speeds)-1)]
}
