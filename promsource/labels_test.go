package promsource

import (
	"io"
	"slices"
	"testing"

	"github.com/prometheus/common/model"
)

// decodedOf is m as the source's decoder holds it, for tests that build
// their answers as the model's types: a copy, points too, as a decoded
// answer shares nothing with another (the window trims its points in
// place).
func decodedOf(m model.Matrix) matrix {
	out := make(matrix, len(m))
	for i, ss := range m {
		out[i] = &sampleStream{Metric: labelsOf(ss.Metric), Values: slices.Clone(ss.Values)}
	}
	return out
}

// modelOf is m as the model's types hold it, for comparisons.
func modelOf(m matrix) model.Matrix {
	out := make(model.Matrix, len(m))
	for i, ss := range m {
		out[i] = &model.SampleStream{Metric: ss.Metric.metric(), Values: ss.Values}
	}
	return out
}

// A series' labels read as a map of them does, an empty label being
// none (Prometheus's rule): each label's value, "" for one it has not,
// every label in the order of their names, and the model's fingerprint,
// whatever labels sort before __name__ or after le.
func TestLabelsReadAsAMap(t *testing.T) {
	for _, m := range []model.Metric{
		{},
		{"__name__": "up"},
		{"__name__": "vllm:e2e_request_latency_seconds_bucket", "instance": "10.0.0.1:8000", "job": "vllm", "engine": "0", "le": "0.5"},
		{"A": "before the name", "__name__": "x", "a": "1", "le": "+Inf", "z": "after le", "m": ""},
		{"le": "1", "zz": "2"},
		{"instance": "no name"},
	} {
		l := labelsOf(m)
		m = withoutEmpty(m)
		for name, value := range m {
			if got := l.get(string(name)); got != string(value) {
				t.Errorf("%v: get(%q) = %q, want %q", m, name, got, value)
			}
		}
		if got := l.get("absent"); got != "" {
			t.Errorf("%v: get(absent) = %q", m, got)
		}
		if got := l.metric(); !got.Equal(m) {
			t.Errorf("labels of %v read back as %v", m, got)
		}
		var names []string
		l.each(func(name, _ string) { names = append(names, name) })
		for i := 1; i < len(names); i++ {
			if names[i-1] >= names[i] {
				t.Errorf("%v: labels in the order %q", m, names)
			}
		}
		if got, want := l.fingerprint(), m.Fingerprint(); got != want {
			t.Errorf("%v: fingerprint %v, the model's %v", m, got, want)
		}
	}
}

// withoutEmpty is m without its empty labels.
func withoutEmpty(m model.Metric) model.Metric {
	out := model.Metric{}
	for name, value := range m {
		if value != "" {
			out[name] = value
		}
	}
	return out
}

// metric is the labels as a map, for tests that compare whole sets.
func (l labels) metric() model.Metric {
	m := model.Metric{}
	l.each(func(name, value string) { m[model.LabelName(name)] = model.LabelValue(value) })
	return m
}

// decodeMatrix decodes an answer whose result must be a matrix.
func decodeMatrix(body io.Reader, maxSeries int, b *budget) (matrix, []string, error) {
	return decodeAnswer(body, resultMatrix, maxSeries, b)
}
