package recordcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/compare"
	"github.com/vtop-dev/vtop/export"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/replay"
	"github.com/vtop-dev/vtop/scrape"
)

// Exit codes besides record.ExitUsage and record.ExitData.
const (
	exitOK       = 0
	exitDegraded = 1
	exitDown     = 2
	exitFailure  = 70
)

// code maps an error to its exit code.
func code(err error) int {
	if err == nil {
		return exitOK
	}
	return record.ExitCode(err, exitFailure)
}

// Create starts the recording of --record FILE or vtop record. Wire it
// as: scrape.Options{OnPage: rec.Page, Now: record.WallClock}, and for
// live mode mon.Tap(rec.Tap); Close it when the watch ends.
func (f RecordFlags) Create(vtop string, args []string, targets []scrape.Target, interval time.Duration, cfg analysis.Config) (*record.Recorder, error) {
	maxBytes, err := parseSize(f.MaxSize)
	if err != nil {
		return nil, &record.Error{Code: record.ExitUsage, Err: fmt.Errorf("--max-size: %w", err)}
	}
	return record.Create(f.Output, record.Options{
		Vtop: vtop, Interval: interval, Targets: targets, Args: args, All: f.All, MaxBytes: maxBytes, Config: cfg,
	})
}

// Record is `vtop record`: scrape the targets into the recording until
// ctx ends, --duration passes or --max-size is reached. It prints one
// line at the end to w.
func (f RecordFlags) Record(ctx context.Context, w io.Writer, vtop string, args []string, targets []scrape.Target, opts scrape.Options) (int, error) {
	interval := opts.Interval
	if interval <= 0 {
		interval = scrape.DefaultInterval
	}
	rec, err := f.Create(vtop, args, targets, interval, analysis.DefaultConfig())
	if err != nil {
		return code(err), err
	}
	opts.OnPage, opts.Now = rec.Page, record.WallClock
	poller, err := scrape.NewPoller(targets, opts)
	if err != nil {
		rec.Close()
		return record.ExitUsage, err
	}
	if f.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Duration)
		defer cancel()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the size limit ends the recording
		select {
		case <-rec.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	_ = poller.Run(ctx)
	stopped := rec.Err()
	if err := rec.Close(); err != nil {
		return exitFailure, err
	}
	fmt.Fprintf(w, "recorded %d scrapes of %d targets in %s (%s)\n", rec.Frames(), len(targets), f.Output, formatSize(rec.Size()))
	if stopped != nil && !errors.Is(stopped, record.ErrMaxSize) {
		return exitFailure, stopped
	}
	if stopped != nil {
		fmt.Fprintln(w, "stopped at --max-size")
	}
	return exitOK, nil
}

// Open reads the recording of vtop replay and says on w what was lost.
func (f ReplayFlags) Open(w io.Writer) (*record.Recording, error) {
	rec, err := record.Open(f.File)
	if err != nil {
		return nil, err
	}
	if rec.InProgress {
		fmt.Fprintf(w, "%s: still being recorded; replaying what is written so far\n", f.File)
	}
	if rec.Damage.Any() {
		fmt.Fprintf(w, "%s: %s\n", f.File, rec.Damage)
	}
	return rec, nil
}

// Source is the interactive replay: a paced monitor source for
// monitor.New(src, replay.Config(rec), output), whose controls the screen
// calls and whose Status().String() is the header line.
func (f ReplayFlags) Source(rec *record.Recording) (*replay.Source, error) {
	src, err := replay.New(rec, replay.Config(rec))
	if err != nil {
		return nil, &record.Error{Code: record.ExitData, Path: f.File, Err: err}
	}
	src.SetSpeed(f.Speed)
	return src, nil
}

// RunText is `vtop replay FILE --jsonl` and `vtop replay FILE --once
// [--json]`: out gets the reports, errOut what was lost. The screen mode
// is Source.
func (f ReplayFlags) RunText(out, errOut io.Writer) (int, error) {
	if f.JSON && !f.Once {
		return record.ExitUsage, &record.Error{Code: record.ExitUsage, Err: errors.New("--json goes with --once (use --jsonl for every report)")}
	}
	rec, err := f.Open(errOut)
	if err != nil {
		return code(err), err
	}
	cfg := replay.Config(rec)
	if f.JSONL {
		enc := json.NewEncoder(out)
		err := replay.Reports(rec, cfg, func(r analysis.Report) error { return enc.Encode(r) })
		return dataCode(err), err
	}
	last, err := replay.Last(rec, cfg)
	if err != nil {
		return dataCode(err), err
	}
	if f.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(last)
	} else {
		err = writeBrief(out, last)
	}
	if err != nil {
		return exitFailure, err
	}
	return stateCode(last), nil
}

// dataCode is the exit code of a replay error: a recording with nothing
// to replay is a data error.
func dataCode(err error) int {
	if errors.Is(err, replay.ErrNoReports) {
		return record.ExitData
	}
	return code(err)
}

// stateCode is the exit code of live --once: the worst replica decides.
func stateCode(r analysis.Report) int {
	c := exitOK
	for _, rep := range r.Replicas {
		switch rep.State {
		case analysis.StateDown:
			return exitDown
		case analysis.StateSlow, analysis.StateFull, analysis.StatePreempting, analysis.StateStale:
			c = exitDegraded
		}
	}
	return c
}

// writeBrief writes a replayed report as one line per replica; the full
// text form stays the watch command's (the command may use that instead).
func writeBrief(w io.Writer, r analysis.Report) error {
	fmt.Fprintf(w, "replayed report at %s, window %s\n", r.Time.Format("2006-01-02 15:04:05"), analysis.Num(r.WindowSeconds).Seconds())
	for _, rep := range r.Replicas {
		fmt.Fprintf(w, "%s  %s  %s\n", rep.Target, strings.ToUpper(rep.State.String()), strings.Join(rep.Reasons, "; "))
	}
	return nil
}

// Run is `vtop export FILE`: OpenMetrics to -o FILE or to out.
func (f ExportFlags) Run(out, errOut io.Writer) (int, error) {
	rec, err := record.Open(f.File)
	if err != nil {
		return code(err), err
	}
	if rec.Damage.Any() {
		fmt.Fprintf(errOut, "%s: %s\n", f.File, rec.Damage)
	}
	w := out
	if f.Output != "" {
		file, err := os.OpenFile(f.Output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return record.ExitUsage, err
		}
		defer file.Close()
		w = file
	}
	stats, err := export.Export(w, rec, export.Options{Job: f.Job, From: f.From, To: f.To})
	if err != nil {
		return exitFailure, err
	}
	fmt.Fprintf(errOut, "exported %d series, %d samples from %d pages\n", stats.Series, stats.Samples, stats.Pages)
	return exitOK, nil
}

// Run is `vtop diff BASELINE CANDIDATE`.
func (f DiffFlags) Run(out io.Writer) (int, error) {
	base, err := record.Open(f.Baseline)
	if err != nil {
		return code(err), err
	}
	cand, err := record.Open(f.Candidate)
	if err != nil {
		return code(err), err
	}
	cfg := analysis.DefaultConfig()
	cfg.SLOTTFT, cfg.SLOE2E = f.SLOTTFT, f.SLOE2E
	res, err := compare.Compare(base, cand, f.Baseline, f.Candidate, compare.Options{Skip: f.Skip, Length: f.Length, Config: cfg})
	if err != nil {
		if errors.Is(err, compare.ErrTooShort) {
			return record.ExitData, err
		}
		return exitFailure, err
	}
	if f.JSON {
		err = res.JSON(out)
	} else {
		err = res.Text(out)
	}
	if err != nil {
		return exitFailure, err
	}
	return exitOK, nil
}

// parseSize reads 1GiB, 500MB, 64KiB or a number of bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size (like 1GiB or 500MB)", s)
	}
	return int64(n * float64(mult)), nil
}

// formatSize writes a byte count for people.
func formatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
