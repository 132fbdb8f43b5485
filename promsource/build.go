package promsource

import (
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
	name    string
	targets map[scrapeTarget]bool
	current catalogue.FigureSet // figures with a series under the current name
	times   map[int64]*sampleBuild
	bounds  map[histKey]map[float64]bool // the union of bucket bounds seen
	sorted  map[histKey][]float64        // bounds, sorted: one slice per histogram
	index   map[histKey]map[float64]int  // a bound's place in sorted
	notes   catalogue.Notes              // every scrape's warnings, each once
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
	acc   catalogue.Accumulator
	hists []engineHists // the engines' histograms, few
	rows  []uint64      // the rows of catalogue.Reads with a series, as bits
}

// engineHists are the histograms of one engine in one scrape.
type engineHists struct {
	engine string
	h      [catalogue.NumHistograms]histBuild
}

// note counts a row of the alias table with a series in the scrape, as
// a page's reading counts its families.
func (s *sampleBuild) note(row int) {
	for len(s.rows) <= row/64 {
		s.rows = append(s.rows, 0)
	}
	if bit := uint64(1) << (row % 64); s.rows[row/64]&bit == 0 {
		s.rows[row/64] |= bit
		s.acc.Family(row)
	}
}

// histBuild is one histogram of one engine in one scrape: counts in the
// order of the replica's bounds for it.
type histBuild struct {
	row        int // of catalogue.Reads, the family that fed it first
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
		s = &sampleBuild{acc: catalogue.NewAccumulator(time.UnixMilli(ms), &r.notes)}
		r.times[ms] = s
	}
	return s
}

// engine returns the accumulator of an engine of the scrape; "" is the
// series without an engine label (or one no longer there once safe).
func (s *sampleBuild) engine(name string) *catalogue.EngineAcc {
	if name == "" {
		return s.acc.Unlabeled()
	}
	return s.acc.Engine(name)
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
	role, isVLLM := catalogue.RoleUnknown, strings.HasPrefix(row.Name, catalogue.VLLMPrefix)
	if row.Engine != catalogue.EngineVLLM {
		role = catalogue.RoleOf(string(metric.get(catalogue.LabelEngineType)))
	}
	add := r.adder(metric, info)
	for _, p := range values {
		sb := r.at(int64(p.Timestamp))
		sb.note(info.role.read)
		sb.acc.Sample.HasVLLM = sb.acc.Sample.HasVLLM || isVLLM
		if s := &sb.acc.Sample; row.Kind.PerEngine() {
			if s.Model == "" {
				s.Model = modelName
			}
			if s.Role == catalogue.RoleUnknown {
				s.Role = role
			}
		}
		add(sb, float64(p.Value))
	}
}

// adder returns what adds one value of a series to a scrape, where the
// series' row of the alias table resolves it.
func (r *replicaBuild) adder(metric labels, info seriesInfo) func(*sampleBuild, float64) {
	row, to, engine := info.role.read, info.fold, info.engine
	switch {
	case to.To == catalogue.ToHistogram:
		k := histKey{engine, catalogue.Histogram(to.Which)}
		at, nb := -1, len(r.sorted[k])
		if info.role.suffix == "_bucket" {
			at = r.index[k][info.le]
		}
		return func(s *sampleBuild, v float64) { s.histogram(k, row, nb).add(info.role.suffix, at, v) }
	case to.To == catalogue.ToLoRA:
		lora := page.LoRAOf(func(name string) string { return metric.get(name) })
		of := func() catalogue.LoRA { return lora }
		return func(s *sampleBuild, v float64) { s.acc.AddLoRA(v, of) }
	case to.To.PerEngine():
		return func(s *sampleBuild, v float64) { s.acc.Add(row, to, s.engine(engine), v) }
	}
	return func(s *sampleBuild, v float64) { s.acc.Add(row, to, nil, v) }
}

// histogram returns the histogram k of the scrape, made on first use on
// the nb bounds of the replica's for it, fed first by row.
func (s *sampleBuild) histogram(k histKey, row, nb int) *histBuild {
	hs := s.engineHists(k.engine)
	if hs == nil {
		s.hists = append(s.hists, engineHists{engine: k.engine})
		hs = &s.hists[len(s.hists)-1]
	}
	hb := &hs.h[k.h]
	if !hb.present {
		*hb = histBuild{row: row, counts: make([]float64, nb), seen: make([]bool, nb), sum: math.NaN(), count: math.NaN(), present: true}
	}
	return hb
}

// add adds one value of a histogram's bucket (the at-th of its bounds),
// sum or count.
func (hb *histBuild) add(suffix string, at int, v float64) {
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
// engines summed into Total by the Accumulator, as a page's are.
func (r *replicaBuild) samples() []catalogue.Sample {
	times := make([]int64, 0, len(r.times))
	for ms := range r.times {
		times = append(times, ms)
	}
	slices.Sort(times)
	out := make([]catalogue.Sample, 0, len(times))
	for _, ms := range times {
		out = append(out, r.times[ms].finish(r.sorted))
	}
	if len(r.targets) > 1 {
		r.notes.Warn(fmt.Sprintf("series come from %d scrape targets (%s); their values are summed", len(r.targets), describeTargets(slices.Collect(maps.Keys(r.targets)))))
	}
	for i := range out {
		out[i].Warnings = r.notes.Warnings
	}
	return out
}

// engineHists returns the histograms of an engine of the scrape, nil
// when it has none.
func (s *sampleBuild) engineHists(engine string) *engineHists {
	for i := range s.hists {
		if s.hists[i].engine == engine {
			return &s.hists[i]
		}
	}
	return nil
}

// finish adds the scrape's histograms to their engines, engine by engine
// in the sample's order, and completes the sample.
func (s *sampleBuild) finish(bounds map[histKey][]float64) catalogue.Sample {
	for i := range s.hists {
		s.engine(s.hists[i].engine) // an engine may have histograms only
	}
	for _, e := range s.acc.Engines() {
		if hs := s.engineHists(e.Name); hs != nil {
			s.addHistograms(e, hs, bounds)
		}
	}
	return s.acc.Finish()
}

// addHistograms adds an engine's histograms, on the replica's bounds (NaN
// where a bucket has no sample at this time). A histogram with a value
// out of its domain is left out, as a page's is.
func (s *sampleBuild) addHistograms(e *catalogue.EngineAcc, hs *engineHists, bounds map[histKey][]float64) {
	for h := range hs.h {
		hb, b := &hs.h[h], bounds[histKey{e.Name, catalogue.Histogram(h)}]
		if !hb.present || b == nil {
			continue
		}
		if why := catalogue.HistogramRefusal(b, hb.counts, sentOrZero(hb.count), sentOrZero(hb.sum)); why != "" {
			s.acc.RefuseHistogram(hb.row, catalogue.Histogram(h), why)
			continue
		}
		for i, ok := range hb.seen {
			if !ok {
				hb.counts[i] = math.NaN()
			}
		}
		s.acc.AddHistogram(hb.row, e, catalogue.Histogram(h), catalogue.Buckets{Bounds: b, Counts: hb.counts, Sum: hb.sum, Count: hb.count})
	}
}

// sentOrZero is a histogram's _count or _sum, 0 when not sent (NaN) for
// catalogue.HistogramRefusal.
func sentOrZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
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
func describeTargets(ts []scrapeTarget) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.job+"/"+t.instance)
	}
	slices.Sort(parts)
	return safetext.Sanitize(strings.Join(parts, ", "))
}
