package main

import (
	"context"
	"testing"

	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// serveFleet starts a simulated fleet on loopback until ctx ends (or the
// test does) and returns its replicas as vtop targets, in index order.
func serveFleet(ctx context.Context, t *testing.T, fleet *sim.Fleet) []scrape.Target {
	t.Helper()
	urls, err := fleet.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Close() })
	targets := make([]scrape.Target, len(urls))
	for i, u := range urls {
		if targets[i], err = scrape.ParseTarget(u); err != nil {
			t.Fatal(err)
		}
	}
	return targets
}
