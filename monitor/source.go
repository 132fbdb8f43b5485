package monitor

import (
	"context"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// Source is where readings come from: the direct scraper (package scrape),
// a Prometheus server's HTTP API (package promsource) or a recording
// (package replay). A source knows nothing of the analysis or the screen: it
// delivers timestamped samples per target, and the monitor does the rest.
type Source interface {
	// Run collects readings until ctx is done. It returns an error only
	// when the source cannot run at all.
	Run(ctx context.Context) error
	// Readings appends every target's samples, oldest first, to dst[:0]
	// and returns it; the targets keep their order from call to call.
	// Passing the previous result back reuses its slices. The samples may
	// be the source's own rather than a copy (the scraper lends each
	// target's window): they stay as they are until the next call, so a
	// caller must be done with one result before it asks for the next,
	// and must never modify them. Safe to call while Run runs.
	Readings(dst []catalogue.Readings) []catalogue.Readings
	// Keep asks the source to hold at least d of readings per target from
	// now on (the analysis window, plus what --once waits).
	Keep(d time.Duration)
	// Refresh asks for new readings of every target at once; the channel
	// is closed when they are in (or Run has ended).
	Refresh() <-chan struct{}
	// Interval is the time between two readings of one target.
	Interval() time.Duration
	// Now is the source's clock: the time a report is evaluated at.
	Now() time.Time
}

// Evaluated is a Source whose readings all belong to one evaluation time
// that moves only when they change (a Prometheus server's refresh).
// ReadingsAt returns both at once: asked one after the other, a refresh
// landing in between would pair one refresh's readings with the next
// one's time, a window that ends past the newest samples.
type Evaluated interface {
	ReadingsAt(dst []catalogue.Readings) ([]catalogue.Readings, time.Time)
}

// Wanting is a Source that reads some targets in more detail when told
// which are wanted: a Prometheus source that leaves a large fleet's
// buckets to the server reads the raw buckets of those. A source knows
// nothing of the screen: the UI names the replica it details, through
// Monitor.SetWanted.
type Wanting interface {
	SetWanted(targets []string)
}

// Viewing is a Source that reads the targets on screen in more detail
// than the rest of a large fleet: a Prometheus source that reads its
// store's recording rules reads the raw series of those. It says whether
// the new set calls for a read now (it names a target the source did not
// read in detail); the UI names the targets through Monitor.SetInView.
type Viewing interface {
	SetInView(targets []string) (readNow bool)
}

// readingsNow returns the source's readings and the time to evaluate them
// at.
func readingsNow(source Source, dst []catalogue.Readings) ([]catalogue.Readings, time.Time) {
	if e, ok := source.(Evaluated); ok {
		return e.ReadingsAt(dst)
	}
	readings := source.Readings(dst)
	return readings, source.Now()
}
