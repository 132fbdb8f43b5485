package scrape

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/analysis"
)

// engineAcc accumulates the series of one engine label value ("" for
// series without the label).
type engineAcc struct {
	name   string
	series analysis.Series
	kvSum  float64 // KV cache usage is averaged, not summed
	kvN    int
}

// builder turns the parsed families of one page into a Sample.
type builder struct {
	in        *Ingester
	sample    analysis.Sample
	engines   []*engineAcc
	unlabeled *engineAcc
	series    int
	capped    bool
}

// warn adds a warning once.
func (b *builder) warn(w string) {
	w = analysis.Sanitize(w)
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
	return &engineAcc{name: name, series: analysis.NewSeries(), kvSum: math.NaN()}
}

// read walks the alias table in order and folds every wanted family in.
func (b *builder) read(fams map[string]*dto.MetricFamily) {
	var current [analysis.NumScalars]bool
	var currentHist [analysis.NumHistograms]bool
	for _, f := range families {
		if f.legacy || fams[f.name] == nil {
			continue
		}
		switch f.kind {
		case kindScalar:
			current[f.scalar] = true
		case kindHistogram:
			currentHist[f.hist] = true
		}
	}
	for _, f := range families {
		mf := fams[f.name]
		if mf == nil || (f.legacy && f.kind == kindScalar && current[f.scalar]) ||
			(f.legacy && f.kind == kindHistogram && currentHist[f.hist]) {
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
	return b.in.strippedValue(bit)
}

// readMetric folds one series of a wanted family into the sample.
func (b *builder) readMetric(f family, t dto.MetricType, m *dto.Metric) {
	switch f.kind {
	case kindScalar, kindFinished, kindHistogram:
		if b.sample.Model == "" {
			if raw := b.label(m, "model_name", stripModel); raw != "" {
				b.sample.Model = b.in.internModel(raw)
			}
		}
		acc := b.engine(b.label(m, "engine", stripEngine))
		if acc == nil {
			return
		}
		switch f.kind {
		case kindScalar:
			b.readScalar(f, acc, t, m)
		case kindFinished:
			b.readFinished(acc, t, m)
		case kindHistogram:
			b.readHistogram(f, acc, m)
		}
	case kindCacheConfig:
		blocks, err1 := strconv.ParseFloat(labelValue(m, "num_gpu_blocks"), 64)
		size, err2 := strconv.ParseFloat(labelValue(m, "block_size"), 64)
		if err1 == nil && err2 == nil {
			b.sample.KVCapacityTokens = nanAdd(b.sample.KVCapacityTokens, blocks*size)
		}
	case kindProcessStart:
		if v, ok := scalarValue(t, m); ok && (math.IsNaN(b.sample.ProcessStartTime) || v > b.sample.ProcessStartTime) {
			b.sample.ProcessStartTime = v
		}
	case kindRSS:
		if v, ok := scalarValue(t, m); ok {
			b.sample.ProcessRSSBytes = nanAdd(b.sample.ProcessRSSBytes, v)
		}
	case kindGC:
		if v, ok := scalarValue(t, m); ok {
			b.sample.GCCollections = nanAdd(b.sample.GCCollections, v)
		}
	case kindHTTP:
		if v, ok := scalarValue(t, m); ok {
			b.sample.HTTPRequests = nanAdd(b.sample.HTTPRequests, v)
		}
	}
}

func (b *builder) readScalar(f family, acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	v, ok := scalarValue(t, m)
	if !ok {
		return
	}
	if !f.scalar.IsCounter() && v < 0 {
		b.warn(fmt.Sprintf("negative value %g of %s ignored", v, f.name))
		return
	}
	if f.scalar == analysis.KVCacheUsage {
		acc.kvSum = nanAdd(acc.kvSum, v)
		acc.kvN++
		return
	}
	acc.series.Scalars[f.scalar] = nanAdd(acc.series.Scalars[f.scalar], v)
}

func (b *builder) readFinished(acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	reason, ok := finishReason(labelValue(m, "finished_reason"))
	if !ok {
		return // a reason newer than vtop: ignored rather than misfiled
	}
	if v, ok := scalarValue(t, m); ok {
		acc.series.Finished[reason] = nanAdd(acc.series.Finished[reason], v)
	}
}

func (b *builder) readHistogram(f family, acc *engineAcc, m *dto.Metric) {
	h := m.GetHistogram()
	if h == nil {
		return
	}
	pairs := b.in.sortedPairs(h)
	src := analysis.Buckets{
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
	if !mergeBuckets(&acc.series.Histograms[f.hist], src, false) {
		b.warn(fmt.Sprintf("%s: series with different buckets; one was ignored", f.name))
	}
}

// mergeBuckets adds src into dst. When dst is absent it takes src, copying
// the counts if copyCounts (src is shared elsewhere). It returns false when
// the bounds differ: summing such buckets would be wrong.
func mergeBuckets(dst *analysis.Buckets, src analysis.Buckets, copyCounts bool) bool {
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
func (b *builder) finish() analysis.Sample {
	slices.SortFunc(b.engines, func(x, y *engineAcc) int {
		return cmp.Or(cmp.Compare(len(x.name), len(y.name)), cmp.Compare(x.name, y.name))
	})
	all := b.engines
	if b.unlabeled != nil {
		all = append(all, b.unlabeled)
	}
	for _, e := range all {
		if e.kvN > 0 {
			e.series.Scalars[analysis.KVCacheUsage] = e.kvSum / float64(e.kvN)
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
		b.sample.Engines = make([]analysis.Engine, len(b.engines))
		for i, e := range b.engines {
			b.sample.Engines[i] = analysis.Engine{Name: e.name, Series: e.series}
		}
	}
	return b.sample
}

// total aggregates engines: gauges and counters summed, KV usage averaged
// over the engines that report it, buckets summed.
func (b *builder) total(all []*engineAcc) analysis.Series {
	t := analysis.NewSeries()
	kvSum, kvN := 0.0, 0
	for _, e := range all {
		for s := range analysis.NumScalars {
			v := e.series.Scalars[s]
			if math.IsNaN(v) {
				continue
			}
			if s == analysis.KVCacheUsage {
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
		for h := range analysis.NumHistograms {
			if !mergeBuckets(&t.Histograms[h], e.series.Histograms[h], true) {
				b.warn(fmt.Sprintf("engines disagree on the buckets of %s; engine %s left out of the total", histogramName(h), e.name))
			}
		}
	}
	if kvN > 0 {
		t.Scalars[analysis.KVCacheUsage] = kvSum / float64(kvN)
	}
	return t
}

// histogramName returns the current exposed name of a histogram.
func histogramName(h analysis.Histogram) string {
	for _, f := range families {
		if f.kind == kindHistogram && f.hist == h && !f.legacy {
			return f.name
		}
	}
	return "histogram"
}
