package promsource

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
)

// Labels vtop reads off Prometheus's series besides vLLM's own.
const (
	labelPod      = "pod"
	labelInstance = "instance"
	labelJob      = "job"
	labelLE       = "le"
	labelGen      = "generation"
)

// scrapeTarget is one target of Prometheus: a replica's series normally
// come from exactly one.
type scrapeTarget struct{ job, instance string }

// grouper names the replica of a series.
type grouper struct {
	by string // the grouping label; "" is pod where present, else instance
}

// key returns what the series is read under: its replica's name and its
// scrape target. The targets of one replica (the instances of a group
// such as --group-by job, a pod's sidecar) are built apart and summed
// only once each has its own samples (see combine): their scrapes fall
// at different times and their counters start and reset apart.
func (g grouper) key(m labels) string {
	return g.name(m) + "\x00" + m.get(labelJob) + "\x00" + m.get(labelInstance)
}

// name returns the grouping value of a series, the replica it is part
// of: the label asked for, else instance.
func (g grouper) name(m labels) string {
	by := g.by
	if by == "" {
		by = labelPod
	}
	if v := m.get(by); v != "" {
		return string(v)
	}
	return m.get(labelInstance)
}

// role is what one series feeds: a row of the alias table and, for a
// histogram, which of its series it is.
type role struct {
	read   int    // row of catalogue.Reads
	suffix string // "_bucket", "_sum", "_count" or "" for a plain series
}

// roleOf returns what the series of that name feeds, under any prefix.
func roleOf(name string) (role, bool) {
	canon := catalogue.Canonical(name)
	i, ok := catalogue.LookupSample([]byte(canon))
	if !ok {
		return role{}, false
	}
	return role{read: i, suffix: canon[len(catalogue.Reads[i].Name):]}, true
}

// fleetBuild turns the raw samples of one refresh into samples per
// replica.
type fleetBuild struct {
	group    grouper
	replicas map[string]*replicaBuild
	// bucketless is set when the raw read left the buckets to the store
	// (see summary.go): a histogram's _sum and _count then make it
	// present with no bounds, so that its mean is read and its
	// quantiles come from the store's buckets.
	bucketless bool
}

// replicaBuild accumulates the samples of one replica, one per scrape
// timestamp.
type replicaBuild struct {
	name     string
	targets  map[scrapeTarget]bool
	current  catalogue.FigureSet // figures with a series under the current name
	times    map[int64]*sampleBuild
	bounds   map[histKey]map[float64]bool // the union of bucket bounds seen
	sorted   map[histKey][]float64        // bounds, sorted: one slice per histogram
	index    map[histKey]map[float64]int  // a bound's place in sorted
	warnings []string
}

// layOut sorts the bounds of every histogram of every engine once, so
// that all scrapes of the replica share one slice (the analysis treats
// equal slices as one series of buckets), and indexes them.
func (r *replicaBuild) layOut() {
	r.sorted = make(map[histKey][]float64, len(r.bounds))
	r.index = make(map[histKey]map[float64]int, len(r.bounds))
	for k, set := range r.bounds {
		b := make([]float64, 0, len(set))
		for le := range set {
			b = append(b, le)
		}
		slices.Sort(b)
		idx := make(map[float64]int, len(b))
		for i, le := range b {
			idx[le] = i
		}
		r.sorted[k], r.index[k] = b, idx
	}
}

// histKey is one histogram of one engine.
type histKey struct {
	engine string
	h      catalogue.Histogram
}

// sampleBuild is one scrape of one replica being assembled.
type sampleBuild struct {
	sample  catalogue.Sample
	engines map[string]*engineBuild
	loraAt  float64                       // the value of the LoRA series kept
	rows    []uint64                      // the rows of catalogue.Reads with a series, as bits
	kinds   [catalogue.NumEngineKinds]int // the rows with a series, by engine
}

// note counts a row of the alias table with a series in the scrape, as
// a page's reading counts its families.
func (s *sampleBuild) note(row int) {
	for len(s.rows) <= row/64 {
		s.rows = append(s.rows, 0)
	}
	if bit := uint64(1) << (row % 64); s.rows[row/64]&bit == 0 {
		s.rows[row/64] |= bit
		s.kinds[catalogue.Reads[row].Engine]++
	}
}

// engineBuild is one engine label value ("" for series without one) in
// one scrape.
type engineBuild struct {
	series catalogue.Series
	kvSum  float64
	kvN    int
	hist   [catalogue.NumHistograms]histBuild
}

// histBuild is one histogram in one scrape: counts in the order of the
// replica's bounds for it.
type histBuild struct {
	counts     []float64
	seen       []bool // counts[i] has a value
	sum, count float64
	present    bool
}

func newFleetBuild(g grouper) *fleetBuild {
	return &fleetBuild{group: g, replicas: map[string]*replicaBuild{}}
}

// The raw samples of the window go in in two passes: survey finds each
// series' replica and role, each replica's targets, current names and
// bucket bounds, so that fold can put every value into slices laid out on
// the bounds rather than into maps. Legacy names are dropped for replicas
// that also carry the current name of the same figure, as the page parser
// does.

// survey is the first pass: what each series is and feeds, each
// replica's targets, current names and bucket bounds.
func (b *fleetBuild) survey(m matrix) []seriesInfo {
	series := make([]seriesInfo, len(m))
	for i, s := range m {
		ro, ok := roleOf(s.Metric.get(model.MetricNameLabel))
		if !ok {
			continue
		}
		r := b.replica(b.group.key(s.Metric), b.group.name(s.Metric))
		info := seriesInfo{role: ro, ok: true, replica: r, le: math.NaN(),
			engine: safetext.Sanitize(s.Metric.get(catalogue.LabelEngine))}
		r.targets[targetOf(s.Metric)] = true
		row := &catalogue.Reads[ro.read]
		info.fold = row.Resolve(func(name string) string { return s.Metric.get(name) })
		if !row.Legacy {
			r.current |= row.FigureSet()
		}
		if b.bucketless && ro.suffix != "_bucket" && info.fold.To == catalogue.ToHistogram {
			if k := (histKey{info.engine, catalogue.Histogram(info.fold.Which)}); r.bounds[k] == nil {
				r.bounds[k] = map[float64]bool{}
			}
		}
		if ro.suffix == "_bucket" && info.fold.To == catalogue.ToHistogram {
			le, err := strconv.ParseFloat(s.Metric.get(labelLE), 64)
			if err != nil {
				continue // a bucket without a bound: Prometheus skips it too
			}
			info.le = le
			k := histKey{info.engine, catalogue.Histogram(info.fold.Which)}
			if r.bounds[k] == nil {
				r.bounds[k] = map[float64]bool{}
			}
			r.bounds[k][le] = true
		}
		series[i] = info
	}
	for _, r := range b.replicas {
		r.layOut()
	}
	return series
}

// fold is the second pass: every value into its replica's scrapes,
// only those after since[replica] for a replica listed there.
func (b *fleetBuild) fold(m matrix, infos []seriesInfo, since map[*replicaBuild]model.Time) {
	for i, s := range m {
		info := infos[i]
		if !info.ok {
			continue
		}
		if catalogue.Reads[info.role.read].Shadowed(info.replica.current) {
			continue
		}
		values := s.Values
		if t, ok := since[info.replica]; ok {
			j := len(values)
			for j > 0 && values[j-1].Timestamp > t {
				j--
			}
			values = values[j:]
		}
		info.replica.addSeries(s.Metric, values, info)
	}
}

// sameShape reports whether the replica's series are laid out as in an
// earlier build: same targets, same current names, same bucket bounds.
// Its samples built then are then what a build now would make of the same
// values.
func (r *replicaBuild) sameShape(targets map[scrapeTarget]bool, current catalogue.FigureSet, sorted map[histKey][]float64) bool {
	if !maps.Equal(r.targets, targets) || r.current != current || len(r.sorted) != len(sorted) {
		return false
	}
	for k, b := range r.sorted {
		if !slices.Equal(b, sorted[k]) {
			return false
		}
	}
	return true
}

// seriesInfo is what the first pass learnt of one series.
type seriesInfo struct {
	ok      bool
	role    role
	replica *replicaBuild
	engine  string
	le      float64        // a bucket's bound; NaN for other series
	fold    catalogue.Fold // where its values go (catalogue.Read.Resolve)
}

func targetOf(m labels) scrapeTarget {
	return scrapeTarget{job: m.get(labelJob), instance: m.get(labelInstance)}
}

// replica returns the build of the instance of a replica under key, made
// on first use.
func (b *fleetBuild) replica(key, name string) *replicaBuild {
	r := b.replicas[key]
	if r == nil {
		r = &replicaBuild{
			name:    safetext.Sanitize(name),
			targets: map[scrapeTarget]bool{},
			times:   map[int64]*sampleBuild{},
			bounds:  map[histKey]map[float64]bool{},
		}
		b.replicas[key] = r
	}
	return r
}

// at returns the scrape of the replica at ms, made on first use.
func (r *replicaBuild) at(ms int64) *sampleBuild {
	s := r.times[ms]
	if s == nil {
		s = &sampleBuild{engines: map[string]*engineBuild{}, sample: catalogue.NewSample(time.UnixMilli(ms))}
		r.times[ms] = s
	}
	return s
}

// engine returns the engine of a scrape, made on first use.
func (s *sampleBuild) engine(name string) *engineBuild {
	e := s.engines[name]
	if e == nil {
		e = &engineBuild{series: catalogue.NewSeries(), kvSum: math.NaN()}
		s.engines[name] = e
	}
	return e
}

// addSeries folds every sample of one series into the replica's scrapes.
func (r *replicaBuild) addSeries(metric labels, values []model.SamplePair, info seriesInfo) {
	if len(values) == 0 {
		return
	}
	row := &catalogue.Reads[info.role.read]
	modelName := ""
	if ml := row.Model(); ml != "" {
		modelName = safetext.Sanitize(metric.get(ml))
	}
	at, nb := -1, 0
	if info.fold.To == catalogue.ToHistogram {
		k := histKey{info.engine, catalogue.Histogram(info.fold.Which)}
		nb = len(r.sorted[k])
		if info.role.suffix == "_bucket" {
			at = r.index[k][info.le]
		}
	}
	apply := foldValue(info, at, nb)
	if info.fold.To == catalogue.ToLoRA {
		apply = loraFold(metric)
	}
	role, isVLLM := catalogue.RoleUnknown, strings.HasPrefix(row.Name, vllmOwn)
	if row.Engine != catalogue.EngineVLLM {
		role = catalogue.RoleOf(string(metric.get(catalogue.LabelEngineType)))
	}
	for _, p := range values {
		sb := r.at(int64(p.Timestamp))
		sb.note(info.role.read)
		sb.sample.HasVLLM = sb.sample.HasVLLM || isVLLM
		if row.Kind.PerEngine() {
			if sb.sample.Model == "" {
				sb.sample.Model = modelName
			}
			if sb.sample.Role == catalogue.RoleUnknown {
				sb.sample.Role = role
			}
		}
		if row.Derived {
			sb.sample.Derived |= info.fold.Figures()
		}
		if v := float64(p.Value); info.fold.Labelled || r.takes(row.Name, info.fold, v) {
			apply(sb, v)
		} else {
			sb.sample.Refused |= info.fold.Refuses()
		}
	}
}

// takes reports whether the fold reads a value of the family, as the page
// parser asks (catalogue.Fold.Takes); the first refusal of each family is
// said among the replica's warnings, the figure n/a.
func (r *replicaBuild) takes(family string, to catalogue.Fold, v float64) bool {
	why := to.Refusal(v)
	if why == "" {
		return true
	}
	said := func(w string) bool { return strings.HasPrefix(w, family+": value ") }
	if !slices.ContainsFunc(r.warnings, said) {
		r.warnings = append(r.warnings, catalogue.RefusalWarning(family, v, why))
	}
	return false
}

// foldValue returns what adds one value of a series to a scrape, where
// the series' row of the alias table says; a bucket is at its place among
// the nb bounds of its histogram.
func foldValue(info seriesInfo, at, nb int) func(*sampleBuild, float64) {
	to, engine := info.fold, info.engine
	if to.To.PerEngine() {
		return engineFold(to, engine, info.role.suffix, at, nb)
	}
	return sampleFold(to)
}

// engineFold adds a value to the engine's series.
func engineFold(to catalogue.Fold, engine, suffix string, at, nb int) func(*sampleBuild, float64) {
	switch to.To {
	case catalogue.ToScalar:
		return func(s *sampleBuild, v float64) {
			s.engine(engine).addScalar(catalogue.Scalar(to.Which), v)
		}
	case catalogue.ToFinished:
		return func(s *sampleBuild, v float64) {
			f := &s.engine(engine).series.Finished[to.Which]
			*f = catalogue.NanAdd(*f, v)
		}
	case catalogue.ToHistogram:
		return func(s *sampleBuild, v float64) {
			s.engine(engine).addHistogram(catalogue.Histogram(to.Which), suffix, at, nb, v)
		}
	case catalogue.ToSleep:
		return func(s *sampleBuild, v float64) {
			cur := &s.engine(engine).series.Scalars[catalogue.SleepLevel]
			if v == 1 && (math.IsNaN(*cur) || float64(to.Which) > *cur) {
				*cur = float64(to.Which)
			}
		}
	}
	return func(s *sampleBuild, v float64) { // catalogue.ToSpecPosition
		e := s.engine(engine)
		for len(e.series.SpecAcceptedPerPos) <= to.Which {
			e.series.SpecAcceptedPerPos = append(e.series.SpecAcceptedPerPos, math.NaN())
		}
		e.series.SpecAcceptedPerPos[to.Which] = catalogue.NanAdd(e.series.SpecAcceptedPerPos[to.Which], v)
	}
}

// loraFold keeps what the series of vllm:lora_requests_info of the
// highest value (the newest change) says, as the page parser does.
func loraFold(m labels) func(*sampleBuild, float64) {
	lora := page.LoRAOf(func(name string) string { return m.get(name) })
	return func(s *sampleBuild, v float64) {
		if !s.sample.LoRA.Present || v > s.loraAt {
			s.sample.LoRA, s.loraAt = lora, v
		}
	}
}

// sampleFold adds a value to the figures of the server as a whole.
func sampleFold(to catalogue.Fold) func(*sampleBuild, float64) {
	add := func(f func(*catalogue.Sample) *float64) func(*sampleBuild, float64) {
		return func(s *sampleBuild, v float64) {
			if to.Labelled {
				v = to.Value
			}
			if p := f(&s.sample); to.Takes(v) {
				*p = catalogue.NanAdd(*p, v)
			}
		}
	}
	switch to.To {
	case catalogue.ToKVCapacity:
		return add(func(s *catalogue.Sample) *float64 { return &s.KVCapacityTokens })
	case catalogue.ToRSS:
		return add(func(s *catalogue.Sample) *float64 { return &s.ProcessRSSBytes })
	case catalogue.ToGC:
		return add(func(s *catalogue.Sample) *float64 { return &s.GCCollections })
	case catalogue.ToHTTP:
		return add(func(s *catalogue.Sample) *float64 { return &s.HTTPRequests })
	case catalogue.ToProcessStart:
		return func(s *sampleBuild, v float64) {
			if math.IsNaN(s.sample.ProcessStartTime) || v > s.sample.ProcessStartTime {
				s.sample.ProcessStartTime = v
			}
		}
	}
	return func(*sampleBuild, float64) {} // ToNothing
}

// addScalar adds a gauge or counter; KV cache usage is averaged, not
// summed, over the series of one engine.
func (e *engineBuild) addScalar(k catalogue.Scalar, v float64) {
	if k == catalogue.KVCacheUsage {
		e.kvSum = catalogue.NanAdd(e.kvSum, v)
		e.kvN++
		return
	}
	e.series.Scalars[k] = catalogue.FoldScalar(k, e.series.Scalars[k], v)
}

// addHistogram adds one value of a histogram's bucket (the at-th of nb
// bounds), sum or count.
func (e *engineBuild) addHistogram(h catalogue.Histogram, suffix string, at, nb int, v float64) {
	hb := &e.hist[h]
	if !hb.present {
		*hb = histBuild{counts: make([]float64, nb), seen: make([]bool, nb), sum: math.NaN(), count: math.NaN(), present: true}
	}
	switch suffix {
	case "_bucket":
		if hb.seen[at] {
			v += hb.counts[at]
		}
		hb.counts[at], hb.seen[at] = v, true
	case "_sum":
		hb.sum = catalogue.NanAdd(hb.sum, v)
	case "_count":
		hb.count = catalogue.NanAdd(hb.count, v)
	}
}

// samples returns the replica's scrapes, oldest first, each with its
// engines summed into Total as the page parser sums them.
func (r *replicaBuild) samples() []catalogue.Sample {
	times := make([]int64, 0, len(r.times))
	for ms := range r.times {
		times = append(times, ms)
	}
	slices.Sort(times)
	out := make([]catalogue.Sample, 0, len(times))
	for _, ms := range times {
		s, warnings := r.times[ms].finish(r.sorted)
		out = append(out, s)
		for _, w := range warnings {
			if !slices.Contains(r.warnings, w) {
				r.warnings = append(r.warnings, w)
			}
		}
	}
	if len(r.targets) > 1 {
		r.warnings = append(r.warnings, fmt.Sprintf("series come from %d scrape targets (%s); their values are summed", len(r.targets), describeTargets(r.targets)))
	}
	for i := range out {
		out[i].Warnings = r.warnings
	}
	return out
}

// finish assembles the scrape: engines sorted as the page parser sorts
// them, their sum in Total, and the engines listed when two or more are
// named; and what summing them has to say.
func (s *sampleBuild) finish(bounds map[histKey][]float64) (catalogue.Sample, []string) {
	names := make([]string, 0, len(s.engines))
	for n := range s.engines {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y)) })
	series := make([]catalogue.Series, len(names))
	named := 0
	s.sample.EngineKind = catalogue.DominantEngine(&s.kinds)
	var warnings []string
	for i, n := range names {
		series[i], warnings = s.engines[n].finish(n, bounds, warnings, &s.sample.Refused)
		s.sample.Derived |= series[i].Derive(s.sample.EngineKind)
		if n != "" {
			named++
		}
	}
	out := s.sample
	var disagree []string
	out.Total, disagree = total(names, series)
	warnings = append(warnings, disagree...)
	out.DeriveKVCapacity()
	if named >= 2 {
		out.Engines = make([]catalogue.Engine, 0, named)
		for i, n := range names {
			if n != "" {
				out.Engines = append(out.Engines, catalogue.Engine{Name: n, Series: series[i]})
			}
		}
	}
	return out, warnings
}

// finish returns the engine's series, histograms on the replica's bounds
// (NaN where a bucket has no sample at this time), before the figures
// derived from them (catalogue.Series.Derive). A histogram with a value
// out of its domain is left out, as the page parser leaves it, with a
// warning added to warnings, and marked in refused.
func (e *engineBuild) finish(name string, bounds map[histKey][]float64, warnings []string, refused *catalogue.FigureSet) (catalogue.Series, []string) {
	s := e.series
	if e.kvN > 0 {
		s.Scalars[catalogue.KVCacheUsage] = e.kvSum / float64(e.kvN)
	}
	for h := range catalogue.NumHistograms {
		hb := &e.hist[h]
		b := bounds[histKey{name, h}]
		if !hb.present || b == nil {
			continue
		}
		if why := catalogue.HistogramRefusal(b, hb.counts, sentOrZero(hb.count), sentOrZero(hb.sum)); why != "" {
			w := catalogue.HistogramRefusalWarning(catalogue.HistogramName(h), why)
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
			refused.Add(catalogue.HistogramFigure(catalogue.Histogram(h)))
			continue
		}
		counts := hb.counts
		for i, ok := range hb.seen {
			if !ok {
				counts[i] = math.NaN()
			}
		}
		s.Histograms[h] = catalogue.Buckets{Bounds: b, Counts: counts, Sum: hb.sum, Count: hb.count}
	}
	return s, warnings
}

// sentOrZero is a histogram's _count or _sum, 0 when not sent (NaN) for
// catalogue.HistogramRefusal.
func sentOrZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// total sums the engines (catalogue.Merge), and says which were left out
// of a histogram's sum for buckets unlike the others'.
func total(names []string, engines []catalogue.Series) (catalogue.Series, []string) {
	if len(engines) == 1 {
		return engines[0], nil
	}
	var m catalogue.Merge
	var warnings []string
	for i := range engines {
		refused := m.Add(&engines[i])
		for h := range catalogue.NumHistograms {
			if refused.Has(h) {
				warnings = append(warnings, fmt.Sprintf("engines disagree on the buckets of %s; engine %s left out of the total", catalogue.HistogramName(h), names[i]))
			}
		}
	}
	return m.Series(), warnings
}

// upFailures returns the scrapes Prometheus failed (up is 0) of the
// replica's own targets, as failed samples.
func upFailures(s *sampleStream) []catalogue.Sample {
	var out []catalogue.Sample
	problem := upProblem(s.Metric)
	for _, p := range s.Values {
		if p.Value == 0 {
			out = append(out, catalogue.Sample{Time: time.UnixMilli(int64(p.Timestamp)), Err: problem})
		}
	}
	return out
}

// upProblem is the problem of a scrape Prometheus failed (up is 0) of
// the target of up's labels m, live or in the past.
func upProblem(m labels) string {
	return "Prometheus cannot scrape " + safetext.Sanitize(m.get(labelInstance)) + " (up is 0)"
}

// mergeFailures inserts failed samples among good ones by time; a failure
// at the time of a good sample replaces nothing (Prometheus writes none of
// a failed scrape's series).
func mergeFailures(good, failed []catalogue.Sample) []catalogue.Sample {
	if len(failed) == 0 {
		return good
	}
	out := slices.Concat(good, failed)
	slices.SortStableFunc(out, func(a, b catalogue.Sample) int { return a.Time.Compare(b.Time) })
	return out
}

// describeTargets lists targets for a warning, briefly.
func describeTargets(ts map[scrapeTarget]bool) string {
	var parts []string
	for t := range ts {
		parts = append(parts, t.job+"/"+t.instance)
	}
	slices.Sort(parts)
	return safetext.Sanitize(strings.Join(parts, ", "))
}
