package promsource

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/safetext"
)

// fetched is what one refresh read.
type fetched struct {
	raw, up matrix
	// buckets are the store-evaluated buckets' rows (see summary.go), nil
	// when the raw read has the buckets; bucketWindow is their window.
	buckets      matrix
	bucketWindow time.Duration
	// wanted are the raw buckets of the replicas wanted, over the whole
	// window, read apart from raw (whose window the source keeps).
	wanted matrix
	// added is, for each series of raw, the time of the oldest sample
	// this refresh added to what the source held (noneAdded if none);
	// nil when raw is all new.
	added           []model.Time
	warnings        []string
	series, samples int
}

// fetch asks the constant set of queries of one refresh, all evaluated
// at the same time and side by side: the raw samples over rawRange (in
// rawSplit halves), up over the window and, with an increment, the
// recheck's part of the series over the whole window (recheck, "" for
// none). The series cap is checked as the raw samples arrive (see
// decodeAnswer) and over the halves together, so no query counts the
// series first: counting touches every series as the read does, and cost
// Prometheus as much again. Only a whole read that finds no series asks
// more, to say why.
func (s *Source) fetch(ctx context.Context, at time.Time, width, rawRange time.Duration, whole bool, recheck string, pre *upRead) (fetched, error) {
	var f fetched
	var wg sync.WaitGroup
	var upErr error
	var upWarns []string
	if pre != nil {
		// Read ahead, in the budget the read ahead began (countTargets),
		// which holds its answer.
		f.up, upWarns, upErr = pre.up, pre.warns, pre.err
	} else {
		s.answers = newBudget(s.cfg.answerBudget())
		wg.Go(func() { f.up, upWarns, upErr = s.stream(ctx, s.upQuery(width), at, resultMatrix, false) })
	}
	q := s.refreshQueries(&f, at, width, rawRange, recheck)
	answers, warns, errs := s.streamAll(ctx, q.qs, false)
	wg.Wait()
	err := cmp.Or(append(errs, upErr)...)
	if pre != nil {
		// up was read first, alone: its failure (an answer over the
		// budget) is the cause of the others' (the budget spent).
		err = cmp.Or(upErr, err)
	}
	series := 0 // in the halves together
	for _, m := range answers[:len(s.q.halves)] {
		series += len(m)
	}
	if err == nil && series > s.cfg.MaxSeries {
		err = s.tooManySeries()
	}
	if q.wantedAt >= 0 {
		f.wanted, answers[q.wantedAt] = answers[q.wantedAt], nil
	}
	f.raw = slices.Concat(answers[:q.raws]...)
	if s.q.bucketless {
		f.buckets = slices.Concat(answers[q.raws:]...)
	}
	f.warnings = slices.Concat(append(warns, upWarns)...)
	if err == nil && whole && len(f.raw) == 0 {
		err = s.explainEmpty(ctx, at)
	}
	f.series = len(f.raw)
	for _, ss := range f.raw {
		f.samples += len(ss.Values)
	}
	return f, err
}

// refreshQueries are the queries of one refresh but up: the first raws
// ask for matrices (the raw halves, the recheck, the buckets of the
// replicas wanted, at wantedAt, -1 for none), the rest for vectors.
type refreshQueries struct {
	qs             []streamed
	raws, wantedAt int
}

// refreshQueries writes the queries of one refresh at at but up, and
// sets f's bucket window when the store evaluates the buckets.
func (s *Source) refreshQueries(f *fetched, at time.Time, width, rawRange time.Duration, recheck string) refreshQueries {
	q := refreshQueries{qs: make([]streamed, 0, rawSplit+1), wantedAt: -1}
	for _, half := range s.q.halves {
		q.qs = append(q.qs, streamed{s.q.raw(half, rawRange), resultMatrix, at})
	}
	if recheck != "" {
		q.qs = append(q.qs, streamed{recheck, resultMatrix, at})
	}
	if w := s.wantedBuckets(width); w != "" {
		q.wantedAt = len(q.qs)
		q.qs = append(q.qs, streamed{w, resultMatrix, at})
	}
	q.raws = len(q.qs)
	if s.q.bucketless {
		f.bucketWindow = s.analysisWindow()
		for _, expr := range s.q.buckets(f.bucketWindow, s.cfg.Histograms) {
			q.qs = append(q.qs, streamed{expr, resultVector, at})
		}
	}
	return q
}

// streamed is one query of those asked side by side: expr at at, whose
// result is of type want.
type streamed struct {
	expr, want string
	at         time.Time
}

// streamAll asks the queries side by side, the first on this goroutine,
// and returns their answers, warnings and errors in their order;
// uncached as stream.
func (s *Source) streamAll(ctx context.Context, qs []streamed, uncached bool) ([]matrix, [][]string, []error) {
	answers := make([]matrix, len(qs))
	warns := make([][]string, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs[1:] {
		wg.Go(func() { answers[i+1], warns[i+1], errs[i+1] = s.stream(ctx, q.expr, q.at, q.want, uncached) })
	}
	answers[0], warns[0], errs[0] = s.stream(ctx, qs[0].expr, qs[0].at, qs[0].want, uncached)
	wg.Wait()
	return answers, warns, errs
}

// explainEmpty is the error of a whole read that found no series: none if
// the selector matches vLLM series that are only older than the window
// (their replicas then show as stopped), else which jobs do have vLLM
// series.
func (s *Source) explainEmpty(ctx context.Context, at time.Time) error {
	// How many series the raw query would read: those with a sample in
	// the lookback period, a bound of the window's.
	v, _, err := s.query(ctx, promql.Aggregate("count", "", s.q.selector(promql.ReadNames())), at)
	if err != nil {
		return err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return s.fail(fmt.Sprintf("not a Prometheus query API: count() answered %s, not a vector", v.Type()))
	}
	if len(vec) == 0 || vec[0].Value == 0 { // count() of nothing is an empty vector
		return s.fail(s.diagnose(ctx, at))
	}
	return nil
}

// wholeReadTimeouts is how many timeouts a whole-window read may take. It
// reads several times the samples of an increment (and counts the series
// first), and it is what a refresh after a failure does: were it bound
// as tightly as an increment, a busy server that cannot answer it in one
// timeout would never be read again.
const wholeReadTimeouts = 3

// queryTimeout bounds each query of the refresh in progress.
func (s *Source) queryTimeout() time.Duration {
	if s.whole {
		return wholeReadTimeouts * s.cfg.Timeout
	}
	return s.cfg.Timeout
}

// query runs one instant query at the evaluation time.
func (s *Source) query(ctx context.Context, expr string, at time.Time) (model.Value, []string, error) {
	timeout := s.queryTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, warns, _, err := s.api.Query(ctx, expr, at)
	if err != nil {
		return nil, nil, s.fail(problem(err, timeout))
	}
	if v == nil {
		return nil, nil, s.fail("not a Prometheus query API: the answer holds no query result")
	}
	return v, s.cleanAll(warns), nil
}

// diagnose explains a selector that matches no vLLM series: which jobs do
// have vLLM-looking series, or, when none has, which jobs the server
// scrapes at all (a selector naming a job that is not there, a server
// that scrapes no inference server).
func (s *Source) diagnose(ctx context.Context, at time.Time) string {
	what := "no vLLM series"
	if s.q.matchers != "" {
		what = "the selector {" + safetext.Sanitize(s.q.matchers) + "} matches no vLLM series"
	}
	names, ok := s.jobNames(ctx, promql.JobsOfVLLMSeries(), at)
	switch {
	case !ok:
		return what
	case len(names) > 0:
		return what + "; vLLM series exist under " + strings.Join(names, ", ")
	}
	what += ", and the server has none under any job"
	scraped, ok := s.jobNames(ctx, promql.ScrapedJobs(), at)
	if !ok || len(scraped) == 0 {
		return what + " (and scrapes no job)"
	}
	return what + "; the jobs it scrapes: " + strings.Join(scraped, ", ")
}

// jobNames runs a query by job and lists its jobs as job="…", sorted, at
// most ten; false when the query failed.
func (s *Source) jobNames(ctx context.Context, expr string, at time.Time) ([]string, bool) {
	v, _, err := s.query(ctx, expr, at)
	vec, ok := v.(model.Vector)
	if err != nil || !ok {
		return nil, false
	}
	var names []string
	for _, smp := range vec {
		names = append(names, fmt.Sprintf("job=%q", safetext.Sanitize(string(smp.Metric[labelJob]))))
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return names, true
}

// cleanAll cleans texts from the server, of secrets too.
func (s *Source) cleanAll(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, 0, len(in))
	for _, t := range in {
		out = append(out, safetext.Sanitize(t))
	}
	return out
}

// replica is what the source remembers of one replica between refreshes.
type replica struct {
	name    string
	targets map[scrapeTarget]bool
	// samples are the newest data read for it: the window of the last
	// refresh that had any, oldest first.
	samples []catalogue.Sample
	// built are the samples built from its series in the window, and the
	// shape they were built on: the next refresh builds only what is new
	// when the shape holds.
	built   []catalogue.Sample
	current catalogue.FigureSet
	sorted  map[histKey][]float64
	// newest is the time of its newest sample in Prometheus.
	newest time.Time
	// failures are the source's own failed readings since its data
	// stopped: its series stopped arriving. (A failure of the server is
	// not the replica's: it keeps its readings as they were.)
	failures []catalogue.Sample
	// watched is set when samples begin with the reading just before the
	// window (watchedBefore).
	watched bool
	// listed is the time of the newest up sample of its targets: until
	// then Prometheus still had it as a target, scraped or failing.
	listed time.Time
}

// fail records a failed reading of the replica itself: its series
// stopped arriving.
func (r *replica) fail(at time.Time, problem string) {
	if n := len(r.failures); n > 0 && !r.failures[n-1].Time.Before(at) {
		return
	}
	if len(r.failures) >= maxFailures {
		r.failures = slices.Delete(r.failures, 1, 2) // keep the first: it says since when
	}
	r.failures = append(r.failures, catalogue.Sample{Time: at, Err: problem})
}

// apply folds a good refresh in: replicas in the data get it; known
// replicas missing from it turn DOWN, and are forgotten after Forget.
func (s *Source) apply(at time.Time, width time.Duration, f fetched) {
	b := newFleetBuild(s.group)
	b.bucketless = s.q.bucketless
	s.buckets = nil
	if s.q.bucketless {
		s.buckets = readBuckets(f.buckets, s.group, at, f.bucketWindow)
	}
	infos := b.survey(f.raw)
	since := s.builtSince(b, infos, f.added)
	b.fold(f.raw, infos, since)
	first := at.Add(-width)
	for key, rb := range b.replicas {
		r := s.replicas[key]
		if r == nil {
			r = &replica{name: rb.name}
			s.replicas[key] = r
		}
		fresh := rb.samples()
		if _, ok := since[rb]; ok {
			// The samples built before stay; those that left the
			// window go. r.built is never published: r.samples is a copy.
			r.built = append(r.built[before(r.built, first):], fresh...)
		} else {
			r.built = fresh
		}
		r.targets, r.current, r.sorted = rb.targets, rb.current, rb.sorted
		r.samples = slices.Clone(r.built)
		if n := len(r.samples); n > 0 && r.samples[n-1].Time.After(r.newest) {
			r.newest, r.failures = r.samples[n-1].Time, nil
		}
	}
	s.addUpFailures(f.up, b, first)
	for key, r := range s.replicas {
		if b.replicas[key] == nil && at.Sub(latest(r.newest, r.listed)) > s.cfg.Forget {
			delete(s.replicas, key)
			continue
		}
		s.markStopped(at, r)
		r.watched = b.replicas[key] != nil
		if r.watched {
			r.samples = slices.Insert(r.samples, 0, watchedBefore(at.Add(-width-time.Millisecond)))
		}
	}
	s.appliedAt, s.appliedWidth = at, width
}

// builtSince returns, for each replica whose samples built by the refresh
// before can stay, the time of the newest of them: only values after it
// need building. A replica is built whole after a full read, when its
// shape changed (targets, names, bucket bounds), or when a value arrived
// at or before that time (a scrape that landed late).
func (s *Source) builtSince(b *fleetBuild, infos []seriesInfo, added []model.Time) map[*replicaBuild]model.Time {
	if added == nil {
		return nil
	}
	since := map[*replicaBuild]model.Time{}
	for key, rb := range b.replicas {
		r := s.replicas[key]
		if r == nil || len(r.built) == 0 || !rb.sameShape(r.targets, r.current, r.sorted) {
			continue
		}
		since[rb] = model.TimeFromUnixNano(r.built[len(r.built)-1].Time.UnixNano())
		rb.sorted = r.sorted // the samples kept and the new share the bounds
	}
	for i, info := range infos {
		if t, ok := since[info.replica]; ok && added[i] <= t {
			delete(since, info.replica)
		}
	}
	return since
}

// watchedBefore is a reading with no figures just before the window.
// Prometheus watched the whole window, so the analysis must not shorten
// it to a replica's first sample (as it does for a target vtop itself
// only began to scrape): with this reading before the window, rate()
// extrapolates exactly as PromQL does for a series that starts inside it.
func watchedBefore(t time.Time) catalogue.Sample {
	s := catalogue.NewSample(t)
	s.HasVLLM = true
	return s
}

// addUpFailures puts Prometheus's failed scrapes (up is 0) of each
// replica's own targets among its samples: a killed server is DOWN as soon
// as Prometheus notices. A failing target with no series in the window
// (it died before the window, or before vtop began to read) is a replica
// of its own when it is the fleet's (fleetTargets.owns), and keeps the
// run of failures it is in, from up's history (deadRun). Other targets in
// the same group (a sidecar's exporter) are not the replica's business.
// first is the start of the window.
func (s *Source) addUpFailures(up matrix, b *fleetBuild, first time.Time) {
	fleet := newFleetTargets(s.group)
	for _, r := range s.replicas {
		fleet.add(r.name, r.targets)
	}
	for _, ss := range up {
		key := s.group.key(ss.Metric)
		r := s.replicas[key]
		if r == nil && failingNow(ss) && fleet.owns(ss.Metric) {
			r = &replica{name: safetext.Sanitize(s.group.name(ss.Metric)), targets: map[scrapeTarget]bool{targetOf(ss.Metric): true}}
			s.replicas[key] = r
		}
		if r == nil || !r.targets[targetOf(ss.Metric)] {
			continue
		}
		if n := len(ss.Values); n > 0 {
			r.listed = latest(r.listed, ss.Values[n-1].Timestamp.Time())
		}
		if b.replicas[key] == nil {
			// No vLLM sample in the window: the failures are the news.
			r.samples = deadRun(r.samples, ss)
			continue
		}
		failed := upFailures(ss)
		failed = failed[before(failed, first):] // up is read further back than the window (upLookBack)
		r.samples = mergeFailures(r.samples, failed)
	}
}

// deadRun adds to the samples of a replica with no series in the window
// the run of failed scrapes its up ends with: the failures after its
// newest good scrape, which a sample without figures stands for when the
// samples have none as new (its series were not read: it died before the
// window). The first failure of a run stays however long it lasts, the
// newest maxFailures too: they say since when, and the latest.
func deadRun(samples []catalogue.Sample, up *sampleStream) []catalogue.Sample {
	vs := up.Values
	i := len(vs)
	for i > 0 && vs[i-1].Value == 0 {
		i--
	}
	if i == len(vs) {
		return samples // scraped at last: nothing failing to add
	}
	run := upFailures(&sampleStream{Metric: up.Metric, Values: vs[i:]})
	kept := slices.Clip(samples[:before(samples, run[0].Time)])
	if i > 0 {
		good := vs[i-1].Timestamp.Time()
		if n := len(kept); n == 0 || kept[n-1].Time.Before(good) {
			kept = append(kept, catalogue.NewSample(good))
		}
	}
	out := mergeFailures(kept, run)
	first := len(out)
	for first > 0 && !out[first-1].OK() {
		first--
	}
	if n := len(out) - first; n > maxFailures {
		out = slices.Delete(out, first+1, first+1+n-maxFailures)
	}
	return out
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// before is how many of the samples (oldest first) are before t.
func before(samples []catalogue.Sample, t time.Time) int {
	i := 0
	for i < len(samples) && samples[i].Time.Before(t) {
		i++
	}
	return i
}

// markStopped turns a replica DOWN when nothing of it arrived for a few
// of its scrape intervals, neither its series nor a failed scrape: its
// target is gone from Prometheus, or Prometheus stopped scraping it. A
// store that answers every sample late (remote write) gives a replica
// that much longer: its lateness is the server's, not the replica's.
func (s *Source) markStopped(at time.Time, r *replica) {
	last := r.newest
	if n := len(r.samples); n > 0 && r.samples[n-1].Time.After(last) {
		last = r.samples[n-1].Time // a failed scrape is news too
	}
	if last.IsZero() {
		return
	}
	if at.Sub(last) > staleAfter(r.samples, s.cfg.Interval)+s.raw.late {
		r.fail(at, "no samples since "+last.Format(human.Clock))
	}
}

// staleAfter is how long a replica may go without a sample: three of its
// scrape intervals (the median gap of its samples), plus one refresh
// interval for the query to run in.
func staleAfter(samples []catalogue.Sample, interval time.Duration) time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(samples); i++ {
		gaps = append(gaps, samples[i].Time.Sub(samples[i-1].Time))
	}
	scrape := interval
	if len(gaps) > 0 {
		slices.Sort(gaps)
		scrape = gaps[len(gaps)/2]
	}
	return 3*scrape + interval
}

// snapshot returns every replica's readings, by name: the instances of
// a replica combined (see combine).
func (s *Source) snapshot() []catalogue.Readings {
	byName := map[string][]*replica{}
	bucketsOf := map[*replica]*catalogue.WindowBuckets{}
	for key, r := range s.replicas {
		byName[r.name] = append(byName[r.name], r)
		if wb := s.buckets[key]; wb != nil {
			bucketsOf[r] = wb
		}
	}
	out := make([]catalogue.Readings, 0, len(byName))
	for name, rs := range byName {
		if len(rs) == 1 {
			r := rs[0]
			samples := r.samples
			if len(r.failures) > 0 {
				samples = slices.Concat(samples, r.failures)
			}
			out = append(out, catalogue.Readings{Target: name, Samples: samples, Buckets: bucketsOf[r]})
			continue
		}
		slices.SortFunc(rs, func(a, b *replica) int { return strings.Compare(instanceName(a.targets), instanceName(b.targets)) })
		names := make([]string, len(rs))
		parts := make([][]catalogue.Sample, len(rs))
		var watched *catalogue.Sample
		var wbs []*catalogue.WindowBuckets
		for i, r := range rs {
			names[i] = instanceName(r.targets)
			wbs = append(wbs, bucketsOf[r])
			parts[i] = r.samples
			if r.watched && len(r.samples) > 0 {
				if watched == nil {
					watched = &r.samples[0]
				}
				parts[i] = r.samples[1:]
			}
			if len(r.failures) > 0 {
				parts[i] = slices.Concat(parts[i], r.failures)
			}
		}
		start := time.Time{}
		if !s.appliedAt.IsZero() {
			start = s.appliedAt.Add(-s.appliedWidth)
		}
		out = append(out, catalogue.Readings{Target: name, Samples: combine(names, parts, start, s.appliedAt, watched), Buckets: sumBuckets(wbs)})
	}
	slices.SortFunc(out, func(a, b catalogue.Readings) int { return strings.Compare(a.Target, b.Target) })
	return out
}
