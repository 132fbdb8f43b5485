package promsource

import (
	"time"

	"github.com/vtop-dev/vtop/safetext"
)

// Every target Prometheus scrapes for the fleet is a replica, the dead
// ones too: a server killed before the window (or before vtop began to
// read) has no series in it, only up = 0 at each scrape, and must still
// be DOWN in the report, counted in the fleet and its advice, live and in
// the past alike. Which failing targets are the fleet's cannot be read
// off their series (they have none); they are those of the fleet's jobs.

// fleetTargets tells which failing scrape targets are the fleet's
// replicas, from the targets that have series vtop reads.
type fleetTargets struct {
	group grouper
	jobs  map[string]bool // the jobs of the targets with series vtop reads
	names map[string]bool // the replicas those targets name
}

func newFleetTargets(g grouper) *fleetTargets {
	return &fleetTargets{group: g, jobs: map[string]bool{}, names: map[string]bool{}}
}

// add counts a replica with series vtop reads, by its name as shown and
// its targets.
func (f *fleetTargets) add(name string, targets map[scrapeTarget]bool) {
	f.names[name] = true
	for t := range targets {
		f.jobs[t.job] = true
	}
}

// owns reports whether a failing target, by its labels (up's), is a
// replica of the fleet: its job has targets with series vtop reads, and
// none of those names the replica it would be, whose sidecar it would
// then be (a sidecar's exporter is not the replica's business).
func (f *fleetTargets) owns(m labels) bool {
	return f.jobs[m.get(labelJob)] && !f.names[safetext.Sanitize(f.group.name(m))]
}

// failingNow reports whether the newest scrape of up's series failed.
func failingNow(up *sampleStream) bool {
	n := len(up.Values)
	return n > 0 && up.Values[n-1].Value == 0
}

// upLookBack is how far back a whole read (at start, after a failure)
// reads up, against the window an increment reads: a target dead for
// longer than the window then says since when, and its last good scrape,
// from Prometheus's record; the increments after carry the run on. It is
// Prometheus's default lookback period, over which a target it no longer
// scrapes still answers an instant query. up is one series per target, so
// this costs little beside the raw read of the same refresh.
const upLookBack = 5 * time.Minute

// upQuery is the up query of the refresh in progress, whose window is
// width: over upLookBack on a whole read, else over the window.
func (s *Source) upQuery(width time.Duration) string {
	if s.whole {
		return s.q.up(max(width, upLookBack))
	}
	return s.q.up(width)
}
