package page

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// engineAcc accumulates the series of one engine label value ("" for
// series without the label).
type engineAcc struct {
	name   string
	series catalogue.Series
	kvSum  float64 // KV cache usage is averaged, not summed
	kvN    int
}

// builder turns the parsed families of one page into a Sample.
type builder struct {
	in        *Ingester
	sample    catalogue.Sample
	engines   []*engineAcc
	raws      [MaxEngines]string // per engine, the label value it was first found by
	unlabeled *engineAcc
	series    int
	capped    bool
	kinds     [catalogue.NumEngineKinds]int // families read, per engine
	backends  []string                      // a router's backends, raw
	loraAt    float64                       // value of the lora_requests_info series kept
	counts    []float64                     // the sample's slab of bucket counts (carve)
	refused   []int                         // rows a value of which was out of its domain (takes)
	carved    int                           // counts carved for the sample so far
}

// warn adds a warning once.
func (b *builder) warn(w string) {
	w = safetext.Sanitize(w)
	if !slices.Contains(b.sample.Warnings, w) {
		b.sample.Warnings = append(b.sample.Warnings, w)
	}
}

// engine returns the accumulator of an engine label value, or nil when the
// engine cap is reached.
func (b *builder) engine(raw string) *engineAcc {
	if raw == "" {
		if b.unlabeled == nil {
			b.unlabeled = &engineAcc{}
			*b.unlabeled = newEngineAcc("")
		}
		return b.unlabeled
	}
	// The values of a page's engine label are its interned strings, so
	// comparing them mostly stops at their pointers: cheaper than the
	// look-up of the sanitized name.
	for i, e := range b.engines {
		if b.raws[i] == raw {
			return e
		}
	}
	name := b.in.internEngine(raw)
	for _, e := range b.engines {
		if e.name == name {
			return e
		}
	}
	if len(b.engines) >= MaxEngines {
		b.warn(fmt.Sprintf("more than %d engines on the page; the rest were ignored", MaxEngines))
		return nil
	}
	e := &engineAcc{}
	*e = newEngineAcc(name)
	b.raws[len(b.engines)] = raw
	b.engines = append(b.engines, e)
	return e
}

func newEngineAcc(name string) engineAcc {
	return engineAcc{name: name, series: catalogue.NewSeries(), kvSum: math.NaN()}
}

// read walks the alias table in order and folds every wanted family in.
func (b *builder) read(fams map[string]*dto.MetricFamily) {
	current := currentFigures(fams)
	for i := range catalogue.Reads {
		f := &catalogue.Reads[i]
		mf := fams[f.Name]
		if mf == nil || f.Shadowed(current) {
			continue
		}
		if len(mf.GetMetric()) > 0 {
			b.kinds[f.Engine]++
		}
		for _, m := range mf.GetMetric() {
			if b.series >= MaxSeries {
				if !b.capped {
					b.capped = true
					b.warn(fmt.Sprintf("page has more than %d vLLM series; the rest were ignored", MaxSeries))
				}
				return
			}
			b.series++
			b.readMetric(i, mf.GetType(), m)
		}
	}
}

// currentFigures is the set of figures some current (not legacy) family
// of the page feeds.
func currentFigures(fams map[string]*dto.MetricFamily) catalogue.FigureSet {
	var current catalogue.FigureSet
	for i := range catalogue.Reads {
		if f := &catalogue.Reads[i]; !f.Legacy && fams[f.Name] != nil {
			current |= f.FigureSet()
		}
	}
	return current
}

// readMetric folds one series of a wanted family into the sample, where
// its row of the alias table says (catalogue.Read.Resolve).
func (b *builder) readMetric(row int, t dto.MetricType, m *dto.Metric) {
	f := &catalogue.Reads[row]
	to := f.Resolve(func(name string) string { return labelValue(m, name) })
	if !f.Kind.PerEngine() {
		b.readPageWide(row, to, t, m)
		return
	}
	b.notePage(row, f, m)
	acc := b.engine(labelValue(m, catalogue.LabelEngine))
	if acc == nil {
		return
	}
	if to.Warning != "" {
		b.warn(to.Warning)
	}
	b.apply(row, to, acc, t, m)
}

// apply folds the value of a resolved series into acc.
func (b *builder) apply(row int, to catalogue.Fold, acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	switch to.To {
	case catalogue.ToHistogram:
		if h := m.GetHistogram(); h != nil {
			b.readHistogram(row, catalogue.Histogram(to.Which), acc, h)
		}
		return
	case catalogue.ToSleep:
		readSleep(acc, to.Which, t, m)
		return
	}
	v, ok := scalarValue(t, m)
	if !ok || !b.takes(row, to, v) {
		return
	}
	switch to.To {
	case catalogue.ToScalar:
		b.readScalar(&catalogue.Reads[row], to, acc, v)
	case catalogue.ToFinished:
		acc.series.Finished[to.Which] = catalogue.NanAdd(acc.series.Finished[to.Which], v)
	case catalogue.ToSpecPosition:
		readSpecPerPos(acc, to.Which, v)
	}
}

// takes reports whether the fold reads the row's value v (Fold.Takes);
// when it does not, the figure is n/a, marked refused, and the first
// refusal of each family is said.
func (b *builder) takes(row int, to catalogue.Fold, v float64) bool {
	why := to.Refusal(v)
	if why == "" {
		return true
	}
	b.sample.Refused |= to.Refuses()
	if !slices.Contains(b.refused, row) {
		b.refused = append(b.refused, row)
		b.warn(catalogue.RefusalWarning(catalogue.Reads[row].Name, v, why))
	}
	return false
}

// notePage records what one engine series says of the page as a whole: its
// model, its role, and the backend it belongs to when a router wrote it.
func (b *builder) notePage(row int, f *catalogue.Read, m *dto.Metric) {
	if b.sample.Model == "" {
		if ml := f.Model(); ml != "" {
			if raw := labelValue(m, ml); raw != "" {
				b.sample.Model = b.in.internModel(raw)
			}
		}
	}
	if f.Engine == catalogue.EngineVLLM {
		// The production-stack router re-exports vLLM's names with a
		// server label; vLLM itself never writes one.
		if v := labelValue(m, catalogue.LabelServer); v != "" {
			b.sample.Router = catalogue.RouterProductionStack
			b.addBackend(v)
		}
		return // vLLM states no role: spare its many series the look-up
	}
	if f.Router != catalogue.RouterNone {
		b.sample.Router = f.Router
		for _, l := range f.Router.BackendLabels() {
			if v := labelValue(m, l); v != "" {
				b.addBackend(v)
				break
			}
		}
	}
	if b.sample.Role == catalogue.RoleUnknown {
		b.sample.Role = catalogue.RoleOf(labelValue(m, catalogue.LabelEngineType))
	}
}

// addBackend remembers a backend a router page names, up to MaxEngines.
func (b *builder) addBackend(raw string) {
	if slices.Contains(b.backends, raw) {
		return
	}
	if len(b.backends) >= MaxEngines {
		b.warn(fmt.Sprintf("router names more than %d backends; the rest were not listed", MaxEngines))
		return
	}
	b.backends = append(b.backends, raw)
}

// readPageWide folds a family that describes the whole server, not an
// engine: its configuration and its process.
func (b *builder) readPageWide(row int, to catalogue.Fold, t dto.MetricType, m *dto.Metric) {
	if to.To == catalogue.ToLoRA {
		b.readLoRA(t, m)
		return
	}
	v, ok := scalarValue(t, m)
	if to.Labelled {
		v, ok = to.Value, true
	}
	if !ok || !b.takes(row, to, v) {
		return
	}
	s := &b.sample
	switch to.To {
	case catalogue.ToKVCapacity:
		s.KVCapacityTokens = catalogue.NanAdd(s.KVCapacityTokens, v)
	case catalogue.ToProcessStart:
		if math.IsNaN(s.ProcessStartTime) || v > s.ProcessStartTime {
			s.ProcessStartTime = v
		}
	case catalogue.ToRSS:
		s.ProcessRSSBytes = catalogue.NanAdd(s.ProcessRSSBytes, v)
	case catalogue.ToGC:
		s.GCCollections = catalogue.NanAdd(s.GCCollections, v)
	case catalogue.ToHTTP:
		s.HTTPRequests = catalogue.NanAdd(s.HTTPRequests, v)
	}
}

// readScalar adds a gauge's or counter's value, one the fold takes, to
// acc's scalar.
func (b *builder) readScalar(f *catalogue.Read, to catalogue.Fold, acc *engineAcc, v float64) {
	sc := catalogue.Scalar(to.Which)
	if f.Derived {
		b.sample.Derived.Add(catalogue.ScalarFigure(sc))
	}
	if sc == catalogue.KVCacheUsage {
		acc.kvSum = catalogue.NanAdd(acc.kvSum, v)
		acc.kvN++
		return
	}
	acc.series.Scalars[sc] = catalogue.FoldScalar(sc, acc.series.Scalars[sc], v)
}

// readHistogram adds a histogram series of the row to acc's histogram.
func (b *builder) readHistogram(row int, which catalogue.Histogram, acc *engineAcc, h *dto.Histogram) {
	f := &catalogue.Reads[row]
	if f.Derived {
		b.sample.Derived.Add(catalogue.HistogramFigure(which))
	}
	if w := histogramRefusal(h); w != "" {
		b.warn(catalogue.HistogramRefusalWarning(f.Name, w))
		b.sample.Refused.Add(catalogue.HistogramFigure(which))
		return
	}
	dst := &acc.series.Histograms[which]
	src := b.buckets(row, h, dst)
	if w := src.Problem(); w != "" {
		b.warn(f.Name + ": " + w + "; its quantiles are n/a")
	}
	if !dst.Add(src) {
		b.warn(fmt.Sprintf("%s: series with different buckets; one was ignored", f.Name))
	}
}

// histogramRefusal says which value of a histogram series is out of its
// domain (catalogue.HistogramRefusal's rule, read off the series in
// place), "" when none is.
func histogramRefusal(h *dto.Histogram) string {
	for _, bk := range h.GetBucket() {
		c := float64(bk.GetCumulativeCount())
		if bk.CumulativeCountFloat != nil {
			c = bk.GetCumulativeCountFloat()
		}
		if why := catalogue.BucketRefusal(bk.GetUpperBound(), c); why != "" {
			return why
		}
	}
	if h.SampleCountFloat != nil {
		if why := catalogue.HistogramCountRefusal(h.GetSampleCountFloat()); why != "" {
			return why
		}
	}
	if h.SampleSum != nil {
		return catalogue.HistogramSumRefusal(h.GetSampleSum())
	}
	return ""
}

// buckets copies the parsed histogram of a resolved series into the
// sample's form, its bounds interned, to be merged into dst.
func (b *builder) buckets(row int, h *dto.Histogram, dst *catalogue.Buckets) catalogue.Buckets {
	pairs := b.in.sortedPairs(h)
	src := catalogue.Buckets{Bounds: b.in.internBounds(row, pairs), Sum: math.NaN(), Count: math.NaN()}
	src.Counts = b.countsFor(dst, len(pairs))
	for i, p := range pairs {
		src.Counts[i] = p.count
	}
	if h.SampleSum != nil {
		src.Sum = h.GetSampleSum()
	}
	switch {
	case h.SampleCountFloat != nil:
		src.Count = h.GetSampleCountFloat()
	case h.SampleCount != nil:
		src.Count = float64(h.GetSampleCount())
	}
	return src
}

// countsFor returns room for the n counts of a histogram to be merged
// into dst: a slice of the sample's own when dst takes it, else the
// Ingester's scratch, which Buckets.Add only reads.
func (b *builder) countsFor(dst *catalogue.Buckets, n int) []float64 {
	if dst.Present() {
		if cap(b.in.countScratch) < n {
			b.in.countScratch = make([]float64, n)
		}
		return b.in.countScratch[:n]
	}
	return b.carve(n)
}

// carve returns n counts of the sample's slab. The counts of one sample
// are allocated together, sized by the last sample's, and never shared
// with another sample (which the analysis keeps long after).
func (b *builder) carve(n int) []float64 {
	if n == 0 {
		return []float64{}
	}
	if cap(b.counts)-len(b.counts) < n {
		b.counts = make([]float64, 0, max(n, b.in.countsHint-b.carved, minCountSlab))
	}
	at := len(b.counts)
	b.counts = b.counts[:at+n]
	b.carved += n
	return b.counts[at : at+n : at+n]
}

// minCountSlab is the fewest counts a slab is allocated for: a page of
// one engine needs some hundreds.
const minCountSlab = 256

// finish derives what the engine's page lacks, sums the engines into
// Total and lists them when there are two or more named ones.
func (b *builder) finish() catalogue.Sample {
	defer func() { b.in.countsHint = b.carved }()
	slices.SortFunc(b.engines, func(x, y *engineAcc) int {
		return cmp.Or(cmp.Compare(len(x.name), len(y.name)), cmp.Compare(x.name, y.name))
	})
	b.sample.EngineKind = catalogue.DominantEngine(&b.kinds)
	b.sample.Backends = b.routerBackends()
	all := b.engines
	if b.unlabeled != nil {
		all = append(all, b.unlabeled)
	}
	for _, e := range all {
		if e.kvN > 0 {
			e.series.Scalars[catalogue.KVCacheUsage] = e.kvSum / float64(e.kvN)
		}
		b.sample.Derived |= e.series.Derive(b.sample.EngineKind)
	}
	switch len(all) {
	case 0:
		return b.sample
	case 1:
		b.sample.Total = all[0].series
		b.sample.DeriveKVCapacity()
		return b.sample
	}
	b.sample.Total = b.total(all)
	if len(b.engines) >= 2 {
		b.sample.Engines = make([]catalogue.Engine, len(b.engines))
		for i, e := range b.engines {
			b.sample.Engines[i] = catalogue.Engine{Name: e.name, Series: e.series}
		}
	}
	b.sample.DeriveKVCapacity()
	return b.sample
}

// total sums the engines into the replica's series (catalogue.Merge); an
// engine whose buckets of a histogram differ from the others' is left out
// of that histogram's sum, and said.
func (b *builder) total(all []*engineAcc) catalogue.Series {
	var m catalogue.Merge
	for _, e := range all {
		refused := m.Add(&e.series)
		for h := range catalogue.NumHistograms {
			if refused.Has(h) {
				b.warn(fmt.Sprintf("engines disagree on the buckets of %s; engine %s left out of the total", catalogue.HistogramName(h), e.name))
			}
		}
	}
	return m.Series()
}
