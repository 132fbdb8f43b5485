// Package export writes a recording as OpenMetrics text with timestamps,
// the input of `promtool tsdb create-blocks-from openmetrics`: the
// recorded samples become Prometheus blocks, every series carrying the
// instance and job labels Prometheus's own scrape would have given it.
package export

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/record"
)

// Options select what is exported.
type Options struct {
	// Job is the job label (default "vllm").
	Job string
	// From and To bound the frames exported (zero: no bound).
	From, To time.Time
}

// Stats count what was written.
type Stats struct {
	Series, Samples, Pages int
	// Skipped are pages that could not be decoded or parsed, and Problem
	// the first one's error.
	Skipped int
	Problem string
}

// family collects one metric family across targets and time.
type family struct {
	name   string // the text format's family name
	typ    dto.MetricType
	series map[string]*series
}

// series is one label set of a family (without le for histograms).
type series struct {
	labels string // rendered {…} with instance and job
	points []point
}

// point is one timestamped value, or one histogram reading.
type point struct {
	ms      int64
	value   float64
	buckets []bucket // histograms only
	sum     float64
	count   float64
}

type bucket struct{ le, count float64 }

// Export writes rec as OpenMetrics text: families sorted by name, series
// by labels, points by time, then "# EOF".
func Export(w io.Writer, rec *record.Recording, opts Options) (Stats, error) {
	if opts.Job == "" {
		opts.Job = "vllm"
	}
	fams, stats := collect(rec, opts)
	bw := bufio.NewWriterSize(w, 1<<16)
	for _, n := range slices.Sorted(maps.Keys(fams)) {
		writeFamily(bw, fams[n], &stats)
	}
	bw.WriteString("# EOF\n")
	return stats, bw.Flush()
}

// collect parses every recorded page of every target.
func collect(rec *record.Recording, opts Options) (map[string]*family, Stats) {
	var stats Stats
	fams := map[string]*family{}
	cur := record.NewCursor(rec)
	defer cur.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	for ti, tg := range rec.Targets() {
		for i, f := range rec.Frames(ti) {
			if f.Failed || (!opts.From.IsZero() && f.Time.Before(opts.From)) || (!opts.To.IsZero() && f.Time.After(opts.To)) {
				continue
			}
			p, err := cur.Page(ti, i)
			var mfs map[string]*dto.MetricFamily
			switch {
			case err == nil && p.Err != "": // a page that failed to parse live
				err = errors.New(p.Err)
			case err == nil:
				mfs, err = parser.TextToMetricFamilies(bytes.NewReader(textOnly(p.Body)))
			}
			if err != nil {
				if stats.Skipped++; stats.Problem == "" {
					stats.Problem = fmt.Sprintf("%s: %v", tg.Name, err)
				}
				continue
			}
			stats.Pages++
			add(fams, mfs, tg.Name, opts.Job, f.Time.UnixMilli())
		}
	}
	return fams, stats
}

// textOnly drops the OpenMetrics-only lines the text parser refuses.
func textOnly(page []byte) []byte {
	if !bytes.Contains(page, []byte("# EOF")) {
		return page
	}
	var out []byte
	for line := range bytes.Lines(page) {
		if t := bytes.TrimSpace(line); bytes.Equal(t, []byte("# EOF")) || bytes.HasPrefix(t, []byte("# UNIT")) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// add files one page's families under their names.
func add(fams map[string]*family, mfs map[string]*dto.MetricFamily, instance, job string, ms int64) {
	for name, mf := range mfs {
		if strings.HasSuffix(name, "_created") {
			continue // creation times, which OpenMetrics folds into their counters
		}
		f := fams[name]
		if f == nil {
			f = &family{name: name, typ: mf.GetType(), series: map[string]*series{}}
			fams[name] = f
		}
		for _, m := range mf.GetMetric() {
			key := renderLabels(m.GetLabel(), instance, job)
			s := f.series[key]
			if s == nil {
				s = &series{labels: key}
				f.series[key] = s
			}
			if p, ok := readPoint(mf.GetType(), m, ms); ok {
				if n := len(s.points); n > 0 && s.points[n-1].ms == ms {
					s.points[n-1] = p // a later page of the same millisecond wins, as in the TSDB
				} else {
					s.points = append(s.points, p)
				}
			}
		}
	}
}

// readPoint reads one metric's value at ms.
func readPoint(t dto.MetricType, m *dto.Metric, ms int64) (point, bool) {
	p := point{ms: ms}
	switch {
	case t == dto.MetricType_HISTOGRAM && m.Histogram != nil:
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			p.buckets = append(p.buckets, bucket{b.GetUpperBound(), c})
		}
		slices.SortFunc(p.buckets, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
		if len(p.buckets) == 0 || !math.IsInf(p.buckets[len(p.buckets)-1].le, 1) {
			// OpenMetrics wants the +Inf bucket; it equals the count.
			p.buckets = append(p.buckets, bucket{math.Inf(1), sampleCount(h)})
		}
		p.sum, p.count = h.GetSampleSum(), sampleCount(h)
	case m.Counter != nil:
		p.value = m.GetCounter().GetValue()
	case m.Gauge != nil:
		p.value = m.GetGauge().GetValue()
	case m.Untyped != nil:
		p.value = m.GetUntyped().GetValue()
	default:
		return p, false // summaries: vLLM exports none
	}
	return p, true
}

func sampleCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

// renderLabels renders a label set with instance and job, sorted by name,
// left open for the writer to add le. Labels the page itself calls instance or job
// become exported_instance and exported_job, as Prometheus renames them.
func renderLabels(lps []*dto.LabelPair, instance, job string) string {
	type kv struct{ k, v string }
	kvs := []kv{{"instance", instance}, {"job", job}}
	for _, lp := range lps {
		k := lp.GetName()
		if k == "instance" || k == "job" {
			k = "exported_" + k
		}
		kvs = append(kvs, kv{k, lp.GetValue()})
	}
	slices.SortFunc(kvs, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.k)
		b.WriteString(`="`)
		b.WriteString(page.EscapeLabelValue(l.v))
		b.WriteByte('"')
	}
	return b.String() // closed by the writer, which may add le
}

// writeFamily writes one family: its TYPE line, then each series' points
// in time order.
func writeFamily(w *bufio.Writer, f *family, stats *Stats) {
	name, typ, suffix := OMFamily(f.name, strings.ToLower(f.typ.String()))
	fmt.Fprintf(w, "# TYPE %s %s\n", name, typ)
	for _, k := range slices.Sorted(maps.Keys(f.series)) {
		s := f.series[k]
		stats.Series++
		slices.SortStableFunc(s.points, func(a, b point) int { return cmp.Compare(a.ms, b.ms) })
		for _, p := range s.points {
			stats.Samples += writePoint(w, name, suffix, s.labels, p, typ == "histogram")
		}
	}
}

// OMFamily is the OpenMetrics name and type of a text-format family of
// that name and type (counter, gauge, histogram, untyped, …), and the
// suffix its samples keep: a counter is named without _total (unknown
// when its name lacks it); a type OpenMetrics lacks is unknown.
func OMFamily(name, typ string) (omName, omType, suffix string) {
	switch typ {
	case "counter":
		if base, ok := strings.CutSuffix(name, "_total"); ok {
			return base, "counter", "_total"
		}
	case "gauge", "histogram":
		return name, typ, ""
	}
	return name, "unknown", ""
}

// writePoint writes one point and returns how many samples it held.
func writePoint(w *bufio.Writer, name, suffix, labels string, p point, hist bool) int {
	ts := FormatMillis(p.ms)
	if !hist {
		fmt.Fprintf(w, "%s%s%s} %s %s\n", name, suffix, labels, formatFloat(p.value), ts)
		return 1
	}
	for _, b := range p.buckets {
		fmt.Fprintf(w, "%s_bucket%s,le=\"%s\"} %s %s\n", name, labels, formatFloat(b.le), formatFloat(b.count), ts)
	}
	fmt.Fprintf(w, "%s_count%s} %s %s\n", name, labels, formatFloat(p.count), ts)
	fmt.Fprintf(w, "%s_sum%s} %s %s\n", name, labels, formatFloat(p.sum), ts)
	return len(p.buckets) + 2
}

// FormatMillis writes a millisecond timestamp as OpenMetrics seconds.
func FormatMillis(ms int64) string {
	sec, frac := ms/1000, ms%1000
	if frac < 0 {
		sec, frac = sec-1, frac+1000
	}
	return fmt.Sprintf("%d.%03d", sec, frac)
}

// formatFloat writes a value as OpenMetrics does.
func formatFloat(v float64) string { return string(page.AppendValue(nil, v)) }
