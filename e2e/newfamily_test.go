package e2e

import (
	"math"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// newFamily is a family no engine exports, of one read kind: the row
// that declares it, the page that serves it and the figure it must feed.
type newFamily struct {
	row   catalogue.Read
	serve func(reg *prometheus.Registry)
	// figure is what the family feeds in a Sample, want its value.
	figure func(s *catalogue.Sample) float64
	want   float64
}

// gauge registers a gauge of one label and its values ("" for none).
func gauge(name string, labels []string, values map[string]float64) func(*prometheus.Registry) {
	return func(reg *prometheus.Registry) {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: "test family"}, labels)
		reg.MustRegister(g)
		for lv, v := range values {
			if lv == "" {
				g.WithLabelValues().Set(v)
			} else {
				g.WithLabelValues(lv).Set(v)
			}
		}
	}
}

// counter registers a counter of one label and its values ("" for none).
func counter(name string, labels []string, values map[string]float64) func(*prometheus.Registry) {
	return func(reg *prometheus.Registry) {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: "test family"}, labels)
		reg.MustRegister(c)
		for lv, v := range values {
			if lv == "" {
				c.WithLabelValues().Add(v)
			} else {
				c.WithLabelValues(lv).Add(v)
			}
		}
	}
}

// histogram registers a histogram of one label value ("" for no label)
// that observed 0.1, 0.2 and 3.
func histogram(name, label, value string) func(*prometheus.Registry) {
	return func(reg *prometheus.Registry) {
		var labels, values []string
		if label != "" {
			labels, values = []string{label}, []string{value}
		}
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: "test family", Buckets: []float64{0.15, 1, 5}}, labels)
		reg.MustRegister(h)
		for _, v := range []float64{0.1, 0.2, 3} {
			h.WithLabelValues(values...).Observe(v)
		}
	}
}

func scalarOf(k catalogue.Scalar) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 { return s.Total.Scalars[k] }
}

func finishedOf(r catalogue.FinishReason) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 { return s.Total.Finished[r] }
}

func countOf(h catalogue.Histogram) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 {
		if b := s.Total.Histograms[h]; b.Present() {
			return b.Count
		}
		return math.NaN()
	}
}

// newFamilies are one test family of each read kind.
var newFamilies = []newFamily{
	{catalogue.Read{Name: "vtoptest_scalar", Kind: catalogue.ReadScalar, Scalar: catalogue.SpecDrafts},
		gauge("vtoptest_scalar", nil, map[string]float64{"": 7}), scalarOf(catalogue.SpecDrafts), 7},
	{catalogue.Read{Name: "vtoptest_histogram_seconds", Kind: catalogue.ReadHistogram, Histogram: catalogue.NIXLTransferTime},
		histogram("vtoptest_histogram_seconds", "", ""), countOf(catalogue.NIXLTransferTime), 3},
	{catalogue.Read{Name: "vtoptest_finished_total", Kind: catalogue.ReadFinished},
		counter("vtoptest_finished_total", []string{catalogue.LabelFinishedReason}, map[string]float64{"length": 3, "stop": 5, "newer": 1}),
		finishedOf(catalogue.FinishLength), 3},
	{catalogue.Read{Name: "vtoptest_cache_config_info", Kind: catalogue.ReadCacheConfig},
		infoGauge("vtoptest_cache_config_info", []string{"num_gpu_blocks", "block_size"}, []string{"100", "16"}),
		func(s *catalogue.Sample) float64 { return s.KVCapacityTokens }, 1600},
	{catalogue.Read{Name: "vtoptest_start_time_seconds", Kind: catalogue.ReadProcessStart},
		gauge("vtoptest_start_time_seconds", nil, map[string]float64{"": 1.7e9}),
		func(s *catalogue.Sample) float64 { return s.ProcessStartTime }, 1.7e9},
	{catalogue.Read{Name: "vtoptest_resident_bytes", Kind: catalogue.ReadRSS},
		gauge("vtoptest_resident_bytes", nil, map[string]float64{"": 1 << 30}),
		func(s *catalogue.Sample) float64 { return s.ProcessRSSBytes }, 1 << 30},
	{catalogue.Read{Name: "vtoptest_gc_total", Kind: catalogue.ReadGC},
		counter("vtoptest_gc_total", []string{"generation"}, map[string]float64{"0": 40, "1": 2}),
		func(s *catalogue.Sample) float64 { return s.GCCollections }, 42},
	{catalogue.Read{Name: "vtoptest_http_total", Kind: catalogue.ReadHTTP},
		counter("vtoptest_http_total", nil, map[string]float64{"": 9}),
		func(s *catalogue.Sample) float64 { return s.HTTPRequests }, 9},
	{catalogue.Read{Name: "vtoptest_aborted_total", Kind: catalogue.ReadFinishedAs, Finish: catalogue.FinishAbort},
		counter("vtoptest_aborted_total", nil, map[string]float64{"": 2}), finishedOf(catalogue.FinishAbort), 2},
	{catalogue.Read{Name: "vtoptest_sleep_state", Kind: catalogue.ReadSleep},
		gauge("vtoptest_sleep_state", []string{catalogue.LabelSleepState}, map[string]float64{"awake": 0, "weights_offloaded": 1, "discard_all": 0}),
		scalarOf(catalogue.SleepLevel), 1},
	{catalogue.Read{Name: "vtoptest_accepted_per_pos_total", Kind: catalogue.ReadSpecPerPos},
		counter("vtoptest_accepted_per_pos_total", []string{catalogue.LabelPosition}, map[string]float64{"0": 50, "1": 30, "2": 10}),
		func(s *catalogue.Sample) float64 { return sumKnown(s.Total.SpecAcceptedPerPos) }, 90},
	{catalogue.Read{Name: "vtoptest_lora_info", Kind: catalogue.ReadLoRA},
		infoGauge("vtoptest_lora_info", []string{"max_lora", "running_lora_adapters", "waiting_lora_adapters"}, []string{"4", "sql-lora,chat-lora", ""}),
		func(s *catalogue.Sample) float64 { return s.LoRA.MaxLoRAs + float64(len(s.LoRA.Running)) }, 4 + 2},
	{catalogue.Read{Name: "vtoptest_capacity_tokens", Kind: catalogue.ReadKVCapacity},
		gauge("vtoptest_capacity_tokens", nil, map[string]float64{"": 5000}),
		func(s *catalogue.Sample) float64 { return s.KVCapacityTokens }, 5000},
	{catalogue.Read{Name: "vtoptest_split", Kind: catalogue.ReadSplitScalar, Label: "kind",
		Split: []catalogue.Split{{Value: "a", Scalar: catalogue.WaitingCapacity}, {Value: "b", Scalar: catalogue.WaitingDeferred}}},
		gauge("vtoptest_split", []string{"kind"}, map[string]float64{"a": 4, "b": 6, "c": 100}), scalarOf(catalogue.WaitingDeferred), 6},
	{catalogue.Read{Name: "vtoptest_split_seconds", Kind: catalogue.ReadSplitHistogram, Label: "phase",
		Split: []catalogue.Split{{Value: "prefill", Histogram: catalogue.PrefillTime}}},
		histogram("vtoptest_split_seconds", "phase", "prefill"), countOf(catalogue.PrefillTime), 3},
}

// sumKnown adds the known values.
func sumKnown(vs []float64) float64 {
	sum := math.NaN()
	for _, v := range vs {
		switch {
		case math.IsNaN(v):
		case math.IsNaN(sum):
			sum = v
		default:
			sum += v
		}
	}
	return sum
}

// servePage serves a family's page until the test ends; its metrics URL.
func servePage(t *testing.T, f newFamily) string {
	reg := prometheus.NewRegistry()
	f.serve(reg)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// TestNewFamilyReadsEverywhere: a family added to the alias table, one of
// each read kind, is read alike directly, through Prometheus and from a
// recording, with the value its page gives; before it is added, the page
// reader reads nothing of it.
func TestNewFamilyReadsEverywhere(t *testing.T) {
	var urls []string
	var rows []catalogue.Read
	for _, f := range newFamilies {
		urls = append(urls, servePage(t, f))
		f.row.Engine = catalogue.EngineVLLM
		rows = append(rows, f.row)
	}
	for i, f := range newFamilies {
		body, ct := get(t, urls[i])
		s, err := page.NewIngester().Ingest(body, ct)
		if err != nil || !math.IsNaN(f.figure(&s)) && f.row.Kind != catalogue.ReadLoRA || s.LoRA.Present {
			t.Fatalf("%s before it is declared: %v, error %v; want nothing read", f.row.Name, f.figure(&s), err)
		}
	}
	defer catalogue.UseReads(rows...)()
	direct, prom, replayed := threeWays(t, urls, nil)
	for i, f := range newFamilies {
		t.Run(f.row.Name, func(t *testing.T) {
			for side, s := range map[string]*catalogue.Sample{"directly": &direct[i], "through Prometheus": &prom[i], "replayed": &replayed[i]} {
				if got := f.figure(s); !sameNum(got, f.want) {
					t.Errorf("%s: %v, want %v", side, got, f.want)
				}
			}
			for _, d := range sameSample(&direct[i], &prom[i]) {
				t.Errorf("directly, through Prometheus: %s", d)
			}
			for _, d := range sameSample(&direct[i], &replayed[i]) {
				t.Errorf("directly, replayed: %s", d)
			}
		})
	}
}

// infoGauge registers an info family: one series of value 1 whose labels
// hold the information.
func infoGauge(name string, labels, values []string) func(*prometheus.Registry) {
	return func(reg *prometheus.Registry) {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: "test family"}, labels)
		reg.MustRegister(g)
		g.WithLabelValues(values...).Set(1)
	}
}
