package command

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/compare"
	"github.com/vtop-dev/vtop/export"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/safetext"
)

// Export is `vtop export FILE`: a recording as OpenMetrics text with
// timestamps, for `promtool tsdb create-blocks-from openmetrics`.
type Export struct {
	File        string    `arg:"" placeholder:"FILE" help:"The recording."`
	Output      string    `short:"o" placeholder:"OUT" help:"Write to OUT, which must not exist (default: standard output). Then: promtool tsdb create-blocks-from openmetrics OUT DIR."`
	OpenMetrics bool      `name:"openmetrics" default:"true" help:"Write OpenMetrics text (the one format so far, and the default)."`
	Job         string    `default:"vllm" help:"The job label of every series."`
	From        time.Time `placeholder:"TIME" help:"Export the scrapes from TIME on (RFC 3339)."`
	To          time.Time `placeholder:"TIME" help:"Export the scrapes up to TIME (RFC 3339)."`
	recordingMemoryFlags
}

// Run writes the export and says on stderr what it holds. A file left
// half-written by a failure is removed.
func (e *Export) Run(env *Env) error {
	if !e.OpenMetrics {
		return usagef("--openmetrics=false: OpenMetrics is the one format export writes so far")
	}
	if !e.To.IsZero() && e.To.Before(e.From) {
		return usagef("--to %s is before --from %s", e.To.Format(time.RFC3339), e.From.Format(time.RFC3339))
	}
	rec, err := e.open(e.File, env)
	if err != nil {
		return err
	}
	defer rec.Close()
	out, file := env.Stdout, (*os.File)(nil)
	if e.Output != "" && e.Output != "-" {
		file, err = os.OpenFile(e.Output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			return usagef("-o %s: the file exists; choose another name", e.Output)
		} else if err != nil {
			return usagef("-o: %v", err)
		}
		out = file
	}
	stats, err := export.Export(out, rec, export.Options{Job: e.Job, From: e.From, To: e.To})
	if file != nil {
		if err = errors.Join(err, file.Close()); err != nil {
			_ = os.Remove(e.Output)
		}
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(env.Stderr, "vtop: exported %d series, %d samples from %d scrapes\n", stats.Series, stats.Samples, stats.Pages)
	if stats.Skipped > 0 {
		fmt.Fprintf(env.Stderr, "vtop: %s: skipped %d scrapes that could not be read (the first: %s)\n", e.File, stats.Skipped, safetext.Sanitize(stats.Problem))
	}
	return nil
}

// Diff is `vtop diff BASELINE CANDIDATE`: two recordings compared figure
// by figure, with their loads and a one-line verdict.
type Diff struct {
	Baseline  string        `arg:"" placeholder:"BASELINE" help:"The recording of the baseline."`
	Candidate string        `arg:"" placeholder:"CANDIDATE" help:"The recording of the candidate."`
	JSON      bool          `help:"Print the comparison as one JSON object."`
	Window    string        `placeholder:"[FROM:]TO" help:"The part of each recording to compare, as offsets from its first report: 5m is the first five minutes, 2m:7m from minute 2 to minute 7, 2m: from minute 2 to the end (default: all of it)."`
	SLOTTFT   time.Duration `name:"slo-ttft" default:"${slo_ttft}" help:"TTFT within which a request counts as goodput."`
	SLOE2E    time.Duration `name:"slo-e2e" help:"e2e latency within which a request counts as goodput (default: TTFT only)."`
	recordingMemoryFlags
}

// Run prints the comparison.
func (d *Diff) Run(env *Env) error {
	skip, length, err := parseWindow(d.Window)
	if err != nil {
		return usagef("--window %q: %v", d.Window, err)
	}
	if d.SLOTTFT <= 0 || d.SLOE2E < 0 {
		return usagef("--slo-ttft and --slo-e2e: want positive latencies")
	}
	base, err := d.open(d.Baseline, env)
	if err != nil {
		return err
	}
	defer base.Close()
	cand, err := d.open(d.Candidate, env)
	if err != nil {
		return err
	}
	defer cand.Close()
	cfg := analysis.DefaultConfig()
	cfg.SLOTTFT, cfg.SLOE2E = d.SLOTTFT, d.SLOE2E
	res, err := compare.Compare(base, cand, d.Baseline, d.Candidate, compare.Options{Skip: skip, Length: length, Config: cfg})
	if errors.Is(err, compare.ErrTooShort) {
		// compare names the recording after the error, on a line of its own.
		msg := strings.ReplaceAll(err.Error(), "\n", ": ")
		return &record.Error{Code: ExitData, Err: fmt.Errorf("%s (--window %s)", msg, cmp.Or(d.Window, "all"))}
	}
	if err != nil {
		return err
	}
	if d.JSON {
		err = res.JSON(env.Stdout)
	} else {
		err = res.Text(env.Stdout)
	}
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	return nil
}

// parseWindow reads --window: "" (everything), "TO" (the first TO),
// "FROM:TO" or "FROM:" (to the end). It returns what to skip at the start
// and how much to compare after it (0: to the end).
func parseWindow(s string) (skip, length time.Duration, err error) {
	if s == "" {
		return 0, 0, nil
	}
	from, to, ranged := strings.Cut(s, ":")
	if !ranged {
		from, to = "0s", s
	}
	if from == "" {
		from = "0s"
	}
	if skip, err = time.ParseDuration(from); err != nil || skip < 0 {
		return 0, 0, fmt.Errorf("%q is not an offset such as 2m", from)
	}
	if to == "" {
		return skip, 0, nil
	}
	end, err := time.ParseDuration(to)
	if err != nil || end <= skip {
		return 0, 0, fmt.Errorf("want [FROM:]TO with TO after FROM, such as 5m or 2m:7m")
	}
	return skip, end - skip, nil
}
