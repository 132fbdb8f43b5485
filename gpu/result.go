package gpu

import (
	"maps"

	"github.com/prometheus/common/model"
)

// SeriesFromResult turns one series of a query's result (its labels, with
// __name__, and its value) into a Series: the answer to promql.DCGMQuery
// goes to FromDCGMSeries(…, viaPrometheus=true) this way.
func SeriesFromResult(labels map[string]string, v float64) Series {
	l := maps.Clone(labels)
	delete(l, model.MetricNameLabel)
	return Series{Family: labels[model.MetricNameLabel], Labels: l, Value: v}
}
