package record

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/vtop-dev/vtop/catalogue"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// textPlain is the Content-Type vLLM's Python server sends.
const textPlain = "text/plain; version=0.0.4; charset=utf-8"

// simFleet builds a virtual-time fleet of a scenario, warmed up so that
// counters and histograms have moved.
func simFleet(t testing.TB, o sim.Options) *sim.Fleet {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = 7
	}
	f, err := sim.NewFleet(o)
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Minute)
	return f
}

// render returns replica r's page in format.
func render(t testing.TB, r *sim.Replica, format expfmt.Format) []byte {
	t.Helper()
	b, err := r.Render(format)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// simTargets names n fake targets.
func simTargets(n int) []scrape.Target {
	var ts []scrape.Target
	for i := range n {
		name := "10.0.0." + string(rune('1'+i)) + ":8000"
		ts = append(ts, scrape.Target{Name: name, URL: "http://" + name + "/metrics"})
	}
	return ts
}

// scrapeRec is one scrape fed to a recorder in a test.
type scrapeRec struct {
	target int
	page   scrape.Page
}

// recordFleet plays fleet for steps intervals of every, feeding each
// replica's page to a new recording at path; it returns what it fed.
func recordFleet(t testing.TB, path string, fleet *sim.Fleet, steps int, every time.Duration, opts Options) []scrapeRec {
	t.Helper()
	reps := fleet.Replicas()
	opts.Targets = simTargets(len(reps))
	opts.Interval = every
	opts.Config = analysis.DefaultConfig()
	start := time.Unix(1_800_000_000, 0)
	opts.Start = start
	rec, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var fed []scrapeRec
	for s := range steps {
		fleet.Advance(every)
		for i, r := range reps {
			p := scrape.Page{
				Target: opts.Targets[i], Time: start.Add(time.Duration(s+1) * every).Add(time.Duration(i) * time.Millisecond),
				Body: render(t, r, expfmt.NewFormat(expfmt.TypeTextPlain)), ContentType: textPlain,
			}
			rec.Page(p)
			fed = append(fed, scrapeRec{i, p})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return fed
}

func tempPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "fleet.vtrec")
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleString renders a sample so that equal samples (NaN included)
// render alike.
func sampleString(s catalogue.Sample) string { return fmt.Sprintf("%+v", s) }

var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// ExitCode returns the exit code err calls for: an *Error's code, else
// fallback.
func ExitCode(err error, fallback int) int {
	var re *Error
	if errors.As(err, &re) {
		return re.Code
	}
	return fallback
}

// Parse reads a recording from memory (it keeps data). It fails only
// when there is nothing to replay: not a recording, a newer format, no
// header, no targets; damage after the header is reported in Damage.
func Parse(data []byte) (*Recording, error) {
	return parse(bytes.NewReader(data), int64(len(data)), Limits{})
}
