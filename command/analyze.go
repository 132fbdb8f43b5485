package command

import (
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
	Before  string  `arg:"" type:"existingfile" help:"The first saved /metrics page."`
	After   string  `arg:"" type:"existingfile" help:"The second saved /metrics page."`
	Seconds float64 `required:"" help:"Seconds between the two readings."`
	JSON    bool    `help:"Print the report as one JSON object."`
	analysisFlags
}

// readingEpoch anchors the two readings in time; only their distance
// matters to the figures.
var readingEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Run reports on the two pages; the report's states set the exit code.
func (a *Analyze) Run(env *Env) error {
	if a.Seconds <= 0 {
		return usagef("--seconds %g: the readings must be taken some seconds apart", a.Seconds)
	}
	if err := a.analysisFlags.validate(); err != nil {
		return err
	}
	span := time.Duration(a.Seconds * float64(time.Second))
	ingester := page.NewIngester()
	before, err := readPage(ingester, a.Before, readingEpoch)
	if err != nil {
		return err
	}
	after, err := readPage(ingester, a.After, readingEpoch.Add(span))
	if err != nil {
		return err
	}
	target := catalogue.Readings{Target: filepath.Base(a.After), Samples: []catalogue.Sample{before, after}}
	report := analysis.Analyze(after.Time, []catalogue.Readings{target}, a.config(span, 1), nil)
	return printReport(env.Stdout, report, a.JSON)
}

// readPage ingests one saved page as a sample taken at t. A page that does
// not parse is an error naming the file.
func readPage(in *page.Ingester, path string, t time.Time) (catalogue.Sample, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return catalogue.Sample{}, err
	}
	sample, err := in.Ingest(body, "")
	if err != nil {
		return catalogue.Sample{}, fmt.Errorf("%s: %w", path, err)
	}
	sample.Time = t
	return sample, nil
}
