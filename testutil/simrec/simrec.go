// Package simrec makes recordings of a simulated fleet for tests, in
// virtual time: minutes of scrapes in a fraction of a second, the same
// every run. Only tests import it.
package simrec

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// Start is the recorded time of the first scrape of every Record.
var Start = time.Unix(1_800_000_000, 0)

// Record records a fleet of sim options o in virtual time, one page per
// replica every interval for steps intervals, as `vtop record` does (no
// analysis, so no ticks), after two simulated minutes of warm-up. The
// replicas are named 127.0.0.1:8000, 127.0.0.2:8000, …
func Record(t testing.TB, o sim.Options, steps int, every time.Duration) string {
	t.Helper()
	fleet, err := sim.NewFleet(o)
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	var targets []scrape.Target
	for i := range fleet.Replicas() {
		name := fmt.Sprintf("127.0.0.%d:8000", i+1)
		targets = append(targets, scrape.Target{Name: name, URL: "http://" + name + "/metrics"})
	}
	path := filepath.Join(t.TempDir(), "fleet.vtrec")
	rec, err := record.Create(path, record.Options{Targets: targets, Interval: every, Start: Start, Config: analysis.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	for s := range steps {
		fleet.Advance(every)
		for i, r := range fleet.Replicas() {
			body, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
			if err != nil {
				t.Fatal(err)
			}
			rec.Page(scrape.Page{Target: targets[i], Time: Start.Add(time.Duration(s+1) * every), Body: body, ContentType: "text/plain; version=0.0.4"})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// OneReplica is the handler of a one-replica simulated fleet: what the test
// binary serves when it plays an inference server's process
// (testutil.MainIfEngine).
func OneReplica() http.Handler {
	f, err := sim.NewFleet(sim.Options{Replicas: 1})
	if err != nil {
		panic(err)
	}
	return f.Replicas()[0].Handler()
}
