package testutil

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/catalogue"
)

// Model is the model_name of the pages VLLMPage renders.
const Model = "meta-llama/Llama-3.1-8B-Instruct"

// MaxModelLen is Model's context length: it sets the bounds of the
// token-count histograms (catalogue.TokenBuckets).
const MaxModelLen = 131072

// Observed are the values every latency histogram of engine e sees e+1
// times each on a VLLMPage; two of them are at or below 0.1.
var Observed = []float64{0.003, 0.07, 0.2, 0.9, 3}

// VLLMRegistry registers every family of catalogue.VLLMV1 with its type,
// labels and buckets, one series per engine (and per value of the
// family's extra label), plus vllm:cache_config_info, the API server's
// families and the process and Go collectors as page noise. Engine e
// reports running 10+e, waiting 2e (all of it for capacity), KV usage
// 0.1(e+1), 1000(e+1) prompt and 500(e+1) generation tokens, 100+e
// requests finished "stop", KV capacity 16 × 27,000 tokens, and each of
// Observed (e+1) times in every histogram; every other counter is 0. It
// has no draft model, so no speculative-decoding family.
func VLLMRegistry(t testing.TB, engines int) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	cacheInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig"},
		[]string{catalogue.LabelEngine, "block_size", "num_gpu_blocks", "cache_dtype", "enable_prefix_caching"})
	reg.MustRegister(cacheInfo)
	var fill []func(e int)
	for _, f := range catalogue.VLLMV1 {
		if strings.HasPrefix(f.Name, "vllm:spec_decode_") {
			continue // registered only with a draft model, which this server has not
		}
		fill = append(fill, register(reg, f))
	}
	registerFrontend(reg)
	for e := range engines {
		cacheInfo.With(prometheus.Labels{catalogue.LabelEngine: strconv.Itoa(e), "block_size": "16",
			"num_gpu_blocks": "27000", "cache_dtype": "auto", "enable_prefix_caching": "True"}).Set(1)
		for _, f := range fill {
			f(e)
		}
	}
	return reg
}

// extraValues are the values of the label beside engine and model_name
// that a family carries, as vLLM pre-creates them.
var extraValues = map[string][]string{
	"reason":                      {"capacity", "deferred"},
	"sleep_state":                 catalogue.SleepStates[:],
	"source":                      {"local_compute", "local_cache_hit", "external_kv_transfer"},
	catalogue.LabelFinishedReason: catalogue.FinishReasonNames[:],
	"position":                    {"0", "1", "2"},
}

// register adds one catalogued family to reg and returns what sets the
// values of engine e.
func register(reg *prometheus.Registry, f catalogue.Family) func(e int) {
	help := f.Name + " help text."
	extra := ""
	for _, l := range f.Labels {
		if l != catalogue.LabelEngine && l != catalogue.LabelModel {
			extra = l
		}
	}
	labels := func(e int, v string) prometheus.Labels {
		ls := prometheus.Labels{catalogue.LabelEngine: strconv.Itoa(e), catalogue.LabelModel: Model}
		if extra != "" {
			ls[extra] = v
		}
		return ls
	}
	values := []string{""}
	if extra != "" {
		values = extraValues[extra]
	}
	switch f.Type {
	case catalogue.TypeGauge:
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.Name, Help: help}, f.Labels)
		reg.MustRegister(g)
		return fillWith(g.With, f.Name, values, labels)
	case catalogue.TypeCounter:
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: f.Name, Help: help}, f.Labels)
		reg.MustRegister(c)
		return fillWith(c.With, f.Name, values, labels)
	default:
		buckets := f.Buckets
		if slices.Equal(buckets, catalogue.TokenBuckets(catalogue.DefaultMaxModelLen)) {
			buckets = catalogue.TokenBuckets(MaxModelLen)
		}
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: f.Name, Help: help, Buckets: buckets}, f.Labels)
		reg.MustRegister(h)
		return func(e int) {
			o := h.With(labels(e, ""))
			for range e + 1 {
				for _, v := range Observed {
					o.Observe(v)
				}
			}
		}
	}
}

// fillWith is what sets engine e's series of a gauge or counter, once
// for each value of its extra label: the value function's.
func fillWith[M interface{ Add(float64) }](with func(prometheus.Labels) M, name string, values []string, labels func(int, string) prometheus.Labels) func(e int) {
	return func(e int) {
		for _, v := range values {
			with(labels(e, v)).Add(value(name, e, v))
		}
	}
}

// value is engine e's value of a gauge or counter (and of its extra label v).
func value(name string, e int, v string) float64 {
	switch name {
	case "vllm:num_requests_running":
		return float64(10 + e)
	case "vllm:num_requests_waiting":
		return float64(2 * e)
	case "vllm:num_requests_waiting_by_reason":
		if v == "capacity" {
			return float64(2 * e)
		}
	case "vllm:kv_cache_usage_perc":
		return 0.1 * float64(e+1)
	case "vllm:prompt_tokens_total":
		return float64(1000 * (e + 1))
	case "vllm:generation_tokens_total":
		return float64(500 * (e + 1))
	case "vllm:prompt_tokens_by_source_total":
		return 1
	case "vllm:request_success_total":
		if v == "stop" {
			return float64(100 + e)
		}
	}
	return 0
}

// APIHandlers are the routes prometheus-fastapi-instrumentator reports.
var APIHandlers = []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/embeddings", "/tokenize", "/detokenize"}

// registerFrontend adds the API server's families: http_* of the
// instrumentator (7 requests per handler: 5 "2xx", 2 "4xx") and
// python_gc_collections_total (10, 20, 30 for generations 0–2).
func registerFrontend(reg *prometheus.Registry) {
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total", Help: "Total number of requests by method, status and handler."}, []string{"handler", "method", "status"})
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds", Help: "Latency with only few buckets by handler.", Buckets: []float64{0.1, 0.5, 1}}, []string{"handler", "method"})
	highr := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "http_request_duration_highr_seconds", Help: "Latency with many buckets but no API specific labels.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 7.5, 10, 30, 60}})
	size := prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "http_request_size_bytes", Help: "Content length of incoming requests by handler."}, []string{"handler"})
	gc := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "python_gc_collections_total", Help: "Number of times this generation was collected"}, []string{"generation"})
	reg.MustRegister(reqs, dur, highr, size, gc)
	for _, h := range APIHandlers {
		reqs.WithLabelValues(h, "POST", "2xx").Add(5)
		reqs.WithLabelValues(h, "POST", "4xx").Add(2)
		dur.WithLabelValues(h, "POST").Observe(0.3)
		size.WithLabelValues(h).Observe(512)
		highr.Observe(0.2)
	}
	for g, n := range []float64{10, 20, 30} {
		gc.WithLabelValues(strconv.Itoa(g)).Add(n)
	}
}

// VLLMPage renders VLLMRegistry in the text format, as vLLM serves it.
func VLLMPage(t testing.TB, engines int) []byte {
	t.Helper()
	mfs, err := VLLMRegistry(t, engines).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
