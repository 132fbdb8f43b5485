package command

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// Analyze is the "two readings" workflow: two saved pages, N seconds
// apart, become rates, Little's law times and quantiles.
type Analyze struct {
	Before  string    `arg:"" type:"existingfile" help:"The first saved /metrics page."`
	After   string    `arg:"" type:"existingfile" help:"The second saved /metrics page, taken after the first."`
	Seconds *float64  `placeholder:"N" help:"Seconds between the two readings (default: between the files' modification times)."`
	Time    time.Time `placeholder:"TIME" help:"When AFTER was taken, RFC 3339 such as 2026-03-01T12:00:00Z (default: its file's modification time)."`
	JSON    bool      `help:"Print the report as one JSON object."`
	analysisFlags
}

// Run reports on the two pages; the report's states set the exit code.
// Pages that are not two readings of one server, in order, end in a
// data error: their rates would be wrong, not merely imprecise.
func (a *Analyze) Run(env *Env) error {
	if a.Seconds != nil && *a.Seconds <= 0 {
		return usagef("--seconds %g: the readings must be taken some seconds apart", *a.Seconds)
	}
	if err := a.analysisFlags.validate(); err != nil {
		return err
	}
	ingester := page.NewIngester()
	before, beforeTime, err := readPage(ingester, a.Before)
	if err != nil {
		return err
	}
	after, afterTime, err := readPage(ingester, a.After)
	if err != nil {
		return err
	}
	if err := compareReadings(before, after); err != nil {
		return dataf("%s and %s: %v", a.Before, a.After, err)
	}
	span, err := a.span(beforeTime, afterTime)
	if err != nil {
		return err
	}
	at := a.Time
	if at.IsZero() {
		at = afterTime
	}
	before.Time, after.Time = at.Add(-span), at
	target := catalogue.Readings{Target: filepath.Base(a.After), Samples: []catalogue.Sample{before, after}}
	report := analysis.Analyze(at, []catalogue.Readings{target}, a.config(span, 1), nil)
	return printReport(env.Stdout, report, a.JSON)
}

// span is the time between the readings: --seconds, or else the distance
// between the files' modification times when AFTER's is later. Copied
// files lose their times (scp, a paste into a ticket), so times that do
// not say are a question for the user, not a guess.
func (a *Analyze) span(before, after time.Time) (time.Duration, error) {
	if a.Seconds != nil {
		return time.Duration(*a.Seconds * float64(time.Second)), nil
	}
	d := after.Sub(before).Round(time.Second)
	if d < time.Second {
		return 0, usagef("give --seconds: the files' modification times do not say how far apart the readings are "+
			"(%s is not newer than %s; copies lose their times)", a.After, a.Before)
	}
	return d, nil
}

// readPage ingests one saved page and says when its file was written. A
// file is complete as saved, so a missing final newline is added: the
// parser refuses a page without one as cut off in transit, which a file
// copied out of a terminal or an editor is not.
func readPage(in *page.Ingester, path string) (catalogue.Sample, time.Time, error) {
	info, err := os.Stat(path)
	if err != nil {
		return catalogue.Sample{}, time.Time{}, err
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return catalogue.Sample{}, time.Time{}, err
	}
	if len(body) > 0 && !bytes.HasSuffix(body, []byte("\n")) {
		body = append(body, '\n')
	}
	sample, err := in.Ingest(body, "")
	if err != nil {
		return sample, time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return sample, info.ModTime(), nil
}
