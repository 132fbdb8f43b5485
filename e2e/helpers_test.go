package e2e

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// parseTargets turns the URLs of a served fleet into scrape targets, in
// the same order.
func parseTargets(t testing.TB, urls []string) []scrape.Target {
	t.Helper()
	targets := make([]scrape.Target, len(urls))
	for i, u := range urls {
		var err error
		if targets[i], err = scrape.ParseTarget(u); err != nil {
			t.Fatal(err)
		}
	}
	return targets
}

// firstUnsafe returns the first of texts that is not safe to draw on a
// terminal (a control character or an escape sequence).
func firstUnsafe(texts ...string) (string, bool) {
	for _, s := range texts {
		if !safetext.IsSafe(s) {
			return s, true
		}
	}
	return "", false
}

// serveScenario serves one simulated replica of the scenario on loopback
// until the test ends, after a warm-up long enough for its state to form,
// and returns its URL.
func serveScenario(t *testing.T, scenario sim.Scenario) string {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: scenario, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	return testutil.ServeFleet(t.Context(), t, fleet)[0]
}
