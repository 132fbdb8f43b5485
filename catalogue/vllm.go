package catalogue

import "slices"

// Type is a metric family's type as exposed on a page.
type Type uint8

// The family types of the exposition formats vtop reads.
const (
	TypeGauge Type = iota
	TypeCounter
	TypeHistogram
	TypeSummary // quantiles the exporter computes: no engine's summary is read
)

// Family describes one metric family of a page generation: what a server
// of that generation exposes, whether vtop reads it or not.
type Family struct {
	// Name as exposed (counters with _total, histograms without suffix).
	Name string
	// Type of the family.
	Type Type
	// Labels of every series, sorted as the exposition writes them.
	Labels []string
	// Buckets are a histogram's finite upper bounds; nil otherwise.
	Buckets []float64
}

// families are the families of those names, of one type and label set.
func families(t Type, labels []string, names ...string) []Family {
	out := make([]Family, len(names))
	for i, name := range names {
		out[i] = Family{Name: name, Type: t, Labels: labels}
	}
	return out
}

// Bucket lists of vLLM's histograms (vllm-metrics §5), shared by every
// version that exports them. Never modify them.
var (
	TTFTBuckets           = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	ITLBuckets            = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	RequestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	IterationTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	ParamsNBuckets        = []float64{1, 2, 5, 10, 20}
)

// TokenBuckets is vLLM's build_1_2_5_buckets(maxModelLen): 1, 2, 5, 10, 20,
// 50, … up to maxModelLen, the bounds of every token-count histogram.
func TokenBuckets(maxModelLen int) []float64 {
	var out []float64
	for m := 1; ; m *= 10 {
		for _, f := range [...]int{1, 2, 5} {
			if f*m > maxModelLen {
				return out
			}
			out = append(out, float64(f*m))
		}
	}
}

// DefaultMaxModelLen is the max_model_len of the pages this catalogue
// describes (Llama 3.1 8B as commonly served); it sets TokenBuckets.
const DefaultMaxModelLen = 32768

// engineLabels are the labels of every engine metric on a V1 page.
var engineLabels = []string{LabelEngine, LabelModel}

// withLabel returns the engine labels plus extra, sorted.
func withLabel(extra string) []string {
	l := append([]string{extra}, engineLabels...)
	slices.Sort(l)
	return l
}

// VLLMV1 is a current (V1 engine) vLLM page: vllm-metrics §3.1–3.3, the
// always-registered families, and §3.4, speculative decoding (registered
// when a draft model is configured). Token-count histograms carry
// TokenBuckets(DefaultMaxModelLen).
var VLLMV1 = func() []Family {
	tok := TokenBuckets(DefaultMaxModelLen)
	h := func(name string, buckets []float64) Family {
		return Family{Name: name, Type: TypeHistogram, Labels: engineLabels, Buckets: buckets}
	}
	return slices.Concat(
		families(TypeGauge, engineLabels, "vllm:num_requests_running", "vllm:num_requests_waiting"),
		families(TypeGauge, withLabel("reason"), "vllm:num_requests_waiting_by_reason"),
		families(TypeGauge, engineLabels, "vllm:kv_cache_usage_perc"),
		families(TypeGauge, withLabel("sleep_state"), "vllm:engine_sleep_state"),
		families(TypeCounter, engineLabels, "vllm:prompt_tokens_total", "vllm:generation_tokens_total"),
		families(TypeCounter, withLabel("source"), "vllm:prompt_tokens_by_source_total"),
		families(TypeCounter, engineLabels, "vllm:prompt_tokens_cached_total"),
		families(TypeCounter, withLabel(LabelFinishedReason), "vllm:request_success_total"),
		families(TypeCounter, engineLabels, "vllm:num_preemptions_total", "vllm:prefix_cache_queries_total",
			"vllm:prefix_cache_hits_total", "vllm:external_prefix_cache_queries_total",
			"vllm:external_prefix_cache_hits_total", "vllm:mm_cache_queries_total", "vllm:mm_cache_hits_total",
			"vllm:estimated_flops_per_gpu_total", "vllm:estimated_read_bytes_per_gpu_total",
			"vllm:estimated_write_bytes_per_gpu_total", "vllm:spec_decode_num_drafts_total",
			"vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"),
		families(TypeCounter, withLabel("position"), "vllm:spec_decode_num_accepted_tokens_per_pos_total"),
		[]Family{
			h("vllm:time_to_first_token_seconds", TTFTBuckets),
			h("vllm:inter_token_latency_seconds", ITLBuckets),
			h("vllm:request_time_per_output_token_seconds", ITLBuckets),
			h("vllm:e2e_request_latency_seconds", RequestLatencyBuckets),
			h("vllm:request_queue_time_seconds", RequestLatencyBuckets),
			h("vllm:request_inference_time_seconds", RequestLatencyBuckets),
			h("vllm:request_prefill_time_seconds", RequestLatencyBuckets),
			h("vllm:request_decode_time_seconds", RequestLatencyBuckets),
			h("vllm:request_prompt_tokens", tok),
			h("vllm:request_generation_tokens", tok),
			h("vllm:request_prefill_kv_computed_tokens", tok),
			h("vllm:request_max_num_generation_tokens", tok),
			h("vllm:request_params_max_tokens", tok),
			h("vllm:request_params_n", ParamsNBuckets),
			h("vllm:iteration_tokens_total", IterationTokenBuckets),
		},
	)
}()

// VLLMV0 is a V0-era page (≤ 0.10, vllm-metrics §6–7): the old names and no
// engine label (multiprocess mode summed the engines). Only the families
// that differ from V1 or that vtop reads are listed.
var VLLMV0 = func() []Family {
	m := []string{LabelModel}
	return slices.Concat(
		families(TypeGauge, m, "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc"),
		families(TypeCounter, m, "vllm:prompt_tokens_total", "vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"),
		families(TypeCounter, []string{LabelFinishedReason, LabelModel}, "vllm:request_success_total"),
		[]Family{
			{Name: "vllm:time_to_first_token_seconds", Type: TypeHistogram, Labels: m, Buckets: TTFTBuckets},
			{Name: "vllm:time_per_output_token_seconds", Type: TypeHistogram, Labels: m, Buckets: ITLBuckets},
			{Name: "vllm:e2e_request_latency_seconds", Type: TypeHistogram, Labels: m, Buckets: RequestLatencyBuckets},
			{Name: "vllm:iteration_tokens_total", Type: TypeHistogram, Labels: m, Buckets: IterationTokenBuckets},
		},
	)
}()

// VLLMV1Absent and VLLMV0Absent are names of the other generation that a
// page of this one must not carry.
var (
	VLLMV1Absent = []string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_queries_total"}
	VLLMV0Absent = []string{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", "vllm:prefix_cache_queries_total", "vllm:request_time_per_output_token_seconds"}
)

// Frontend families of the API server on every vLLM page (the
// prometheus-fastapi-instrumentator and the Python process collector).
var Frontend = []Family{
	{Name: "http_requests_total", Type: TypeCounter, Labels: []string{"handler", "method", "status"}},
	{Name: "process_start_time_seconds", Type: TypeGauge},
	{Name: "process_resident_memory_bytes", Type: TypeGauge},
	{Name: "process_cpu_seconds_total", Type: TypeCounter},
}

// FindFamily returns the family of the list with that name.
func FindFamily(list []Family, name string) (Family, bool) {
	for _, f := range list {
		if f.Name == name {
			return f, true
		}
	}
	return Family{}, false
}
