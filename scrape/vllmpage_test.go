package scrape

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
)

// Bucket lists of the vLLM catalogue (§5).
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterBuckets    = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	paramsNBuckets = []float64{1, 2, 5, 10, 20}
	ladderBuckets  = ladder125(131072)
)

// ladder125 is vLLM's build_1_2_5_buckets.
func ladder125(max float64) []float64 {
	var out []float64
	for m := 1.0; ; m *= 10 {
		for _, f := range []float64{1, 2, 5} {
			if f*m > max {
				return out
			}
			out = append(out, f*m)
		}
	}
}

const testModel = "meta-llama/Llama-3.1-8B-Instruct"

// observed are the values every latency histogram of engine e sees e+1
// times each; two of them are at or below 0.1.
var observed = []float64{0.003, 0.07, 0.2, 0.9, 3}

// vllmRegistry registers the catalogue's §3.1–3.3 families under their
// exposed names, with one series per engine, plus the process and Go
// collectors as page noise. Engine e reports running 10+e, waiting 2e, KV
// usage 0.1(e+1), 1000(e+1) prompt tokens, 100+e requests finished "stop",
// and each of observed (e+1) times in every histogram.
func vllmRegistry(t testing.TB, engines int) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	labels := []string{"engine", "model_name"}
	gauge := func(name string, extra ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name + " help text."}, append(labels, extra...))
		reg.MustRegister(g)
		return g
	}
	counter := func(name string, extra ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: name + " help text."}, append(labels, extra...))
		reg.MustRegister(c)
		return c
	}
	hist := func(name string, buckets []float64) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: name + " help text.", Buckets: buckets}, labels)
		reg.MustRegister(h)
		return h
	}
	running := gauge("vllm:num_requests_running")
	waiting := gauge("vllm:num_requests_waiting")
	waitingBy := gauge("vllm:num_requests_waiting_by_reason", "reason")
	kv := gauge("vllm:kv_cache_usage_perc")
	sleep := gauge("vllm:engine_sleep_state", "sleep_state")
	cacheInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "cache config"},
		[]string{"engine", "block_size", "num_gpu_blocks", "cache_dtype", "enable_prefix_caching"})
	reg.MustRegister(cacheInfo)
	prompt := counter("vllm:prompt_tokens_total")
	gen := counter("vllm:generation_tokens_total")
	bySource := counter("vllm:prompt_tokens_by_source_total", "source")
	success := counter("vllm:request_success_total", "finished_reason")
	var plain []*prometheus.CounterVec
	for _, n := range []string{"vllm:prompt_tokens_cached_total", "vllm:num_preemptions_total",
		"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
		"vllm:external_prefix_cache_queries_total", "vllm:external_prefix_cache_hits_total",
		"vllm:mm_cache_queries_total", "vllm:mm_cache_hits_total", "vllm:estimated_flops_per_gpu_total",
		"vllm:estimated_read_bytes_per_gpu_total", "vllm:estimated_write_bytes_per_gpu_total"} {
		plain = append(plain, counter(n))
	}
	hists := []*prometheus.HistogramVec{
		hist("vllm:time_to_first_token_seconds", ttftBuckets),
		hist("vllm:inter_token_latency_seconds", itlBuckets),
		hist("vllm:request_time_per_output_token_seconds", itlBuckets),
		hist("vllm:e2e_request_latency_seconds", latencyBuckets),
		hist("vllm:request_queue_time_seconds", latencyBuckets),
		hist("vllm:request_inference_time_seconds", latencyBuckets),
		hist("vllm:request_prefill_time_seconds", latencyBuckets),
		hist("vllm:request_decode_time_seconds", latencyBuckets),
		hist("vllm:request_prompt_tokens", ladderBuckets),
		hist("vllm:request_generation_tokens", ladderBuckets),
		hist("vllm:request_prefill_kv_computed_tokens", ladderBuckets),
		hist("vllm:request_max_num_generation_tokens", ladderBuckets),
		hist("vllm:request_params_max_tokens", ladderBuckets),
		hist("vllm:request_params_n", paramsNBuckets),
		hist("vllm:iteration_tokens_total", iterBuckets),
	}
	registerFrontend(reg)
	for e := range engines {
		eng := strconv.Itoa(e)
		running.WithLabelValues(eng, testModel).Set(float64(10 + e))
		waiting.WithLabelValues(eng, testModel).Set(float64(2 * e))
		waitingBy.WithLabelValues(eng, testModel, "capacity").Set(float64(2 * e))
		waitingBy.WithLabelValues(eng, testModel, "deferred").Set(0)
		kv.WithLabelValues(eng, testModel).Set(0.1 * float64(e+1))
		for _, st := range []string{"awake", "weights_offloaded", "discard_all"} {
			sleep.WithLabelValues(eng, testModel, st).Set(0)
		}
		cacheInfo.WithLabelValues(eng, "16", "27000", "auto", "True").Set(1)
		prompt.WithLabelValues(eng, testModel).Add(float64(1000 * (e + 1)))
		gen.WithLabelValues(eng, testModel).Add(float64(500 * (e + 1)))
		for _, src := range []string{"local_compute", "local_cache_hit", "external_kv_transfer"} {
			bySource.WithLabelValues(eng, testModel, src).Add(1)
		}
		for _, r := range analysis.FinishReasonNames {
			success.WithLabelValues(eng, testModel, r).Add(0)
		}
		success.WithLabelValues(eng, testModel, "stop").Add(float64(100 + e))
		for _, c := range plain {
			c.WithLabelValues(eng, testModel).Add(0)
		}
		for _, h := range hists {
			o := h.WithLabelValues(eng, testModel)
			for range e + 1 {
				for _, v := range observed {
					o.Observe(v)
				}
			}
		}
	}
	return reg
}

// apiHandlers are the routes prometheus-fastapi-instrumentator reports.
var apiHandlers = []string{"/v1/chat/completions", "/v1/completions", "/v1/models", "/v1/embeddings", "/tokenize", "/detokenize"}

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
	for _, h := range apiHandlers {
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

// vllmPage renders the registry in the text format, as vLLM serves it.
func vllmPage(t testing.TB, engines int) []byte {
	t.Helper()
	mfs, err := vllmRegistry(t, engines).Gather()
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

// A page made by the real client_golang exposition, served by promhttp over
// HTTP (gzip negotiated by the transport), round-trips through Fetch and
// Ingest, engines kept apart and aggregated.
func TestClientGolangRoundTrip(t *testing.T) {
	for _, engines := range []int{1, 2} {
		t.Run(strconv.Itoa(engines)+" engines", func(t *testing.T) {
			var accept, encoding string
			handler := promhttp.HandlerFor(vllmRegistry(t, engines), promhttp.HandlerOpts{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				accept, encoding = r.Header.Get("Accept"), r.Header.Get("Accept-Encoding")
				handler.ServeHTTP(w, r)
			}))
			defer srv.Close()
			target, err := ParseTarget(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			client, err := NewClient(ClientOptions{})
			if err != nil {
				t.Fatal(err)
			}
			body, ct, err := client.Fetch(context.Background(), target, 5*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if accept != acceptHeader || encoding != "gzip" {
				t.Errorf("request headers Accept=%q Accept-Encoding=%q", accept, encoding)
			}
			s, err := NewIngester().Ingest(body, ct)
			if err != nil {
				t.Fatal(err)
			}
			checkEngines(t, s, engines)
		})
	}
}

// checkEngines asserts the figures vllmRegistry set, summed over engines.
func checkEngines(t *testing.T, s analysis.Sample, engines int) {
	t.Helper()
	var running, waiting, kv, prompt, stop, reps float64
	for e := range engines {
		running += float64(10 + e)
		waiting += float64(2 * e)
		kv += 0.1 * float64(e+1) / float64(engines)
		prompt += float64(1000 * (e + 1))
		stop += float64(100 + e)
		reps += float64(e + 1)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"running", s.Total.Scalars[analysis.Running], running},
		{"waiting", s.Total.Scalars[analysis.Waiting], waiting},
		{"kv usage (averaged)", s.Total.Scalars[analysis.KVCacheUsage], kv},
		{"prompt tokens", s.Total.Scalars[analysis.PromptTokens], prompt},
		{"preemptions (0, exported)", s.Total.Scalars[analysis.Preemptions], 0},
		{"spec drafts (not exported)", s.Total.Scalars[analysis.SpecDrafts], math.NaN()},
		{"finished stop", s.Total.Finished[analysis.FinishStop], stop},
		{"finished abort", s.Total.Finished[analysis.FinishAbort], 0},
		{"ttft count", s.Total.Histograms[analysis.TTFT].Count, reps * float64(len(observed))},
		{"ttft le=0.1", bucketAt(analysis.TTFT, 0.1)(&s), reps * 2},
		{"ttft +Inf", bucketAt(analysis.TTFT, math.Inf(1))(&s), reps * float64(len(observed))},
		{"e2e sum", s.Total.Histograms[analysis.E2E].Sum, reps * (0.003 + 0.07 + 0.2 + 0.9 + 3)},
		{"kv capacity", s.KVCapacityTokens, float64(engines * 27000 * 16)},
		{"python gc (summed over generations)", s.GCCollections, 10 + 20 + 30},
		{"http requests (summed over labels)", s.HTTPRequests, float64(len(apiHandlers) * 7)},
	}
	for _, c := range checks {
		if !sameFloat(c.got, c.want) && math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if s.Model != testModel || !s.HasVLLM {
		t.Errorf("Model = %q HasVLLM = %v", s.Model, s.HasVLLM)
	}
	if math.IsNaN(s.ProcessStartTime) || math.IsNaN(s.ProcessRSSBytes) {
		t.Errorf("process figures missing: start %v rss %v", s.ProcessStartTime, s.ProcessRSSBytes)
	}
	wantBounds := append(slices.Clone(ttftBuckets), math.Inf(1))
	if !slices.Equal(s.Total.Histograms[analysis.TTFT].Bounds, wantBounds) {
		t.Errorf("ttft bounds = %v", s.Total.Histograms[analysis.TTFT].Bounds)
	}
	if engines < 2 {
		if s.Engines != nil {
			t.Errorf("Engines = %v, want nil for one engine", s.Engines)
		}
		return
	}
	if len(s.Engines) != engines {
		t.Fatalf("Engines = %d, want %d", len(s.Engines), engines)
	}
	for e, eng := range s.Engines {
		if eng.Name != strconv.Itoa(e) || eng.Scalars[analysis.Running] != float64(10+e) ||
			eng.Histograms[analysis.TTFT].Count != float64(e+1)*float64(len(observed)) {
			t.Errorf("engine %d = %q running %v ttft count %v", e, eng.Name, eng.Scalars[analysis.Running], eng.Histograms[analysis.TTFT].Count)
		}
	}
}

func BenchmarkIngestV1Page(b *testing.B) {
	for _, engines := range []int{1, 8} {
		page := vllmPage(b, engines)
		b.Run(strconv.Itoa(engines)+"-engines-"+strconv.Itoa(len(page)/1024)+"KB", func(b *testing.B) {
			in := NewIngester()
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := in.Ingest(page, "text/plain; version=0.0.4"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
