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
	unlabeled *engineAcc
	series    int
	capped    bool
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
			b.unlabeled = newEngineAcc("")
		}
		return b.unlabeled
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
	e := newEngineAcc(name)
	b.engines = append(b.engines, e)
	return e
}

func newEngineAcc(name string) *engineAcc {
	return &engineAcc{name: name, series: catalogue.NewSeries(), kvSum: math.NaN()}
}

// read walks the alias table in order and folds every wanted family in.
func (b *builder) read(fams map[string]*dto.MetricFamily) {
	var current [catalogue.NumScalars]bool
	var currentHist [catalogue.NumHistograms]bool
	for _, f := range catalogue.Reads {
		if f.Legacy || fams[f.Name] == nil {
			continue
		}
		switch f.Kind {
		case catalogue.ReadScalar:
			current[f.Scalar] = true
		case catalogue.ReadHistogram:
			currentHist[f.Histogram] = true
		}
	}
	for _, f := range catalogue.Reads {
		mf := fams[f.Name]
		if mf == nil || (f.Legacy && f.Kind == catalogue.ReadScalar && current[f.Scalar]) ||
			(f.Legacy && f.Kind == catalogue.ReadHistogram && currentHist[f.Histogram]) {
			continue
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
			b.readMetric(f, mf.GetType(), m)
		}
	}
}

// label returns the value of a label read by engine and model: the one the
// filter took off the page's lines (bit), or the series' own.
func (b *builder) label(m *dto.Metric, name string, bit uint8) string {
	if v := labelValue(m, name); v != "" {
		return v
	}
	return b.in.stripper.value(bit)
}

// readMetric folds one series of a wanted family into the sample.
func (b *builder) readMetric(f catalogue.Read, t dto.MetricType, m *dto.Metric) {
	switch f.Kind {
	case catalogue.ReadScalar, catalogue.ReadFinished, catalogue.ReadHistogram:
		if b.sample.Model == "" {
			if raw := b.label(m, "model_name", stripModel); raw != "" {
				b.sample.Model = b.in.internModel(raw)
			}
		}
		acc := b.engine(b.label(m, "engine", stripEngine))
		if acc == nil {
			return
		}
		switch f.Kind {
		case catalogue.ReadScalar:
			b.readScalar(f, acc, t, m)
		case catalogue.ReadFinished:
			b.readFinished(acc, t, m)
		case catalogue.ReadHistogram:
			b.readHistogram(f, acc, m)
		}
	case catalogue.ReadCacheConfig:
		blocks, err1 := strconv.ParseFloat(labelValue(m, "num_gpu_blocks"), 64)
		size, err2 := strconv.ParseFloat(labelValue(m, "block_size"), 64)
		if err1 == nil && err2 == nil {
			b.sample.KVCapacityTokens = nanAdd(b.sample.KVCapacityTokens, blocks*size)
		}
	case catalogue.ReadProcessStart:
		if v, ok := scalarValue(t, m); ok && (math.IsNaN(b.sample.ProcessStartTime) || v > b.sample.ProcessStartTime) {
			b.sample.ProcessStartTime = v
		}
	case catalogue.ReadRSS:
		if v, ok := scalarValue(t, m); ok {
			b.sample.ProcessRSSBytes = nanAdd(b.sample.ProcessRSSBytes, v)
		}
	case catalogue.ReadGC:
		if v, ok := scalarValue(t, m); ok {
			b.sample.GCCollections = nanAdd(b.sample.GCCollections, v)
		}
	case catalogue.ReadHTTP:
		if v, ok := scalarValue(t, m); ok {
			b.sample.HTTPRequests = nanAdd(b.sample.HTTPRequests, v)
		}
	}
}

func (b *builder) readScalar(f catalogue.Read, acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	v, ok := scalarValue(t, m)
	if !ok {
		return
	}
	if !f.Scalar.IsCounter() && v < 0 {
		b.warn(fmt.Sprintf("negative value %g of %s ignored", v, f.Name))
		return
	}
	if f.Scalar == catalogue.KVCacheUsage {
		acc.kvSum = nanAdd(acc.kvSum, v)
		acc.kvN++
		return
	}
	acc.series.Scalars[f.Scalar] = nanAdd(acc.series.Scalars[f.Scalar], v)
}

func (b *builder) readFinished(acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	reason, ok := catalogue.FinishReasonOf(labelValue(m, "finished_reason"))
	if !ok {
		return // a reason newer than vtop: ignored rather than misfiled
	}
	if v, ok := scalarValue(t, m); ok {
		acc.series.Finished[reason] = nanAdd(acc.series.Finished[reason], v)
	}
}

func (b *builder) readHistogram(f catalogue.Read, acc *engineAcc, m *dto.Metric) {
	h := m.GetHistogram()
	if h == nil {
		return
	}
	pairs := b.in.sortedPairs(h)
	src := catalogue.Buckets{
		Bounds: b.in.internBounds(pairs),
		Counts: make([]float64, len(pairs)),
		Sum:    math.NaN(),
		Count:  math.NaN(),
	}
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
	if !mergeBuckets(&acc.series.Histograms[f.Histogram], src, false) {
		b.warn(fmt.Sprintf("%s: series with different buckets; one was ignored", f.Name))
	}
}

// mergeBuckets adds src into dst. When dst is absent it takes src, copying
// the counts if copyCounts (src is shared elsewhere). It returns false when
// the bounds differ: summing such buckets would be wrong.
func mergeBuckets(dst *catalogue.Buckets, src catalogue.Buckets, copyCounts bool) bool {
	if !src.Present() {
		return true
	}
	if !dst.Present() {
		*dst = src
		if copyCounts {
			dst.Counts = slices.Clone(src.Counts)
		}
		return true
	}
	if !slices.Equal(dst.Bounds, src.Bounds) {
		return false
	}
	for i, c := range src.Counts {
		dst.Counts[i] += c
	}
	dst.Sum = nanAdd(dst.Sum, src.Sum)
	dst.Count = nanAdd(dst.Count, src.Count)
	return true
}

// finish sums the engines into Total and lists them when there are two or
// more named ones.
func (b *builder) finish() catalogue.Sample {
	slices.SortFunc(b.engines, func(x, y *engineAcc) int {
		return cmp.Or(cmp.Compare(len(x.name), len(y.name)), cmp.Compare(x.name, y.name))
	})
	all := b.engines
	if b.unlabeled != nil {
		all = append(all, b.unlabeled)
	}
	for _, e := range all {
		if e.kvN > 0 {
			e.series.Scalars[catalogue.KVCacheUsage] = e.kvSum / float64(e.kvN)
		}
	}
	switch len(all) {
	case 0:
		return b.sample
	case 1:
		b.sample.Total = all[0].series
		return b.sample
	}
	b.sample.Total = b.total(all)
	if len(b.engines) >= 2 {
		b.sample.Engines = make([]catalogue.Engine, len(b.engines))
		for i, e := range b.engines {
			b.sample.Engines[i] = catalogue.Engine{Name: e.name, Series: e.series}
		}
	}
	return b.sample
}

// total aggregates engines: gauges and counters summed, KV usage averaged
// over the engines that report it, buckets summed.
func (b *builder) total(all []*engineAcc) catalogue.Series {
	t := catalogue.NewSeries()
	kvSum, kvN := 0.0, 0
	for _, e := range all {
		for s := range catalogue.NumScalars {
			v := e.series.Scalars[s]
			if math.IsNaN(v) {
				continue
			}
			if s == catalogue.KVCacheUsage {
				kvSum += v
				kvN++
				continue
			}
			t.Scalars[s] = nanAdd(t.Scalars[s], v)
		}
		for r, v := range e.series.Finished {
			if !math.IsNaN(v) {
				t.Finished[r] = nanAdd(t.Finished[r], v)
			}
		}
		for h := range catalogue.NumHistograms {
			if !mergeBuckets(&t.Histograms[h], e.series.Histograms[h], true) {
				b.warn(fmt.Sprintf("engines disagree on the buckets of %s; engine %s left out of the total", catalogue.HistogramName(h), e.name))
			}
		}
	}
	if kvN > 0 {
		t.Scalars[catalogue.KVCacheUsage] = kvSum / float64(kvN)
	}
	return t
}
