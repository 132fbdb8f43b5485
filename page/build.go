package page

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// builder turns the parsed families of one page into a Sample, through
// the catalogue's Accumulator.
type builder struct {
	in       *Ingester
	acc      catalogue.Accumulator
	raws     [MaxEngines]rawEngine // engines by the label value first found
	nraws    int
	series   int
	capped   bool
	backends []string  // a router's backends, raw
	counts   []float64 // the sample's slab of bucket counts (carve)
	carved   int       // counts carved for the sample so far
}

// rawEngine is an engine label value of the page and its accumulator.
type rawEngine struct {
	raw string
	acc *catalogue.EngineAcc
}

// warn adds a warning once, safe to draw.
func (b *builder) warn(w string) { b.acc.Warn(safetext.Sanitize(w)) }

// engine returns the accumulator of an engine label value, or nil when the
// engine cap is reached.
func (b *builder) engine(raw string) *catalogue.EngineAcc {
	if raw == "" {
		return b.acc.Unlabeled()
	}
	// The values of a page's engine label are its interned strings, so
	// comparing them mostly stops at their pointers: cheaper than the
	// look-up of the sanitized name.
	for _, r := range b.raws[:b.nraws] {
		if r.raw == raw {
			return r.acc
		}
	}
	e := b.acc.Engine(b.in.internLabel(raw))
	if e == nil {
		b.warn(fmt.Sprintf("more than %d engines on the page; the rest were ignored", MaxEngines))
	} else if b.nraws < MaxEngines {
		b.raws[b.nraws] = rawEngine{raw, e}
		b.nraws++
	}
	return e
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
			b.acc.Family(i)
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
	var acc *catalogue.EngineAcc
	if f.Kind.PerEngine() {
		b.notePage(row, f, m)
		if acc = b.engine(labelValue(m, catalogue.LabelEngine)); acc == nil {
			return
		}
	}
	switch to.To {
	case catalogue.ToHistogram:
		if h := m.GetHistogram(); h != nil {
			b.readHistogram(row, catalogue.Histogram(to.Which), acc, h)
		}
		return
	case catalogue.ToLoRA:
		if v, ok := scalarValue(t, m); ok {
			b.acc.AddLoRA(v, func() catalogue.LoRA { return LoRAOf(func(name string) string { return labelValue(m, name) }) })
		}
		return
	}
	if v, ok := scalarValue(t, m); ok || to.Labelled {
		b.acc.Add(row, to, acc, v)
	}
}

// notePage records what one engine series says of the page as a whole: its
// model, its role, and the backend it belongs to when a router wrote it.
func (b *builder) notePage(row int, f *catalogue.Read, m *dto.Metric) {
	if b.acc.Sample.Model == "" {
		if ml := f.Model(); ml != "" {
			if raw := labelValue(m, ml); raw != "" {
				b.acc.Sample.Model = b.in.internLabel(raw)
			}
		}
	}
	if f.Engine == catalogue.EngineVLLM {
		// The production-stack router re-exports vLLM's names with a
		// server label; vLLM itself never writes one.
		if v := labelValue(m, catalogue.LabelServer); v != "" {
			b.acc.Sample.Router = catalogue.RouterProductionStack
			b.addBackend(v)
		}
		return // vLLM states no role: spare its many series the look-up
	}
	if f.Router != catalogue.RouterNone {
		b.acc.Sample.Router = f.Router
		for _, l := range f.Router.BackendLabels() {
			if v := labelValue(m, l); v != "" {
				b.addBackend(v)
				break
			}
		}
	}
	if b.acc.Sample.Role == catalogue.RoleUnknown {
		b.acc.Sample.Role = catalogue.RoleOf(labelValue(m, catalogue.LabelEngineType))
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

// readHistogram adds a histogram series of the row to acc's histogram.
func (b *builder) readHistogram(row int, which catalogue.Histogram, acc *catalogue.EngineAcc, h *dto.Histogram) {
	if why := histogramRefusal(h); why != "" {
		b.acc.RefuseHistogram(row, which, why)
		return
	}
	src := b.buckets(row, h, &acc.Series.Histograms[which])
	if w := src.Problem(); w != "" {
		b.warn(catalogue.Reads[row].Name + ": " + w + "; its quantiles are n/a")
	}
	b.acc.AddHistogram(row, acc, which, src)
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

// finish completes the Sample: the engines summed, a router's backends
// listed (sorted, safe to draw), every warning.
func (b *builder) finish() catalogue.Sample {
	b.in.countsHint = b.carved
	if len(b.backends) > 0 {
		backends := make([]string, len(b.backends))
		for i, raw := range b.backends {
			backends[i] = safetext.Sanitize(raw)
		}
		slices.Sort(backends)
		b.acc.Sample.Backends = slices.Compact(backends)
	}
	return b.acc.Finish()
}

type bucketPair struct{ bound, count float64 }

// emptyBounds marks a histogram exported with _sum and _count but no
// buckets: present (the mean is known), quantiles n/a.
var emptyBounds = []float64{}

// internBounds returns the shared copy of a list of bounds, so that every
// sample of a target points at one slice per histogram. row is the alias
// table's row the histogram was read by.
func (in *Ingester) internBounds(row int, pairs []bucketPair) []float64 {
	if len(pairs) == 0 {
		return emptyBounds
	}
	// A histogram keeps its buckets from page to page: comparing with the
	// row's last layout costs less than writing the key of the map below.
	if b := in.rowBounds[row]; sameBounds(b, pairs) {
		return b
	}
	b := in.internBoundsByKey(pairs)
	in.rowBounds[row] = b
	return b
}

// sameBounds reports whether b holds the bounds of pairs, bit for bit (as
// the map's key tells them apart).
func sameBounds(b []float64, pairs []bucketPair) bool {
	if len(b) != len(pairs) {
		return false
	}
	for i, p := range pairs {
		if math.Float64bits(b[i]) != math.Float64bits(p.bound) {
			return false
		}
	}
	return true
}

// internBoundsByKey interns a layout by the text of its bounds.
func (in *Ingester) internBoundsByKey(pairs []bucketPair) []float64 {
	in.keyBuf = in.keyBuf[:0]
	for _, p := range pairs {
		in.keyBuf = strconv.AppendUint(in.keyBuf, math.Float64bits(p.bound), 36)
		in.keyBuf = append(in.keyBuf, ',')
	}
	if b, ok := in.bounds[string(in.keyBuf)]; ok {
		return b
	}
	if len(in.bounds) >= maxInternedBounds {
		clear(in.bounds)
	}
	b := make([]float64, len(pairs))
	for i, p := range pairs {
		b[i] = p.bound
	}
	in.bounds[string(in.keyBuf)] = b
	return b
}

// internLabel returns an engine or model name as shown (sanitized), from
// the target's names of the last pages.
func (in *Ingester) internLabel(raw string) string {
	if s, ok := in.labels[raw]; ok {
		return s
	}
	if len(in.labels) >= 4*MaxEngines {
		clear(in.labels)
	}
	s := safetext.Sanitize(raw)
	in.labels[raw] = s
	return s
}

// labelValue returns the value of the named label, or "".
func labelValue(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// scalarValue reads a gauge, counter or untyped value; ok is false for
// other types.
func scalarValue(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch {
	case t == dto.MetricType_GAUGE && m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case t == dto.MetricType_COUNTER && m.Counter != nil:
		return m.Counter.GetValue(), true
	case t == dto.MetricType_UNTYPED && m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// sortedPairs fills in.pairs with the buckets of h sorted by bound, equal
// bounds (le="1" and le="1.0") coalesced by summing, as Prometheus does.
func (in *Ingester) sortedPairs(h *dto.Histogram) []bucketPair {
	pairs := in.pairs[:0]
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		pairs = append(pairs, bucketPair{b.GetUpperBound(), c})
	}
	// A page lists its buckets in order: checking costs less than the sort.
	byBound := func(a, b bucketPair) int { return cmp.Compare(a.bound, b.bound) }
	if !slices.IsSortedFunc(pairs, byBound) {
		slices.SortStableFunc(pairs, byBound)
	}
	out := pairs[:0]
	for _, p := range pairs {
		if n := len(out); n > 0 && out[n-1].bound == p.bound {
			out[n-1].count += p.count
			continue
		}
		out = append(out, p)
	}
	in.pairs = pairs
	return out
}
