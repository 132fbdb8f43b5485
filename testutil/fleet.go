package testutil

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Fleet is what ServeFleet serves: a simulated fleet (a *sim.Fleet). An
// interface, so that the simulator's own tests can use this package.
type Fleet interface {
	Start(ctx context.Context) ([]string, error)
	Close() error
}

// ServeFleet starts a simulated fleet on loopback until ctx ends (or the
// test does) and returns the /metrics URL of each replica, in index order.
func ServeFleet(ctx context.Context, t testing.TB, fleet Fleet) []string {
	t.Helper()
	urls, err := fleet.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Close() })
	return urls
}

// Clock is a wall clock the test moves by hand: the clock of a fleet served
// in real-time mode and of the poller that scrapes it. Safe for concurrent
// use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
