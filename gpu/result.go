package gpu

import "github.com/prometheus/common/model"

// SeriesFromResult turns one series of a query's result (its labels, with
// __name__, and its value) into a Series: the answer to promql.DCGMQuery
// goes to FromDCGMSeries(…, viaPrometheus=true) this way.
func SeriesFromResult(labels map[string]string, v float64) Series {
	l := make(map[string]string, len(labels))
	for k, val := range labels {
		if k != model.MetricNameLabel {
			l[k] = val
		}
	}
	return Series{Family: labels[model.MetricNameLabel], Labels: l, Value: v}
}
