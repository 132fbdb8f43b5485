package gpu

import (
	"strings"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// DCGMQuery returns the PromQL instant query that reads every DCGM series
// vtop reads from a Prometheus server, under both DCGM spellings, narrowed
// by extra label matchers (`exported_namespace="llm"`, `Hostname=~"gpu-a|gpu-b"`).
// Its result, with each series' __name__ as the Family, goes to
// FromDCGMSeries(…, viaPrometheus=true).
func DCGMQuery(matchers ...string) string {
	names := make([]string, len(catalogue.DCGMReads))
	for i, r := range catalogue.DCGMReads {
		names[i] = r.Name
	}
	all := append([]string{`__name__=~"` + strings.Join(names, "|") + `"`}, matchers...)
	return "{" + strings.Join(all, ",") + "}"
}

// SeriesFromResult turns one series of a query result (its labels, with
// __name__, and its value) into a Series.
func SeriesFromResult(labels map[string]string, v float64) Series {
	l := make(map[string]string, len(labels))
	for k, val := range labels {
		if k != model.MetricNameLabel {
			l[k] = val
		}
	}
	return Series{Family: labels[model.MetricNameLabel], Labels: l, Value: v}
}
