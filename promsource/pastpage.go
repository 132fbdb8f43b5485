package promsource

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// pageWriter writes the samples of one target back as pages of the
// Prometheus text format, one per timestamp. Its buffers are reused.
type pageWriter struct {
	lines []pageLine
	times []model.Time
	pos   []int
}

// pageLine is one series of a page: where it goes and how it is written.
type pageLine struct {
	series *sampleStream
	family string // the family's name: a histogram's without its suffix
	kind   string // its TYPE: histogram, counter or gauge
	key    string // name{labels} as the page writes it
	labels string // its labels but le, to keep a histogram's series together
	rank   int    // _bucket, _sum, _count in that order
	le     float64
}

// prepare lays out one target's series for its pages of the samples in
// (after, through] and returns their timestamps, oldest first; page
// writes each, in that order.
func (w *pageWriter) prepare(series []*sampleStream, after, through model.Time) []model.Time {
	w.layOut(series)
	w.pos = w.pos[:0]
	w.times = w.times[:0]
	for _, l := range w.lines {
		vs := l.series.Values
		k, _ := slices.BinarySearchFunc(vs, after+1, byTime)
		w.pos = append(w.pos, k)
		for _, v := range vs[k:] {
			if v.Timestamp > through {
				break
			}
			w.times = append(w.times, v.Timestamp)
		}
	}
	slices.Sort(w.times)
	w.times = slices.Compact(w.times)
	return w.times
}

// page writes the page of the samples at t, advancing each series past
// its sample at t: the times of prepare, in order.
func (w *pageWriter) page(t model.Time) []byte {
	var b []byte
	family := ""
	for j, l := range w.lines {
		vs := l.series.Values
		k := w.pos[j]
		if k >= len(vs) || vs[k].Timestamp != t {
			continue
		}
		w.pos[j]++
		if l.family != family {
			family = l.family
			b = append(b, "# TYPE "...)
			b = append(b, l.family...)
			b = append(b, ' ')
			b = append(b, l.kind...)
			b = append(b, '\n')
		}
		b = append(b, l.key...)
		b = append(b, ' ')
		b = page.AppendValue(b, float64(vs[k].Value))
		b = append(b, '\n')
	}
	return b
}

// layOut orders the target's series as a page writes them: by family,
// a histogram's series by their labels, then bucket (by bound), sum and
// count. The text format wants each family's lines together.
func (w *pageWriter) layOut(series []*sampleStream) {
	w.lines = w.lines[:0]
	for _, ss := range series {
		name := ss.Metric.get(model.MetricNameLabel)
		ro, ok := roleOf(name)
		if !ok {
			continue
		}
		l := pageLine{series: ss, family: name, kind: "gauge", le: math.NaN()}
		if catalogue.Reads[ro.read].Kind.IsHistogram() {
			l.family, l.kind = strings.TrimSuffix(name, ro.suffix), "histogram"
			l.rank = slices.Index([]string{"_bucket", "_sum", "_count"}, ro.suffix)
			if le, err := strconv.ParseFloat(ss.Metric.get(labelLE), 64); err == nil {
				l.le = le
			}
		} else if strings.HasSuffix(name, "_total") {
			l.kind = "counter"
		}
		l.key, l.labels = seriesKey(name, ss.Metric)
		w.lines = append(w.lines, l)
	}
	slices.SortFunc(w.lines, func(a, b pageLine) int {
		return cmp.Or(strings.Compare(a.family, b.family), strings.Compare(a.labels, b.labels),
			cmp.Compare(a.rank, b.rank), cmp.Compare(a.le, b.le), strings.Compare(a.key, b.key))
	})
}

// seriesKey writes name{labels} as the text format spells it, labels
// sorted, and the labels but le alone.
func seriesKey(name string, m labels) (key, rest string) {
	var all, others strings.Builder
	all.WriteString(name)
	all.WriteByte('{')
	first := true
	m.each(func(ln, value string) {
		if ln == model.MetricNameLabel {
			return
		}
		if !first {
			all.WriteByte(',')
		}
		first = false
		pair := ln + `="` + page.EscapeLabelValue(value) + `"`
		all.WriteString(pair)
		if ln != labelLE {
			others.WriteString(pair)
			others.WriteByte(',')
		}
	})
	all.WriteByte('}')
	return all.String(), others.String()
}
