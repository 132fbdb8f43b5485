package promsource

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A replica may be several scrape targets: the instances of a group
// (--group-by job), or a pod's server and its sidecar. Their series are
// built apart, one instance each, and combined here into one series of
// samples the analysis reads as it reads any replica's. Summing the raw
// values of unlike things went wrong every way: the instances are
// scraped at different times, so one timestamp held some of them and not
// others; their counters start at different values and reset apart, so
// the sum went up and down and every drop read as a restart.
//
// The combined samples are taken on the union of the instances' scrape
// times, plus the edges of the window. At each time every instance adds:
//   - a counter: its value with its own resets compensated (Prometheus's
//     reset rule), interpolated between its scrapes, and outside them
//     extended with its average slope exactly as far as PromQL's rate()
//     extrapolates that series (to the window's edge when it is closer
//     than 1.1 average intervals, else half an interval; never below
//     zero). The combined counter never drops, and its increase from one
//     edge of the window to the other is the sum of the instances'
//     rate() increases: the group's rate is sum(rate(x[w])).
//   - a gauge: its newest value at or before that time (as an instant
//     query's sum() reads it), nothing before its first scrape or after
//     a failed one. Gauges add up (running, waiting) except those that
//     do not: KV cache usage is averaged, the sleep level is the deepest.
//
// A restart of one instance is told as that instance's, in a warning;
// the group's process start time is unknown, so the group never reads as
// restarted. An instance that fails while others answer is a warning;
// the group is DOWN only when every instance fails.

// instanceTrack is one instance of a group: its good samples and what
// reading its counters at any time needs.
type instanceTrack struct {
	name    string
	good    []catalogue.Sample
	ms      []int64 // the good samples' times
	failed  int64   // time of a failure newer than its newest good sample; 0 for none
	failure *catalogue.Sample
	avg     float64 // average interval between its good samples, in ms
	restart string  // when and how it restarted in the window; "" for none
	// counters holds, for each counter field present, its values at the
	// good samples with resets compensated and gaps filled.
	counters map[field][]float64
}

// fieldKind is what part of a sample a field is.
type fieldKind uint8

const (
	fScalar fieldKind = iota
	fFinished
	fBucket
	fSum
	fCount
	fSpecPos
	fGC
	fHTTP
	fRSS
	fKVCapacity
)

// field is one value of a sample: a scalar, a finish reason, one bucket
// (by its bound), the _sum or _count of a histogram, a speculative
// position, or a process figure.
type field struct {
	kind fieldKind
	i    int
	le   float64
}

// isCounter reports whether the field is a counter.
func (f field) isCounter() bool {
	switch f.kind {
	case fScalar:
		return catalogue.Scalar(f.i).IsCounter()
	case fRSS, fKVCapacity:
		return false
	}
	return true
}

// get reads the field of a sample; NaN when absent.
func (f field) get(s *catalogue.Sample) float64 {
	t := &s.Total
	switch f.kind {
	case fScalar:
		return t.Scalars[f.i]
	case fFinished:
		return t.Finished[f.i]
	case fBucket:
		b := t.Histograms[f.i]
		if i, ok := slices.BinarySearch(b.Bounds, f.le); ok && i < len(b.Counts) {
			return b.Counts[i]
		}
		return math.NaN()
	case fSum:
		return t.Histograms[f.i].Sum
	case fCount:
		return t.Histograms[f.i].Count
	case fSpecPos:
		if f.i < len(t.SpecAcceptedPerPos) {
			return t.SpecAcceptedPerPos[f.i]
		}
		return math.NaN()
	case fGC:
		return s.GCCollections
	case fHTTP:
		return s.HTTPRequests
	case fRSS:
		return s.ProcessRSSBytes
	case fKVCapacity:
		return s.KVCapacityTokens
	}
	return math.NaN()
}

// fieldsOf lists the fields a sample has a value for.
func fieldsOf(s *catalogue.Sample, into map[field]bool) {
	t := &s.Total
	add := func(f field, v float64) {
		if !math.IsNaN(v) {
			into[f] = true
		}
	}
	for i, v := range t.Scalars {
		add(field{kind: fScalar, i: i}, v)
	}
	for i, v := range t.Finished {
		add(field{kind: fFinished, i: i}, v)
	}
	for h, b := range t.Histograms {
		for i, le := range b.Bounds {
			if i < len(b.Counts) {
				add(field{kind: fBucket, i: h, le: le}, b.Counts[i])
			}
		}
		if b.Present() {
			add(field{kind: fSum, i: h}, b.Sum)
			add(field{kind: fCount, i: h}, b.Count)
		}
	}
	for i, v := range t.SpecAcceptedPerPos {
		add(field{kind: fSpecPos, i: i}, v)
	}
	add(field{kind: fGC}, s.GCCollections)
	add(field{kind: fHTTP}, s.HTTPRequests)
	add(field{kind: fRSS}, s.ProcessRSSBytes)
	add(field{kind: fKVCapacity}, s.KVCapacityTokens)
}

// newTrack reads one instance's samples (oldest first; failures among
// them) for combining.
func newTrack(name string, samples []catalogue.Sample) *instanceTrack {
	tr := &instanceTrack{name: name, counters: map[field][]float64{}}
	for i := range samples {
		s := &samples[i]
		if !s.OK() {
			if len(tr.good) == 0 || s.Time.After(tr.good[len(tr.good)-1].Time) {
				tr.failed, tr.failure = s.Time.UnixMilli(), s
			}
			continue
		}
		if !hasFigures(s) {
			continue // the reading before the window (watchedBefore)
		}
		tr.good = append(tr.good, *s)
		tr.ms = append(tr.ms, s.Time.UnixMilli())
		tr.failed, tr.failure = 0, nil
	}
	if n := len(tr.ms); n >= 2 {
		tr.avg = float64(tr.ms[n-1]-tr.ms[0]) / float64(n-1)
	}
	present := map[field]bool{}
	for i := range tr.good {
		fieldsOf(&tr.good[i], present)
	}
	var resetAt int64
	for f := range present {
		if !f.isCounter() {
			continue
		}
		vs := make([]float64, len(tr.good))
		for i := range tr.good {
			vs[i] = f.get(&tr.good[i])
		}
		at := adjustCounter(vs, tr.ms)
		if at > 0 && (resetAt == 0 || at < resetAt) {
			resetAt = at
		}
		tr.counters[f] = vs
	}
	tr.restart = restartOf(tr.good, resetAt)
	return tr
}

// hasFigures reports whether a good sample carries any value: the
// reading just before the window that tells the analysis Prometheus
// watched the whole window carries none.
func hasFigures(s *catalogue.Sample) bool {
	present := map[field]bool{}
	fieldsOf(s, present)
	return len(present) > 0 || !math.IsNaN(s.ProcessStartTime)
}

// adjustCounter compensates the resets of a counter's values in place
// (each drop adds the value just before it, Prometheus's rule), fills
// the values it lacks from their neighbours, and returns the time of the
// first reset (0 for none).
func adjustCounter(vs []float64, ms []int64) int64 {
	first := slices.IndexFunc(vs, func(v float64) bool { return !math.IsNaN(v) })
	if first < 0 {
		return 0
	}
	for i := range first {
		vs[i] = vs[first]
	}
	var offset float64
	var resetAt int64
	prev := vs[first]
	for i := first + 1; i < len(vs); i++ {
		raw := vs[i]
		if math.IsNaN(raw) {
			vs[i] = prev + offset
			continue
		}
		if raw < prev {
			offset += prev
			if resetAt == 0 {
				resetAt = ms[i]
			}
		}
		prev = raw
		vs[i] = raw + offset
	}
	return resetAt
}

// restartOf says when and how an instance restarted in its window: its
// process start time changing, else a counter going down at resetAt.
func restartOf(good []catalogue.Sample, resetAt int64) string {
	last := math.NaN()
	for i := range good {
		v := good[i].ProcessStartTime
		if math.IsNaN(v) {
			continue
		}
		if !math.IsNaN(last) && v != last {
			return good[i].Time.Format("15:04:05") + " (process_start_time_seconds changed)"
		}
		last = v
	}
	if resetAt > 0 {
		return time.UnixMilli(resetAt).Format("15:04:05") + " (a counter went down)"
	}
	return ""
}

// extension is how far PromQL's rate() extrapolates a series whose
// samples are avg apart beyond its first or last sample, toward an edge
// gap away: all the way when the edge is closer than 1.1 intervals, else
// half an interval.
func extension(gap, avg float64) float64 {
	if gap < 1.1*avg {
		return gap
	}
	return min(avg/2, gap)
}

// counterAt is the instance's counter at ms, for a window from
// startMs to endMs: interpolated between its samples; before the first
// and after the last, extended with its average slope, as far as rate()
// extrapolates that series toward the window's edge and no further (and
// never below zero when it starts at zero or above), flat beyond. The
// value never drops as ms grows.
func (tr *instanceTrack) counterAt(vs []float64, ms, startMs, endMs int64) float64 {
	n := len(tr.ms)
	if n == 1 {
		return vs[0]
	}
	slope := (vs[n-1] - vs[0]) / float64(tr.ms[n-1]-tr.ms[0])
	switch {
	case ms <= tr.ms[0]:
		first := vs[0] - slope*extension(float64(max(tr.ms[0]-startMs, 0)), tr.avg)
		if vs[0] >= 0 && first < 0 {
			first = 0
		}
		return max(first, vs[0]-slope*float64(tr.ms[0]-ms))
	case ms >= tr.ms[n-1]:
		last := vs[n-1] + slope*extension(float64(max(endMs-tr.ms[n-1], 0)), tr.avg)
		return min(last, vs[n-1]+slope*float64(ms-tr.ms[n-1]))
	}
	i, found := slices.BinarySearch(tr.ms, ms)
	if found {
		return vs[i]
	}
	a, b := tr.ms[i-1], tr.ms[i]
	return vs[i-1] + (vs[i]-vs[i-1])*float64(ms-a)/float64(b-a)
}

// latest returns the instance's newest good sample at or before ms, nil
// before its first one or after a failure newer than it.
func (tr *instanceTrack) latest(ms int64) *catalogue.Sample {
	i, found := slices.BinarySearch(tr.ms, ms)
	if found {
		i++
	}
	if i == 0 || (tr.failed != 0 && tr.failed <= ms) {
		return nil
	}
	return &tr.good[i-1]
}

// combine turns the samples of a replica's instances (named, each oldest
// first) into the replica's samples: one instance's are its own; several
// are combined as the comment above says. windowStart and at are the
// window the source read; watched is the reading just before the window
// to put first, if any.
func combine(names []string, parts [][]catalogue.Sample, windowStart, at time.Time, watched *catalogue.Sample) []catalogue.Sample {
	tracks := make([]*instanceTrack, 0, len(parts))
	for i, p := range parts {
		if tr := newTrack(names[i], p); len(tr.good) > 0 || tr.failure != nil {
			tracks = append(tracks, tr)
		}
	}
	var grid []int64
	alive, counted := 0, 0
	var warnings []string
	for _, tr := range tracks {
		grid = append(grid, tr.ms...)
		if slices.ContainsFunc(tr.good, func(s catalogue.Sample) bool { return s.HasVLLM }) {
			counted++ // a sidecar's process figures are no instance of the server
		}
		switch {
		case tr.failure != nil:
			warnings = append(warnings, fmt.Sprintf("instance %s: %s", tr.name, tr.failure.Err))
		case len(tr.good) > 0:
			alive++
		}
		if tr.restart != "" {
			warnings = append(warnings, fmt.Sprintf("instance %s restarted at %s; the group's rates count across it", tr.name, tr.restart))
		}
	}
	if alive > 0 && !windowStart.IsZero() {
		// The edges of the window: the combined counters' increase
		// between them is the sum of the instances' rate() increases.
		grid = append(grid, windowStart.UnixMilli(), at.UnixMilli())
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	if alive > 0 {
		last := at.UnixMilli()
		for len(grid) > 0 && grid[len(grid)-1] > last {
			grid = grid[:len(grid)-1]
		}
	}
	bounds := unionBounds(tracks)
	out := make([]catalogue.Sample, 0, len(grid)+len(tracks)+1)
	if watched != nil {
		out = append(out, *watched)
	}
	var startMs, endMs int64 // the window; without one, the samples' span
	if len(grid) > 0 {
		startMs, endMs = grid[0], grid[len(grid)-1]
	}
	if !windowStart.IsZero() {
		startMs, endMs = windowStart.UnixMilli(), at.UnixMilli()
	}
	for _, ms := range grid {
		out = append(out, combineAt(tracks, ms, startMs, endMs, bounds, counted, warnings))
	}
	if alive == 0 {
		// Every instance fails: the group is DOWN, with their failures.
		var failed []catalogue.Sample
		for _, tr := range tracks {
			if tr.failure != nil {
				f := *tr.failure
				f.Err = fmt.Sprintf("instance %s: %s", tr.name, f.Err)
				failed = append(failed, f)
			}
		}
		out = mergeFailures(out, failed)
	}
	return out
}

// unionBounds is, per histogram, the union of the instances' bounds.
func unionBounds(tracks []*instanceTrack) [catalogue.NumHistograms][]float64 {
	var out [catalogue.NumHistograms][]float64
	for h := range out {
		var all []float64
		for _, tr := range tracks {
			for i := range tr.good {
				all = append(all, tr.good[i].Total.Histograms[h].Bounds...)
			}
		}
		if len(all) > 0 {
			slices.Sort(all)
			out[h] = slices.Compact(all)
		}
	}
	return out
}

// combineAt is the group's sample at ms.
func combineAt(tracks []*instanceTrack, ms, startMs, endMs int64, bounds [catalogue.NumHistograms][]float64, counted int, warnings []string) catalogue.Sample {
	s := catalogue.Sample{Time: time.UnixMilli(ms), HasVLLM: counted > 0, Total: catalogue.NewSeries(),
		KVCapacityTokens: math.NaN(), ProcessStartTime: math.NaN(), ProcessRSSBytes: math.NaN(),
		GCCollections: math.NaN(), HTTPRequests: math.NaN(), Warnings: warnings}
	if counted > 1 {
		s.Instances = counted
	}
	for h, b := range bounds {
		if b != nil {
			counts := make([]float64, len(b))
			for i := range counts {
				counts[i] = math.NaN()
			}
			s.Total.Histograms[h] = catalogue.Buckets{Bounds: b, Counts: counts, Sum: math.NaN(), Count: math.NaN()}
		}
	}
	kvSum, kvN := 0.0, 0
	var described bool
	for _, tr := range tracks {
		if len(tr.good) == 0 {
			continue
		}
		for f, vs := range tr.counters {
			put(&s, f, tr.counterAt(vs, ms, startMs, endMs))
		}
		newest := tr.latest(ms)
		if newest == nil {
			continue
		}
		if !described && newest.HasVLLM {
			described = true
			s.Model, s.EngineKind, s.Router, s.Role, s.Derived = newest.Model, newest.EngineKind, newest.Router, newest.Role, newest.Derived
		}
		for k, v := range newest.Total.Scalars {
			switch {
			case catalogue.Scalar(k).IsCounter() || math.IsNaN(v):
			case catalogue.Scalar(k) == catalogue.KVCacheUsage:
				kvSum += v
				kvN++
			case catalogue.Scalar(k) == catalogue.SleepLevel:
				s.Total.Scalars[k] = math.Max(nanTo(s.Total.Scalars[k], v), v)
			default:
				s.Total.Scalars[k] = addKnown(s.Total.Scalars[k], v)
			}
		}
		s.ProcessRSSBytes = addKnown(s.ProcessRSSBytes, newest.ProcessRSSBytes)
		s.KVCapacityTokens = addKnown(s.KVCapacityTokens, newest.KVCapacityTokens)
	}
	if kvN > 0 {
		s.Total.Scalars[catalogue.KVCacheUsage] = kvSum / float64(kvN)
	}
	return s
}

// nanTo is v when x is NaN, else x.
func nanTo(x, v float64) float64 {
	if math.IsNaN(x) {
		return v
	}
	return x
}

// put adds v to the counter field f of the group's sample.
func put(s *catalogue.Sample, f field, v float64) {
	t := &s.Total
	switch f.kind {
	case fScalar:
		t.Scalars[f.i] = addKnown(t.Scalars[f.i], v)
	case fFinished:
		t.Finished[f.i] = addKnown(t.Finished[f.i], v)
	case fBucket:
		b := &t.Histograms[f.i]
		if i, ok := slices.BinarySearch(b.Bounds, f.le); ok {
			b.Counts[i] = addKnown(b.Counts[i], v)
		}
	case fSum:
		t.Histograms[f.i].Sum = addKnown(t.Histograms[f.i].Sum, v)
	case fCount:
		t.Histograms[f.i].Count = addKnown(t.Histograms[f.i].Count, v)
	case fSpecPos:
		for len(t.SpecAcceptedPerPos) <= f.i {
			t.SpecAcceptedPerPos = append(t.SpecAcceptedPerPos, math.NaN())
		}
		t.SpecAcceptedPerPos[f.i] = addKnown(t.SpecAcceptedPerPos[f.i], v)
	case fGC:
		s.GCCollections = addKnown(s.GCCollections, v)
	case fHTTP:
		s.HTTPRequests = addKnown(s.HTTPRequests, v)
	}
}

// instanceName is how a warning names an instance of a group.
func instanceName(targets map[scrapeTarget]bool) string {
	var names []string
	for t := range targets {
		names = append(names, t.instance)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
