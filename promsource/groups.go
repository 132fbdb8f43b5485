package promsource

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// A replica may be several scrape targets: the instances of a group
// (--group-by job), or a pod's server and its sidecar. Summing their raw
// values went wrong every way: they are scraped at different times, and
// their counters start and reset apart, so every drop read as a restart.
// So each is built apart and they are combined here, at one time per
// scrape interval (the instances' median) back from the window's end, and
// at its start. At each time every instance adds:
//   - a counter: its value with its own resets compensated (Prometheus's
//     rule), interpolated between its scrapes, and beyond them extended
//     with its average slope exactly as far as rate() extrapolates that
//     series (never below zero). The combined counter never drops, and its
//     increase over the window is the sum of the instances' rate()
//     increases: the group's rate is sum(rate(x[w])).
//   - a gauge: its newest value at or before that time (as an instant
//     query's sum() reads it), nothing before its first scrape or after a
//     failed one.
//
// The instances' readings are then summed as every whole is
// (catalogue.Merge); an instance whose buckets differ from the group's is
// left out of that histogram, with a warning. A restart of one instance
// is a warning, not the group's restart; an instance that fails while
// others answer is a warning; the group is DOWN only when every one fails.

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
	// bounds are its buckets' bounds, per histogram: its newest
	// sample's.
	bounds [catalogue.NumHistograms][]float64
	// counts is room for its bucket counts at one time, reused: the
	// group's sum copies them.
	counts [catalogue.NumHistograms][]float64
	// counters are its counter series, each with its values at the good
	// samples, resets compensated and gaps filled.
	counters []counter
}

// counter is one counter series of an instance: where it is in a
// sample, and its values at the good samples.
type counter struct {
	at func(*catalogue.Sample) *float64
	vs []float64
}

// newTrack reads one instance's samples (oldest first; failures among
// them) for combining.
func newTrack(name string, samples []catalogue.Sample) *instanceTrack {
	tr := &instanceTrack{name: name}
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
	tr.readCounters()
	var resetAt int64
	for _, c := range tr.counters {
		if at := adjustCounter(c.vs, tr.ms); at > 0 && (resetAt == 0 || at < resetAt) {
			resetAt = at
		}
	}
	tr.restart = restartOf(tr.good, resetAt)
	return tr
}

// readCounters lists the instance's counter series, each that has a value
// in at least one good sample.
func (tr *instanceTrack) readCounters() {
	n := len(tr.good)
	read := func(at func(*catalogue.Sample) *float64) {
		var vs []float64
		for j := range tr.good {
			v := *at(&tr.good[j])
			if vs == nil {
				if math.IsNaN(v) {
					continue
				}
				vs = nanSlice(n)
			}
			vs[j] = v
		}
		if vs != nil {
			tr.counters = append(tr.counters, counter{at, vs})
		}
	}
	for k := range catalogue.NumScalars {
		if k.IsCounter() {
			read(func(s *catalogue.Sample) *float64 { return &s.Total.Scalars[k] })
		}
	}
	for r := range catalogue.NumFinishReasons {
		read(func(s *catalogue.Sample) *float64 { return &s.Total.Finished[r] })
	}
	for h := range catalogue.NumHistograms {
		tr.readHistogram(h)
	}
	most := 0
	for j := range tr.good {
		most = max(most, len(tr.good[j].Total.SpecAcceptedPerPos))
	}
	for p := range most {
		read(func(s *catalogue.Sample) *float64 {
			// Positions a sample lacks are NaN; clipped, the slice
			// grows into an array of its own, never a shared one.
			for len(s.Total.SpecAcceptedPerPos) <= p {
				s.Total.SpecAcceptedPerPos = append(slices.Clip(s.Total.SpecAcceptedPerPos), math.NaN())
			}
			return &s.Total.SpecAcceptedPerPos[p]
		})
	}
	read(func(s *catalogue.Sample) *float64 { return &s.GCCollections })
	read(func(s *catalogue.Sample) *float64 { return &s.HTTPRequests })
}

// readHistogram lists the counters of one histogram: a bucket per bound
// of the instance's newest sample that has it, and the _sum and _count.
// An older sample on other bounds (the instance restarted with other
// buckets) gives no bucket counts.
func (tr *instanceTrack) readHistogram(h catalogue.Histogram) {
	n := len(tr.good)
	for j := n - 1; j >= 0 && tr.bounds[h] == nil; j-- {
		tr.bounds[h] = tr.good[j].Total.Histograms[h].Bounds
	}
	bounds := tr.bounds[h]
	if bounds == nil {
		return
	}
	tr.counts[h] = make([]float64, len(bounds))
	buckets := make([][]float64, len(bounds))
	sum, count := nanSlice(n), nanSlice(n)
	for j := range tr.good {
		b := tr.good[j].Total.Histograms[h]
		if !b.Present() {
			continue
		}
		sum[j], count[j] = b.Sum, b.Count
		if !sameSlice(b.Bounds, bounds) && !slices.Equal(b.Bounds, bounds) {
			continue
		}
		for k, c := range b.Counts[:min(len(b.Counts), len(bounds))] {
			if buckets[k] == nil {
				buckets[k] = nanSlice(n)
			}
			buckets[k][j] = c
		}
	}
	for k, vs := range buckets {
		if vs != nil {
			tr.counters = append(tr.counters, counter{func(s *catalogue.Sample) *float64 { return &s.Total.Histograms[h].Counts[k] }, vs})
		}
	}
	tr.counters = append(tr.counters, counter{func(s *catalogue.Sample) *float64 { return &s.Total.Histograms[h].Sum }, sum},
		counter{func(s *catalogue.Sample) *float64 { return &s.Total.Histograms[h].Count }, count})
}

// sameSlice reports whether a and b are the same slice (the build shares
// one per histogram among an instance's samples).
func sameSlice(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// nanSlice is n NaNs.
func nanSlice(n int) []float64 {
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = math.NaN()
	}
	return vs
}

// hasFigures reports whether a good sample carries any value: the
// reading just before the window that tells the analysis Prometheus
// watched the whole window carries none.
func hasFigures(s *catalogue.Sample) bool {
	t := &s.Total
	for _, v := range t.Scalars {
		if !math.IsNaN(v) {
			return true
		}
	}
	for _, v := range t.Finished {
		if !math.IsNaN(v) {
			return true
		}
	}
	for _, b := range t.Histograms {
		if b.Present() {
			return true
		}
	}
	for _, v := range []float64{s.GCCollections, s.HTTPRequests, s.ProcessRSSBytes, s.KVCapacityTokens, s.ProcessStartTime} {
		if !math.IsNaN(v) {
			return true
		}
	}
	return len(t.SpecAcceptedPerPos) > 0
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
			return good[i].Time.Format(human.Clock) + " (process_start_time_seconds changed)"
		}
		last = v
	}
	if resetAt > 0 {
		return time.UnixMilli(resetAt).Format(human.Clock) + " (a counter went down)"
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

// place is where a time falls among an instance's samples, for reading
// all its counters there.
type place struct {
	mode uint8 // one of the place modes below
	i    int
	frac float64 // between samples i-1 and i: how far toward i
	d    float64 // before or after the samples: how far extended, in ms
}

// The modes of a place.
const (
	placeOnly    uint8 = iota // a single sample: its value
	placeExact                // at sample i
	placeBetween              // between samples i-1 and i
	placeBefore               // before the first sample
	placeAfter                // after the last sample
)

// placeAt is where ms falls for a window from startMs to endMs. Before
// the first sample and after the last, the counters are extended with
// their average slope as far as rate() extrapolates that series toward
// the window's edge and no further, flat beyond: they never drop as ms
// grows.
func (tr *instanceTrack) placeAt(ms, startMs, endMs int64) place {
	n := len(tr.ms)
	switch {
	case n == 1:
		return place{mode: placeOnly}
	case ms <= tr.ms[0]:
		edge := extension(float64(max(tr.ms[0]-startMs, 0)), tr.avg)
		return place{mode: placeBefore, d: min(float64(tr.ms[0]-ms), edge)}
	case ms >= tr.ms[n-1]:
		edge := extension(float64(max(endMs-tr.ms[n-1], 0)), tr.avg)
		return place{mode: placeAfter, d: min(float64(ms-tr.ms[n-1]), edge)}
	}
	i, found := slices.BinarySearch(tr.ms, ms)
	if found {
		return place{mode: placeExact, i: i}
	}
	return place{mode: placeBetween, i: i, frac: float64(ms-tr.ms[i-1]) / float64(tr.ms[i]-tr.ms[i-1])}
}

// value is a counter's value at the place: interpolated between samples,
// extended beyond them (never below zero when it starts at zero or
// above).
func (p place) value(tr *instanceTrack, vs []float64) float64 {
	switch p.mode {
	case placeOnly:
		return vs[0]
	case placeExact:
		return vs[p.i]
	case placeBetween:
		return vs[p.i-1] + (vs[p.i]-vs[p.i-1])*p.frac
	}
	n := len(vs)
	slope := (vs[n-1] - vs[0]) / float64(tr.ms[n-1]-tr.ms[0])
	if p.mode == placeAfter {
		return vs[n-1] + slope*p.d
	}
	v := vs[0] - slope*p.d
	if vs[0] >= 0 && v < 0 {
		v = 0
	}
	return v
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
	alive, counted, warnings := describeTracks(tracks)
	grid := gridOf(tracks, windowStart, at, alive)
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
	refused := make([]catalogue.HistogramSet, len(tracks))
	first := len(out)
	for _, ms := range grid {
		s := combineAt(tracks, ms, startMs, endMs, refused)
		s.HasVLLM = counted > 0
		if counted > 1 {
			s.Instances = counted
		}
		out = append(out, s)
	}
	warnings = append(warnings, refusals(tracks, refused)...)
	for i := first; i < len(out); i++ {
		out[i].Warnings = warnings
	}
	if alive == 0 {
		out = mergeFailures(out, failuresOf(tracks))
	}
	return out
}

// describeTracks counts the instances that answer and those that are the
// server's (a sidecar's process figures are no instance of the server),
// and lists the failures and restarts to warn of.
func describeTracks(tracks []*instanceTrack) (alive, counted int, warnings []string) {
	for _, tr := range tracks {
		if slices.ContainsFunc(tr.good, func(s catalogue.Sample) bool { return s.HasVLLM }) {
			counted++
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
	return alive, counted, warnings
}

// gridOf is the times of the combined samples, oldest first.
func gridOf(tracks []*instanceTrack, windowStart, at time.Time, alive int) []int64 {
	var grid []int64
	for _, tr := range tracks {
		grid = append(grid, tr.ms...)
	}
	if step := scrapeStep(tracks); alive > 0 && !windowStart.IsZero() && step > 0 {
		// One reading per scrape interval back from the window's end, and
		// its edges: the combined counters' increase between them is the
		// sum of the instances' rate() increases. The union of the
		// instances' scrape times would make a group of N instances cost
		// N² per refresh.
		grid = regularGrid(windowStart.UnixMilli(), at.UnixMilli(), step)
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	if alive > 0 {
		last := at.UnixMilli()
		for len(grid) > 0 && grid[len(grid)-1] > last {
			grid = grid[:len(grid)-1]
		}
	}
	return grid
}

// failuresOf is the instances' failures, when every instance fails: the
// group is DOWN, with their failures.
func failuresOf(tracks []*instanceTrack) []catalogue.Sample {
	var failed []catalogue.Sample
	for _, tr := range tracks {
		if tr.failure != nil {
			f := *tr.failure
			f.Err = fmt.Sprintf("instance %s: %s", tr.name, f.Err)
			failed = append(failed, f)
		}
	}
	return failed
}

// scrapeStep is the instances' median scrape interval in ms, 0 when
// none has two samples.
func scrapeStep(tracks []*instanceTrack) int64 {
	var avgs []float64
	for _, tr := range tracks {
		if tr.avg > 0 {
			avgs = append(avgs, tr.avg)
		}
	}
	if len(avgs) == 0 {
		return 0
	}
	slices.Sort(avgs)
	return max(int64(math.Round(avgs[len(avgs)/2])), 1)
}

// regularGrid is endMs, endMs − step, … down to after startMs, and
// startMs, oldest first.
func regularGrid(startMs, endMs, step int64) []int64 {
	grid := []int64{startMs}
	first := endMs - (endMs-startMs-1)/step*step
	for ms := first; ms <= endMs; ms += step {
		grid = append(grid, ms)
	}
	return grid
}

// combineAt is the group's sample at ms: its instances' samples there,
// summed. It adds to refused, per instance, the histograms left out of
// the sum for buckets unlike the group's.
func combineAt(tracks []*instanceTrack, ms, startMs, endMs int64, refused []catalogue.HistogramSet) catalogue.Sample {
	var m catalogue.Merge
	for i, tr := range tracks {
		if len(tr.good) > 0 {
			s := tr.sampleAt(ms, startMs, endMs)
			refused[i] |= m.AddSample(&s)
		}
	}
	s := m.Sample()
	s.Time = time.UnixMilli(ms)
	return s
}

// sampleAt is the instance's sample at ms: its counters there and its
// newest gauges (none before its first scrape or after a failure). Its
// process start time is unknown: its counters are compensated for its
// restarts. Its bucket counts are the track's, until the next call.
func (tr *instanceTrack) sampleAt(ms, startMs, endMs int64) catalogue.Sample {
	s := catalogue.NewSample(time.UnixMilli(ms))
	for h, b := range tr.bounds {
		if b != nil {
			counts := tr.counts[h]
			for i := range counts {
				counts[i] = math.NaN()
			}
			s.Total.Histograms[h] = catalogue.Buckets{Bounds: b, Counts: counts, Sum: math.NaN(), Count: math.NaN()}
		}
	}
	p := tr.placeAt(ms, startMs, endMs)
	for _, c := range tr.counters {
		*c.at(&s) = p.value(tr, c.vs)
	}
	newest := tr.latest(ms)
	if newest == nil {
		return s
	}
	s.HasVLLM, s.Model, s.EngineKind, s.Router, s.Role, s.Derived, s.Refused = newest.HasVLLM, newest.Model, newest.EngineKind, newest.Router, newest.Role, newest.Derived, newest.Refused
	for k, v := range newest.Total.Scalars {
		if !catalogue.Scalar(k).IsCounter() {
			s.Total.Scalars[k] = v
		}
	}
	s.ProcessRSSBytes, s.KVCapacityTokens = newest.ProcessRSSBytes, newest.KVCapacityTokens
	return s
}

// refusals are the warnings of the histograms left out of the group's
// sum, per instance.
func refusals(tracks []*instanceTrack, refused []catalogue.HistogramSet) []string {
	var out []string
	for i, tr := range tracks {
		for h := range catalogue.NumHistograms {
			if refused[i].Has(h) {
				out = append(out, fmt.Sprintf("instance %s: buckets of %s unlike the group's; left out of its sum", tr.name, catalogue.HistogramName(h)))
			}
		}
	}
	return out
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
