package page

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/safetext"
)

// A page that holds one series twice is malformed: Prometheus fails such
// a scrape ("duplicate sample for timestamp"), and so does vtop, rather
// than sum the copies into a figure no server reported. The families a
// page was read into are checked once per series: a scalar series by a
// hash of its name and labels (in any order), a histogram series by its
// bucket bounds, which a repeated series or family lists twice (expfmt
// and the fast path both fold the lines of one label set into one
// series). Only when a check fires is the page read again line by line,
// to confirm the duplicate and name its line: a hash that collides, or a
// bound written twice in two spellings (le="1", le="1.0", which
// Prometheus keeps as two series and histogram_quantile sums), is no
// duplicate, and the page is read as before. A page read as values only
// has the lines of a page that passed, so it needs no check.

// seriesSeen holds the keys of the scalar series of the page being read.
type seriesSeen struct{ keys []uint64 }

// mayRepeat reports whether the families may hold a series twice.
func (in *Ingester) mayRepeat(fams map[string]*dto.MetricFamily) bool {
	keys := in.seen.keys[:0]
	for name, mf := range fams {
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, m := range mf.Metric {
				if boundTwice(m.GetHistogram()) {
					return true
				}
			}
			continue
		}
		family := maphash.String(memoSeed, name)
		for _, m := range mf.Metric {
			keys = append(keys, seriesKey(family, m.Label))
		}
	}
	in.seen.keys = keys
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return true
		}
	}
	return false
}

// seriesKey is a hash of a scalar series: its family's, and a sum over
// its label pairs, the same in any order. Two series that share one only
// cost the page a reading line by line.
func seriesKey(family uint64, labels []*dto.LabelPair) uint64 {
	key := family
	for _, lp := range labels {
		key += maphash.String(memoSeed, lp.GetName())*0x9e3779b97f4a7c15 ^ maphash.String(memoSeed, lp.GetValue())
	}
	return key
}

// boundTwice reports whether a histogram lists a bucket bound twice.
func boundTwice(h *dto.Histogram) bool {
	b := h.GetBucket()
	for i := 1; i < len(b); i++ {
		if b[i].GetUpperBound() <= b[i-1].GetUpperBound() {
			return unsortedBoundTwice(b)
		}
	}
	return false
}

// unsortedBoundTwice is boundTwice for buckets out of order.
func unsortedBoundTwice(b []*dto.Bucket) bool {
	bounds := make([]float64, len(b))
	for i, x := range b {
		bounds[i] = x.GetUpperBound()
	}
	slices.Sort(bounds)
	for i := 1; i < len(bounds); i++ {
		if bounds[i] == bounds[i-1] {
			return true
		}
	}
	return false
}

// duplicateLine reads the lines the filter keeps one by one and returns
// the error naming the first that repeats a series of an earlier line, or
// nil when none does.
func (in *Ingester) duplicateLine(body []byte, om bool) error {
	if _, err := in.filter(body, om, nil, false); err != nil {
		return nil // the page was read: no line is refused now
	}
	first := make(map[string]int32)
	rest := in.s.filtered
	for i := 0; len(rest) > 0; i++ {
		line, next, _ := cutLine(rest)
		rest = next
		if line = skipBlanks(line); len(line) == 0 || line[0] == '#' {
			continue
		}
		key, ok := in.lineSeries(line)
		if !ok {
			continue
		}
		lineNo := in.s.lineMap[i]
		if at, ok := first[key]; ok {
			return fmt.Errorf("duplicate series at line %d: %s (first at line %d)", lineNo, safetext.Sanitize(key), at)
		}
		first[key] = lineNo
	}
	return nil
}

// lineSeries reads one sample line alone and writes its series: the name
// and the labels sorted by name, as name{a="x",b="y"}.
func (in *Ingester) lineSeries(line []byte) (string, bool) {
	in.reader.Reset(append(bytes.Clone(line), '\n'))
	fams, err := in.parser.TextToMetricFamilies(&in.reader)
	if err != nil || len(fams) != 1 {
		return "", false
	}
	for name, mf := range fams {
		if len(mf.Metric) != 1 {
			return "", false
		}
		labels := slices.Clone(mf.Metric[0].Label)
		slices.SortFunc(labels, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
		var sb strings.Builder
		sb.WriteString(name)
		for i, lp := range labels {
			sep := byte(',')
			if i == 0 {
				sep = '{'
			}
			sb.WriteByte(sep)
			sb.WriteString(lp.GetName())
			sb.WriteByte('=')
			sb.WriteString(strconv.Quote(lp.GetValue()))
		}
		if len(labels) > 0 {
			sb.WriteByte('}')
		}
		return sb.String(), true
	}
	return "", false
}
