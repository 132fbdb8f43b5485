package sim

import (
	"bytes"
	"math"
	"net/http/httptest"
	"sort"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// page is one parsed /metrics page.
type page map[string]*dto.MetricFamily

func parsePage(t testing.TB, body []byte) page {
	t.Helper()
	p, err := parseTextPage(body)
	if err != nil {
		t.Fatalf("parse page: %v", err)
	}
	return p
}

func parseTextPage(body []byte) (page, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// scrape reads a replica's page through its HTTP handler, in memory.
func scrape(t testing.TB, r *Replica) page {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	return parsePage(t, rec.Body.Bytes())
}

// matches reports whether m carries every name=value pair of want.
func matches(m *dto.Metric, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == want[i] && l.GetValue() == want[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// value sums a gauge or counter over the series matching the label pairs;
// NaN when the family is absent.
func (p page) value(name string, labels ...string) float64 {
	mf, ok := p[name]
	if !ok {
		return math.NaN()
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// histo is a histogram summed over engines: bounds, cumulative counts (+Inf
// last), count and sum.
type histo struct {
	bounds []float64
	counts []float64
	count  float64
	sum    float64
}

func (p page) hist(t testing.TB, name string) histo {
	t.Helper()
	mf, ok := p[name]
	if !ok {
		t.Fatalf("histogram %s absent", name)
	}
	var h histo
	for _, m := range mf.GetMetric() {
		bs := m.GetHistogram().GetBucket()
		if h.bounds == nil {
			for _, b := range bs {
				h.bounds = append(h.bounds, b.GetUpperBound())
			}
			h.bounds = append(h.bounds, math.Inf(1))
			h.counts = make([]float64, len(h.bounds))
		}
		for i, b := range bs {
			h.counts[i] += float64(b.GetCumulativeCount())
		}
		h.counts[len(h.counts)-1] += float64(m.GetHistogram().GetSampleCount())
		h.count += float64(m.GetHistogram().GetSampleCount())
		h.sum += m.GetHistogram().GetSampleSum()
	}
	return h
}

// minus is the increase from an earlier reading.
func (h histo) minus(old histo) histo {
	out := histo{bounds: h.bounds, counts: make([]float64, len(h.counts)), count: h.count - old.count, sum: h.sum - old.sum}
	for i := range h.counts {
		out.counts[i] = h.counts[i] - old.counts[i]
	}
	return out
}

// quantile is Prometheus' histogram_quantile: linear interpolation inside
// the bucket holding the rank.
func (h histo) quantile(q float64) float64 {
	total := h.counts[len(h.counts)-1]
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.SearchFloat64s(h.counts, rank)
	if i == len(h.bounds)-1 {
		return h.bounds[len(h.bounds)-2]
	}
	lo, prev := 0.0, 0.0
	if i > 0 {
		lo, prev = h.bounds[i-1], h.counts[i-1]
	}
	return lo + (h.bounds[i]-lo)*(rank-prev)/(h.counts[i]-prev)
}
