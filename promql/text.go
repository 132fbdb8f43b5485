package promql

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// The shapes every query of vtop is written from: a selector of label
// matchers, a range over a window, an aggregation, a quantile of buckets,
// a label written onto each row. Everything that writes PromQL writes
// it with these.

// Selector is a vector selector: the metric name, if any, then the label
// matchers in braces. Empty matchers are left out, and the braces where
// none is left ("up" alone).
func Selector(name string, matchers ...string) string {
	var b strings.Builder
	b.WriteString(name)
	open := false
	for _, m := range matchers {
		if m == "" {
			continue
		}
		if open {
			b.WriteString(", ")
		} else {
			b.WriteByte('{')
			open = true
		}
		b.WriteString(m)
	}
	if open {
		b.WriteByte('}')
	}
	return b.String()
}

// MatchRegex is the matcher label=~"re".
func MatchRegex(label, re string) string { return label + "=~" + strconv.Quote(re) }

// MatchAny is the matcher of a label that is any of the values:
// label="v" for one, a regex of them for more.
func MatchAny(label string, values ...string) string {
	if len(values) == 1 {
		return label + "=" + strconv.Quote(values[0])
	}
	return MatchRegex(label, literals(values))
}

// literals is a regex that matches exactly the strings given.
func literals(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(quoted, "|")
}

// NameIs is the matcher of the series whose names are those given.
func NameIs(names ...string) string { return MatchAny(model.MetricNameLabel, names...) }

// NameMatches is the matcher of the series whose names match re.
func NameMatches(re string) string { return MatchRegex(model.MetricNameLabel, re) }

// Duration writes a duration as PromQL does (5s, 1m30s, 12s500ms).
func Duration(d time.Duration) string { return model.Duration(d).String() }

// Over is the range of expr over the window, as the rules write it
// (x[30s]).
func Over(expr string, window time.Duration) string { return expr + "[" + Duration(window) + "]" }

// OverMs is the range of expr over the window in milliseconds
// (x[30000ms]), as the Prometheus source asks its raw reads.
func OverMs(expr string, window time.Duration) string {
	return expr + "[" + strconv.FormatInt(window.Milliseconds(), 10) + "ms]"
}

// Aggregate is op (sum, count, group) of expr by the labels by
// (comma-separated; "" for all of them in one).
func Aggregate(op, by, expr string) string {
	if by == "" {
		return op + "(" + expr + ")"
	}
	return op + " by (" + by + ") (" + expr + ")"
}

// HistogramQuantile is the quantile q of the buckets of expr.
func HistogramQuantile(q float64, expr string) string {
	return "histogram_quantile(" + strconv.FormatFloat(q, 'g', -1, 64) + ", " + expr + ")"
}

// Tag writes the label onto every row of expr, valued value.
func Tag(expr, label, value string) string {
	return "label_replace(" + expr + ", " + strconv.Quote(label) + ", " + strconv.Quote(value) + `, "", "")`
}

// CopyLabel sets dst to the value of src on every row of expr whose src
// matches re (in full), as $1.
func CopyLabel(expr, dst, src, re string) string {
	return "label_replace(" + expr + ", " + strconv.Quote(dst) + `, "$1", ` + strconv.Quote(src) + ", " + strconv.Quote(re) + ")"
}
