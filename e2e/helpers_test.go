package e2e

import (
	"testing"

	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
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
