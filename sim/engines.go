package sim

import (
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vtop-dev/vtop/catalogue"
)

// Engines the simulator can impersonate: one queueing model, each engine's
// page (catalogue's family lists of each).
const (
	EngineVLLM     = "vllm"
	EngineSGLang   = "sglang"
	EngineTRTLLM   = "trtllm"
	EngineTGI      = "tgi"
	EngineLlamaCpp = "llamacpp"
)

// Engines lists the engines, for help texts and flag validation.
func Engines() []string {
	return []string{EngineVLLM, EngineSGLang, EngineTRTLLM, EngineTGI, EngineLlamaCpp}
}

// validateEngine checks the engine settings of a replica, defaulting the
// engine to vLLM.
func validateEngine(c *ReplicaConfig) error {
	if c.Engine == "" {
		c.Engine = EngineVLLM
	}
	switch {
	case !slices.Contains(Engines(), c.Engine):
		return fmt.Errorf("unknown engine %q (want one of %v)", c.Engine, Engines())
	case c.MaxQueuedRequests < 0 || c.SleepLevel < 0 || c.SleepLevel > 2:
		return fmt.Errorf("max queued requests %d, sleep level %d (want ≥ 0 and 0–2)", c.MaxQueuedRequests, c.SleepLevel)
	case c.Role != "" && c.Role != RolePrefill && c.Role != RoleDecode:
		return fmt.Errorf("unknown role %q", c.Role)
	case c.Role == RoleDecode && c.KVTransferBandwidth <= 0:
		return fmt.Errorf("a decode replica needs a KV transfer bandwidth")
	case c.KVTransferFailure < 0 || c.KVTransferFailure > 1:
		return fmt.Errorf("KV transfer failure share %g outside [0,1]", c.KVTransferFailure)
	}
	return nil
}

// MetricsPath is where the replica serves its page: trtllm-serve's own
// path, /metrics for the others.
func (r *Replica) MetricsPath() string {
	if r.cfg.Engine == EngineTRTLLM {
		return catalogue.TRTLLMPath
	}
	return "/metrics"
}

// pageWriter sends the families of one engine's page. It reads the engines
// without locking, as collector does.
type pageWriter struct {
	r  *Replica
	ch chan<- prometheus.Metric
	v  view // the replica's engines summed: these pages have no engine label
}

// family sends one series of a family described by the catalogue list.
func (w *pageWriter) family(list []catalogue.Family, name string, value float64, labels ...string) {
	f, ok := catalogue.FindFamily(list, name)
	if !ok || f.Type == catalogue.TypeHistogram {
		panic("sim: " + name + " is not a catalogued gauge or counter")
	}
	desc := prometheus.NewDesc(f.Name, f.Name, f.Labels, nil)
	kind := prometheus.GaugeValue
	if f.Type == catalogue.TypeCounter {
		kind = prometheus.CounterValue
	}
	w.ch <- prometheus.MustNewConstMetric(desc, kind, value, labels...)
}

// histogram sends one histogram series of a catalogued family.
func (w *pageWriter) histogram(list []catalogue.Family, name string, h func(*engineStats) *hist, labels ...string) {
	f, ok := catalogue.FindFamily(list, name)
	if !ok || f.Type != catalogue.TypeHistogram {
		panic("sim: " + name + " is not a catalogued histogram")
	}
	desc := prometheus.NewDesc(f.Name, f.Name, f.Labels, nil)
	s := w.v.hist(h)
	w.ch <- prometheus.MustNewConstHistogram(desc, s.count, s.sum, s.cumulative(), labels...)
}

// finished sums the finished requests of the given reasons.
func (w *pageWriter) finished(reasons ...catalogue.FinishReason) float64 {
	return w.v.scalar(func(e *engine) float64 {
		n := 0.0
		for _, r := range reasons {
			n += e.stats.finished[r]
		}
		return n
	})
}

func running(e *engine) float64 { return float64(len(e.running)) }
func waiting(e *engine) float64 { return float64(len(e.waiting) + len(e.deferred)) }

// otherCollector serves the page of an engine other than vLLM.
type otherCollector struct{ r *Replica }

// Describe sends nothing: the collector is unchecked.
func (c otherCollector) Describe(chan<- *prometheus.Desc) {}

// Collect sends the page of the replica's engine.
func (c otherCollector) Collect(ch chan<- prometheus.Metric) {
	w := &pageWriter{r: c.r, ch: ch, v: view{engines: c.r.engines}}
	switch c.r.cfg.Engine {
	case EngineSGLang:
		w.sglang()
	case EngineTRTLLM:
		w.trtllm()
	case EngineTGI:
		w.tgi()
	case EngineLlamaCpp:
		w.llamacpp()
	}
}

// sglang writes SGLang's page: scheduler gauges with the rank labels of
// the 2026 capture, request histograms and counters with model_name only.
// Preemptions are SGLang's retractions, counted as they happen with the
// tokens of the requests retracted, as current SGLang counts them (from
// 2026-05, catalogue.SGLangCurrent); the histogram of retractions per
// finished request it replaced (sglang:num_retractions) is not on the
// page, as on current SGLang's.
func (w *pageWriter) sglang() {
	cfg := &w.r.cfg
	role := "unified"
	if cfg.Role != "" {
		role = cfg.Role
	}
	ranks := []string{role, cfg.Model, "0", "0", "0"}
	l := catalogue.SGLang
	capacity := float64(cfg.NumGPUBlocks * cfg.BlockSize * len(w.r.engines))
	used := w.v.scalar(func(e *engine) float64 { return float64((cfg.NumGPUBlocks - e.free) * cfg.BlockSize) })
	w.family(l, "sglang:num_running_reqs", w.v.scalar(running), ranks...)
	w.family(l, "sglang:num_queue_reqs", w.v.scalar(waiting), ranks...)
	w.family(l, "sglang:num_used_tokens", used, ranks...)
	w.family(l, "sglang:token_usage", used/capacity, ranks...)
	w.family(l, "sglang:max_total_num_tokens", capacity, ranks...)
	w.family(l, "sglang:gen_throughput", 0, ranks...)
	w.family(l, "sglang:cache_hit_rate", 0, ranks...)
	w.histogram(l, "sglang:queue_time_seconds", func(s *engineStats) *hist { return s.queue }, ranks...)
	w.histogram(l, "sglang:time_to_first_token_seconds", func(s *engineStats) *hist { return s.ttft }, cfg.Model)
	w.histogram(l, "sglang:inter_token_latency_seconds", func(s *engineStats) *hist { return s.itl }, cfg.Model)
	w.histogram(l, "sglang:e2e_request_latency_seconds", func(s *engineStats) *hist { return s.e2e }, cfg.Model)
	lc := catalogue.SGLangCurrent
	w.family(lc, "sglang:num_retracted_requests_total", w.v.scalar(func(e *engine) float64 { return e.stats.preemptions }), ranks...)
	w.family(lc, "sglang:num_retracted_input_tokens_total", w.v.scalar(func(e *engine) float64 { return e.stats.retractedInput }), ranks...)
	w.family(lc, "sglang:num_retracted_output_tokens_total", w.v.scalar(func(e *engine) float64 { return e.stats.retractedOutput }), ranks...)
	w.family(l, "sglang:prompt_tokens_total", w.v.scalar(func(e *engine) float64 { return e.stats.promptTokens }), cfg.Model)
	w.family(l, "sglang:generation_tokens_total", w.v.scalar(func(e *engine) float64 { return e.stats.generationTokens }), cfg.Model)
	w.family(l, "sglang:num_requests_total", w.finished(catalogue.FinishStop, catalogue.FinishLength, catalogue.FinishAbort, catalogue.FinishError), cfg.Model)
	w.family(l, "sglang:cached_tokens_total", w.v.scalar(func(e *engine) float64 { return e.stats.promptCached }), cfg.Model)
	w.family(l, "sglang:num_aborted_requests_total", w.finished(catalogue.FinishAbort), cfg.Model)
}

// trtllm writes trtllm-serve's page (prefixed names, engine_type="trtllm").
// Its time per output token is one mean per request.
func (w *pageWriter) trtllm() {
	cfg := &w.r.cfg
	lbl := []string{"trtllm", cfg.Model}
	l := catalogue.TRTLLM
	w.family(l, "trtllm_num_requests_running", w.v.scalar(running), lbl...)
	w.family(l, "trtllm_num_requests_waiting", w.v.scalar(waiting), lbl...)
	w.family(l, "trtllm_kv_cache_utilization", w.v.scalar((*engine).kvUsage)/float64(len(w.r.engines)), lbl...)
	w.family(l, "trtllm_num_requests_completed_total", w.finished(catalogue.FinishStop, catalogue.FinishLength, catalogue.FinishAbort, catalogue.FinishError), lbl...)
	for _, reason := range []catalogue.FinishReason{catalogue.FinishStop, catalogue.FinishLength, catalogue.FinishAbort} {
		w.family(l, "trtllm_request_success_total", w.finished(reason), "trtllm", catalogue.FinishReasonNames[reason], cfg.Model)
	}
	w.histogram(l, "trtllm_time_to_first_token_seconds", func(s *engineStats) *hist { return s.ttft }, lbl...)
	w.histogram(l, "trtllm_time_per_output_token_seconds", func(s *engineStats) *hist { return s.tpot }, lbl...)
	w.histogram(l, "trtllm_e2e_request_latency_seconds", func(s *engineStats) *hist { return s.e2e }, lbl...)
	w.histogram(l, "trtllm_request_queue_time_seconds", func(s *engineStats) *hist { return s.queue }, lbl...)
}

// tgi writes TGI's page: no labels but err and method. A prompt that can
// never fit is refused at validation, as TGI does with max_input_tokens;
// a client that gives up is neither a success nor a failure.
func (w *pageWriter) tgi() {
	l := catalogue.TGI
	w.family(l, "tgi_batch_current_size", w.v.scalar(running))
	w.family(l, "tgi_batch_current_max_tokens", float64(w.r.cfg.MaxBatchedTokens))
	w.family(l, "tgi_queue_size", w.v.scalar(waiting))
	w.family(l, "tgi_request_count", w.v.scalar(func(e *engine) float64 { return e.stats.arrived }))
	w.family(l, "tgi_request_success", w.finished(catalogue.FinishStop, catalogue.FinishLength))
	if n := w.finished(catalogue.FinishError); n > 0 { // created on the first failure
		w.family(l, "tgi_request_failure", n, "validation")
	}
	w.histogram(l, "tgi_request_duration", func(s *engineStats) *hist { return s.e2e })
	w.histogram(l, "tgi_request_queue_duration", func(s *engineStats) *hist { return s.queue })
	w.histogram(l, "tgi_request_inference_duration", func(s *engineStats) *hist { return s.inference })
	w.histogram(l, "tgi_request_mean_time_per_token_duration", func(s *engineStats) *hist { return s.tpot })
	w.histogram(l, "tgi_batch_inference_duration", func(s *engineStats) *hist { return s.stepPrefill }, "prefill")
	w.histogram(l, "tgi_batch_inference_duration", func(s *engineStats) *hist { return s.stepDecode }, "decode")
	w.tgiLengths()
}

// tgiLengths writes TGI's token-length histograms, whose buckets depend on
// the server's limits and so are not catalogued.
func (w *pageWriter) tgiLengths() {
	for _, f := range []struct {
		name string
		h    func(*engineStats) *hist
	}{{"tgi_request_input_length", func(s *engineStats) *hist { return s.promptLen }},
		{"tgi_request_generated_tokens", func(s *engineStats) *hist { return s.genLen }}} {
		s := w.v.hist(f.h)
		w.ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(f.name, f.name, nil, nil), s.count, s.sum, s.cumulative())
	}
}

// llamacpp writes llama.cpp's page: eleven families, no labels, no
// histograms; its throughput gauges are means since the start.
func (w *pageWriter) llamacpp() {
	l := catalogue.LlamaCpp
	sum := w.r.sumStats
	prompt, prefillSec := sum(func(s *engineStats) float64 { return s.promptTokens }), sum(func(s *engineStats) float64 { return s.prefillSeconds })
	gen, decodeSec := sum(func(s *engineStats) float64 { return s.generationTokens }), sum(func(s *engineStats) float64 { return s.decodeSeconds })
	steps := sum(func(s *engineStats) float64 { return s.steps })
	w.family(l, "llamacpp:prompt_tokens_total", prompt)
	w.family(l, "llamacpp:prompt_seconds_total", prefillSec)
	w.family(l, "llamacpp:tokens_predicted_total", gen)
	w.family(l, "llamacpp:tokens_predicted_seconds_total", decodeSec)
	w.family(l, "llamacpp:n_decode_total", steps)
	w.family(l, "llamacpp:n_tokens_max", sum(func(s *engineStats) float64 { return s.maxStepTokens }))
	w.family(l, "llamacpp:prompt_tokens_seconds", ratio(prompt, prefillSec))
	w.family(l, "llamacpp:predicted_tokens_seconds", ratio(gen, decodeSec))
	w.family(l, "llamacpp:requests_processing", w.v.scalar(running))
	w.family(l, "llamacpp:requests_deferred", w.v.scalar(waiting))
	w.family(l, "llamacpp:n_busy_slots_per_decode", ratio(sum(func(s *engineStats) float64 { return s.busySlots }), steps))
}

// ratio is a ÷ b, 0 when b is 0 (as llama.cpp reports before any work).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
