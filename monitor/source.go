package monitor

import (
	"context"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// Feed is the core every source has: the direct scraper (package scrape),
// a Prometheus server's HTTP API (package promsource) or a recording
// (package replay). A source knows nothing of the analysis or the screen: it
// delivers timestamped samples per target, and the monitor does the rest.
type Feed interface {
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

// Source is a Feed with what more it can do, as fields: a nil field is
// something this source cannot do. The direct scraper is a bare Feed
// (Of); a Prometheus server fills every field but Steps; a recording fills
// Steps alone. The command that builds a source says what it can do.
type Source struct {
	Feed
	// ReadingsAt returns the readings with the evaluation time they all
	// belong to, which moves only when they change (a Prometheus server's
	// refresh). Asked one after the other, a refresh landing in between
	// would pair one refresh's readings with the next one's time, a
	// window that ends past the newest samples.
	ReadingsAt func(dst []catalogue.Readings) ([]catalogue.Readings, time.Time)
	// Status is the health of a source that can fail as a whole (a
	// Prometheus server): the header shows Problem, and the age of
	// LastGood when not OK.
	Status func() catalogue.SourceStatus
	// History returns the charted figures of every target over the span
	// that ends now, at most points per target, evenly spaced, from a
	// source that already holds the past: the screen starts with full
	// charts instead of empty ones. Text in it is safe to draw.
	History func(ctx context.Context, span time.Duration, points int) ([]catalogue.TargetHistory, error)
	// SetWindow tells a source that fetches exactly the analysis window
	// at each refresh (a Prometheus server is asked for the window's raw
	// samples), rather than keeping everything it read, the window: at
	// start and on every change. Such a source holds the window: a
	// one-off report is one refresh, without waiting.
	SetWindow func(d time.Duration)
	// SetWanted names the targets a source reads in more detail when they
	// are wanted (nil: none): a Prometheus source that leaves a large
	// fleet's buckets to the server reads the raw buckets of those. The UI
	// names the replica it details, through Monitor.SetWanted.
	SetWanted func(targets []string)
	// SetInView names the targets on screen, which a source reads in more
	// detail than the rest of a large fleet (a Prometheus source that
	// reads its store's recording rules reads their raw series). It says
	// whether the new set calls for a read now (it names a target the
	// source did not read in detail); the UI names them through
	// Monitor.SetInView.
	SetInView func(targets []string) (readNow bool)
	// Steps, for a source that sets the pace of the reports itself (a
	// replay, whose reports fall at the recorded evaluation times whatever
	// the speed), delivers one Step per report to make: the monitor then
	// never reads or refreshes on its own ticker.
	Steps <-chan Step
}

// Of is a source that can do no more than its Feed (the direct scraper).
func Of(feed Feed) Source { return Source{Feed: feed} }

// Step is one report to make: its time and readings, and for a paced
// source what else the report calls for, carried so that the source can
// move on at once.
type Step struct {
	Now      time.Time
	Readings []catalogue.Readings
	// Window, when positive, is the window of this report: the one live
	// mode used when it was recorded. A window set with SetWindow wins.
	Window time.Duration
	// Restart makes Prev the previous report (hysteresis and events)
	// instead of the monitor's last one: the source jumped.
	Restart bool
	Prev    *analysis.Report
}

// HoldsWindow reports whether the source reads the whole window at each
// refresh (SetWindow): a one-off report of it needs no wait.
func (s Source) HoldsWindow() bool { return s.SetWindow != nil }

// step reads the source now, reusing dst: the readings and the time to
// evaluate them at.
func (s Source) step(dst []catalogue.Readings) Step {
	if s.ReadingsAt != nil {
		readings, now := s.ReadingsAt(dst)
		return Step{Now: now, Readings: readings}
	}
	return Step{Readings: s.Readings(dst), Now: s.Now()}
}
