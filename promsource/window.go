package promsource

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"
)

// recheckEvery is how long a sample an increment missed (one ingested
// later than the margin allows, a backfill) may stay missed: within it,
// every series is read over the whole window again, a part of them with
// each refresh, alongside the increment.
const recheckEvery = time.Minute

// maxRecheckParts bounds how finely the series are split for the recheck:
// a part of the names holds at least one histogram's buckets, and a finer
// split only adds queries of next to nothing.
const maxRecheckParts = 12

// recheckParts is how many parts the series are re-read in when refreshes
// are interval apart: all of them within recheckEvery, and in at least two
// parts, so that no refresh re-reads everything.
func recheckParts(interval time.Duration) int {
	return min(max(int(recheckEvery/interval), 2), maxRecheckParts)
}

// minMargin is the least overlap of an increment with what the source
// already holds; see rawWindow.rangeFor.
const minMargin = 2 * time.Second

// rawWindow holds the raw samples of every series read, over the window
// that ends at the newest good evaluation, between refreshes. A refresh
// then asks Prometheus only for the samples since the previous evaluation
// (plus a margin) and merges them in: the samples held are the very ones a
// range selector over the whole window gives, so every rate and quantile
// computed from them is still PromQL's, at a fraction of the bytes,
// Prometheus time and decoding.
//
// The window is read whole at the first refresh, after any failure and
// when the width changes. Between those, each increment also re-reads one
// part of the series over the whole window (the recheck), in turn, which
// bounds how long anything an increment could miss stays missed. A whole
// read of a large fleet takes several times an increment, so re-reading it
// all at once every minute made one refresh a minute overrun its interval;
// a part with each refresh costs a little, evenly.
type rawWindow struct {
	series map[model.Fingerprint]*sampleStream
	at     time.Time     // evaluation time of the samples held; zero: none
	width  time.Duration // the window they cover, ending at at
	// recheck counts the increments since the newest whole read: the
	// next one re-reads part recheck modulo the parts.
	recheck int
	// gap and late are the server's scrape interval and how much later
	// than a scrape interval it answers samples (see measure).
	gap, late time.Duration
	// added is, per series, the time of the oldest sample the newest
	// merge added; nil after a full read (everything is new).
	added map[model.Fingerprint]model.Time
}

// reset forgets everything: the next read is a full one.
func (w *rawWindow) reset() { *w = rawWindow{} }

// rangeFor returns the range of the raw query of a refresh at at over
// width, and whether it is the whole window.
//
// An increment starts a margin before the newest samples held: Prometheus
// stamps a sample with the start of its scrape but can only answer it once
// the scrape is in, so a sample stamped before the previous evaluation may
// have arrived after it. A scrape lasts at most its interval (its timeout
// is no longer), so two scrape intervals (and at least minMargin) cover
// that and a clock difference of up to one interval between vtop and the
// server. A store fed by remote write (Mimir, Thanos Receive,
// VictoriaMetrics) answers samples seconds after their time: what the
// newest samples held trail the previous evaluation by, beyond the one
// scrape interval any server's do, is added, so that an increment still
// reaches back to where the samples held end.
// Samples already held are told apart by their timestamps.
func (w *rawWindow) rangeFor(at time.Time, width time.Duration) (time.Duration, bool) {
	if w.at.IsZero() || w.width != width || !at.After(w.at) {
		return width, true
	}
	r := at.Sub(w.at) + w.late + max(2*w.gap, minMargin)
	if r >= width {
		return width, true
	}
	return r, false
}

// measure estimates, after a merge at at, the server's scrape interval
// and how late it answers samples: the medians of the newest gap and of
// how far the newest sample trails at, beyond one scrape interval (which
// any server's do), over the series that gained samples (all of them
// after a full read; a few hundred suffice). Series that gained none say
// nothing of the server: a replica that stopped would read as lateness.
// When none gained any, the estimates stay as they were.
func (w *rawWindow) measure(at time.Time, full bool) {
	var gaps, lags []model.Time
	t := model.TimeFromUnixNano(at.UnixNano())
	for fp, s := range w.series {
		n := len(s.Values)
		if _, ok := w.added[fp]; n == 0 || (!full && !ok) {
			continue
		}
		lags = append(lags, max(t-s.Values[n-1].Timestamp, 0))
		if n >= 2 {
			gaps = append(gaps, s.Values[n-1].Timestamp-s.Values[n-2].Timestamp)
		}
		if len(lags) == 255 {
			break
		}
	}
	if len(lags) == 0 {
		return
	}
	w.gap = medianMillis(gaps)
	w.late = max(medianMillis(lags)-w.gap, 0)
}

// medianMillis is the median of durations in milliseconds; 0 for none.
func medianMillis(ts []model.Time) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	slices.Sort(ts)
	return time.Duration(ts[len(ts)/2]) * time.Millisecond
}

// nextRecheck returns the part of n that this increment re-reads over the
// whole window: each in turn from the newest whole read.
func (w *rawWindow) nextRecheck(n int) int {
	i := w.recheck % n
	w.recheck++
	return i
}

// avoidEdge moves an evaluation time back by milliseconds while a sample
// held sits exactly on the left edge of its window. Prometheus before 3.0
// selects [t-w, t] and from 3.0 (t-w, t]: the two rules differ only for a
// sample on the edge, which a full read leaves to the server but an
// increment would decide here. Off the edge, both give the same samples.
func (w *rawWindow) avoidEdge(at time.Time, width time.Duration) time.Time {
	if w.at.IsZero() {
		return at
	}
	for range 1000 { // scrapes are more than a millisecond apart: ends at once
		edge := model.TimeFromUnixNano(at.Add(-width).UnixNano())
		if !w.holds(edge) {
			return at
		}
		at = at.Add(-time.Millisecond)
	}
	return at
}

// holds reports whether any series held has a sample at t.
func (w *rawWindow) holds(t model.Time) bool {
	for _, s := range w.series {
		if _, ok := slices.BinarySearchFunc(s.Values, t, byTime); ok {
			return true
		}
	}
	return false
}

// merge folds a read into the window that ends at at: a full read
// replaces what is held, an increment adds the samples not held yet. A
// series may come more than once in m (the increment, and again in the
// recheck's part). The samples older than the window are dropped, and the
// series left with none.
func (w *rawWindow) merge(m matrix, at time.Time, width time.Duration, full bool) {
	w.added = map[model.Fingerprint]model.Time{}
	if full || w.series == nil {
		w.series = make(map[model.Fingerprint]*sampleStream, len(m))
		w.added, w.recheck = nil, 0
	}
	for _, s := range m {
		w.add(s)
	}
	w.dropBefore(model.TimeFromUnixNano(at.Add(-width).UnixNano()))
	w.at, w.width = at, width
	w.measure(at, w.added == nil)
}

// add folds one series of a read into the window, noting the oldest
// sample it added (when the window notes them).
func (w *rawWindow) add(s *sampleStream) {
	fp := s.Metric.fingerprint()
	held := w.series[fp]
	if held == nil {
		w.series[fp] = s
		if w.added != nil && len(s.Values) > 0 {
			w.added[fp] = s.Values[0].Timestamp
		}
		return
	}
	var oldest model.Time
	held.Values, oldest = mergePoints(held.Values, s.Values)
	if w.added != nil && oldest != noneAdded {
		if t, ok := w.added[fp]; !ok || oldest < t {
			w.added[fp] = oldest
		}
	}
}

// dropBefore drops the samples older than first, and the series left
// with none. The window is closed, [at-width, at]; avoidEdge keeps
// samples off its left edge, so this is also the left-open rule.
func (w *rawWindow) dropBefore(first model.Time) {
	for fp, s := range w.series {
		i := 0
		for i < len(s.Values) && s.Values[i].Timestamp < first {
			i++
		}
		if i == len(s.Values) {
			delete(w.series, fp)
			continue
		}
		if i > 0 {
			s.Values = slices.Delete(s.Values, 0, i)
		}
	}
}

// noneAdded is mergePoints' oldest when it added nothing.
const noneAdded = model.Time(math.MaxInt64)

// mergePoints adds to held (oldest first) the points of add it lacks,
// keeping the order, and returns the time of the oldest it added.
// Prometheus appends a series' samples in time order, so new points
// normally go at the end.
func mergePoints(held, add []model.SamplePair) ([]model.SamplePair, model.Time) {
	oldest := noneAdded
	for _, p := range add {
		n := len(held)
		if n == 0 || p.Timestamp > held[n-1].Timestamp {
			held = append(held, p)
			oldest = min(oldest, p.Timestamp)
			continue
		}
		i, found := slices.BinarySearchFunc(held, p.Timestamp, byTime)
		if !found {
			held = slices.Insert(held, i, p)
			oldest = min(oldest, p.Timestamp)
		}
	}
	return held, oldest
}

// byTime orders a point against a time, for binary searches.
func byTime(p model.SamplePair, t model.Time) int { return cmp.Compare(p.Timestamp, t) }

// matrix returns the series held, for the fleet's build, in one order
// from refresh to refresh (sums over series then add up alike), and for
// each the time of the oldest sample the newest merge added to it
// (noneAdded if none); nil after a full read.
func (w *rawWindow) matrix() (matrix, []model.Time) {
	fps := slices.Sorted(maps.Keys(w.series))
	m := make(matrix, len(fps))
	var added []model.Time
	if w.added != nil {
		added = make([]model.Time, len(fps))
	}
	for i, fp := range fps {
		m[i] = w.series[fp]
		if added != nil {
			t, ok := w.added[fp]
			if !ok {
				t = noneAdded
			}
			added[i] = t
		}
	}
	return m, added
}
