package catalogue

import "slices"

// The newest vLLM generation's families beyond VLLMV1 (vllm-metrics §3.1,
// §3.3, §3.5, §8; engines-and-gpus §1), grouped by what registers them.
// Labels are model_name and engine unless noted.
var (
	// VLLMLatest: the preemptions-per-request histogram (vLLM main after
	// PR #49984, merged 2026-09) and the admission-control counter (no
	// engine label, by reason), which only the open PR #55812 defines:
	// unverified (Sources says so), read in case a build carries it.
	VLLMLatest = []Family{
		{Name: "vllm:admission_rejections_total", Type: TypeCounter, Labels: []string{LabelModel, LabelReason}},
		{Name: "vllm:request_num_preemptions", Type: TypeHistogram, Labels: engineLabels, Buckets: PreemptionsBuckets},
	}
	// VLLMNIXL are the NIXL connector's (disaggregated prefill/decode).
	VLLMNIXL = []Family{
		{Name: "vllm:nixl_xfer_time_seconds", Type: TypeHistogram, Labels: engineLabels, Buckets: NIXLTimeBuckets},
		{Name: "vllm:nixl_post_time_seconds", Type: TypeHistogram, Labels: engineLabels, Buckets: NIXLPostTimeBuckets},
		{Name: "vllm:nixl_bytes_transferred", Type: TypeHistogram, Labels: engineLabels, Buckets: NIXLBytesBuckets},
		{Name: "vllm:nixl_num_descriptors", Type: TypeHistogram, Labels: engineLabels, Buckets: NIXLDescriptorBuckets},
		{Name: "vllm:nixl_num_failed_transfers_total", Type: TypeCounter, Labels: engineLabels},
		{Name: "vllm:nixl_num_failed_notifications_total", Type: TypeCounter, Labels: engineLabels},
		{Name: "vllm:nixl_num_kv_expired_reqs_total", Type: TypeCounter, Labels: engineLabels},
	}
	// VLLMOffload are the offloading connector's byte and time counters.
	VLLMOffload = []Family{
		{Name: "vllm:kv_offload_load_bytes_total", Type: TypeCounter, Labels: engineLabels},
		{Name: "vllm:kv_offload_load_time_total", Type: TypeCounter, Labels: engineLabels},
		{Name: "vllm:kv_offload_store_bytes_total", Type: TypeCounter, Labels: engineLabels},
		{Name: "vllm:kv_offload_store_time_total", Type: TypeCounter, Labels: engineLabels},
	}
	// VLLMLoRA is registered with --enable-lora: no model_name, no engine;
	// the value is the time of the last change.
	VLLMLoRA = []Family{
		{Name: "vllm:lora_requests_info", Type: TypeGauge, Labels: []string{"max_lora", "running_lora_adapters", "waiting_lora_adapters"}},
	}
	// VLLMRetired existed in some V1 releases only (v0.17–v0.19).
	VLLMRetired = []Family{
		{Name: "vllm:prompt_tokens_recomputed_total", Type: TypeCounter, Labels: engineLabels},
	}
)

// Bucket lists of the newest vLLM families (engines-and-gpus §1,
// vllm-metrics §3.5). Never modify them.
var (
	PreemptionsBuckets    = []float64{1, 2, 3, 4, 5, 10, 20}
	NIXLTimeBuckets       = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	NIXLPostTimeBuckets   = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	NIXLBytesBuckets      = []float64{2048, 8192, 32768, 131072, 524288, 2097152, 8388608, 33554432, 134217728, 536870912, 2147483648, 8589934592}
	NIXLDescriptorBuckets = []float64{10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000}
)

// sglangRanks are the labels of SGLang's scheduler families (the 2026
// capture); its request histograms and counters carry model_name only.
var sglangRanks = []string{LabelEngineType, LabelModel, "moe_ep_rank", "pp_rank", "tp_rank"}

// SGLang bucket lists, as the 2026 capture shows them (vllm-metrics §11
// gives the same TTFT list).
var (
	SGLangTTFTBuckets        = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	SGLangITLBuckets         = []float64{0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8}
	SGLangE2EBuckets         = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	SGLangQueueBuckets       = []float64{0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	SGLangRetractionsBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100}
)

// SGLang is a current SGLang page (--enable-metrics): the families vtop
// reads and their neighbours, as the 2026 capture has them. The
// cached-token and aborted-request counters are named by the reference,
// not the capture; they are given the other counters' labels.
var SGLang = slices.Concat(
	families(TypeGauge, sglangRanks, "sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:num_used_tokens",
		"sglang:token_usage", "sglang:max_total_num_tokens", "sglang:gen_throughput", "sglang:cache_hit_rate"),
	[]Family{
		{Name: "sglang:queue_time_seconds", Type: TypeHistogram, Labels: sglangRanks, Buckets: SGLangQueueBuckets},
		{Name: "sglang:time_to_first_token_seconds", Type: TypeHistogram, Labels: []string{LabelModel}, Buckets: SGLangTTFTBuckets},
		{Name: "sglang:inter_token_latency_seconds", Type: TypeHistogram, Labels: []string{LabelModel}, Buckets: SGLangITLBuckets},
		{Name: "sglang:e2e_request_latency_seconds", Type: TypeHistogram, Labels: []string{LabelModel}, Buckets: SGLangE2EBuckets},
		{Name: "sglang:num_retractions", Type: TypeHistogram, Labels: []string{LabelModel}, Buckets: SGLangRetractionsBuckets},
	},
	families(TypeCounter, []string{LabelModel}, "sglang:prompt_tokens_total", "sglang:generation_tokens_total",
		"sglang:num_requests_total", "sglang:cached_tokens_total", "sglang:num_aborted_requests_total"),
)

// SGLangV04 are the families of SGLang ~0.4 (its docs' sample page) that
// current SGLang renamed.
var SGLangV04 = []Family{
	{Name: "sglang:time_per_output_token_seconds", Type: TypeHistogram, Labels: []string{LabelModel},
		Buckets: []float64{0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}},
}

// trtllmLabels are the labels of every TensorRT-LLM family.
var trtllmLabels = []string{LabelEngineType, LabelModel}

// TRTLLM is trtllm-serve's page with the trtllm_ prefix (engines-and-gpus
// §2 for the gauges and counters, the Dynamo capture for the histograms,
// whose buckets are vLLM's lists).
var TRTLLM = []Family{
	{Name: "trtllm_num_requests_running", Type: TypeGauge, Labels: trtllmLabels},
	{Name: "trtllm_num_requests_waiting", Type: TypeGauge, Labels: trtllmLabels},
	{Name: "trtllm_kv_cache_utilization", Type: TypeGauge, Labels: trtllmLabels},
	{Name: "trtllm_num_requests_completed_total", Type: TypeCounter, Labels: trtllmLabels},
	{Name: "trtllm_request_success_total", Type: TypeCounter, Labels: []string{LabelEngineType, LabelFinishedReason, LabelModel}},
	{Name: "trtllm_time_to_first_token_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: TTFTBuckets},
	{Name: "trtllm_time_per_output_token_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: ITLBuckets},
	{Name: "trtllm_e2e_request_latency_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: RequestLatencyBuckets},
	{Name: "trtllm_request_queue_time_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: RequestLatencyBuckets},
}

// TritonTRTLLM are the gauges of Triton's TensorRT-LLM backend
// (engines-and-gpus §2 and the backend's documented sample): one family per
// kind of figure, the figure chosen by a type label. A page of its own,
// never beside trtllm-serve's families.
var TritonTRTLLM = []Family{
	{Name: "nv_trt_llm_request_metrics", Type: TypeGauge, Labels: []string{LabelDynamoModel, LabelRequestType, "version"}},
	{Name: "nv_trt_llm_kv_cache_block_metrics", Type: TypeGauge, Labels: []string{LabelKVBlockType, LabelDynamoModel, "version"}},
	{Name: "nv_trt_llm_inflight_batcher_metrics", Type: TypeGauge, Labels: []string{LabelInflightBatcherMetric, LabelDynamoModel, "version"}},
}

// TRTLLMPath is where trtllm-serve serves its page.
const TRTLLMPath = "/prometheus/metrics"

// TGIDurationBuckets are the bounds of TGI's duration histograms, as the
// capture shows them to the last bit: 0.0001 s grown by half 35 times,
// each step a bound.
var TGIDurationBuckets = func() []float64 {
	b := make([]float64, 35)
	v := 0.0001
	for i := range b {
		v *= 1.5
		b[i] = v
	}
	return b
}()

// TGILengthBuckets are the bounds of TGI's token-length histograms for a
// maximum of max tokens: max/100, 2·max/100, … max, as the capture's
// input-length (max 511) and max-new-tokens (max 512) lists show.
func TGILengthBuckets(max int) []float64 {
	step := float64(max) / 100
	b := make([]float64, 100)
	for i := range b {
		b[i] = float64(i+1) * step
	}
	return b
}

// TGI is a Text Generation Inference router's page (vllm-metrics §11 and
// the capture): no labels but err and method, counters without _total,
// durations without _seconds. Length buckets depend on the server's
// limits (TGILengthBuckets), so they are not listed.
var TGI = slices.Concat(
	families(TypeGauge, nil, "tgi_batch_current_size", "tgi_batch_current_max_tokens", "tgi_queue_size"),
	families(TypeCounter, nil, "tgi_request_count", "tgi_request_success"),
	families(TypeCounter, []string{"err"}, "tgi_request_failure"),
	[]Family{
		{Name: "tgi_request_duration", Type: TypeHistogram, Buckets: TGIDurationBuckets},
		{Name: "tgi_request_queue_duration", Type: TypeHistogram, Buckets: TGIDurationBuckets},
		{Name: "tgi_request_inference_duration", Type: TypeHistogram, Buckets: TGIDurationBuckets},
		{Name: "tgi_request_mean_time_per_token_duration", Type: TypeHistogram, Buckets: TGIDurationBuckets},
		{Name: "tgi_batch_inference_duration", Type: TypeHistogram, Labels: []string{LabelMethod}, Buckets: TGIDurationBuckets},
	},
	families(TypeHistogram, nil, "tgi_request_input_length", "tgi_request_generated_tokens"),
)

// LlamaCpp is llama.cpp server's page with --metrics: the capture's 11
// families, no labels, no histograms (n_tokens_max is typed a counter).
var LlamaCpp = slices.Concat(
	families(TypeCounter, nil, "llamacpp:prompt_tokens_total", "llamacpp:prompt_seconds_total",
		"llamacpp:tokens_predicted_total", "llamacpp:tokens_predicted_seconds_total", "llamacpp:n_decode_total",
		"llamacpp:n_tokens_max"),
	families(TypeGauge, nil, "llamacpp:prompt_tokens_seconds", "llamacpp:predicted_tokens_seconds",
		"llamacpp:requests_processing", "llamacpp:requests_deferred"),
	families(TypeCounter, nil, "llamacpp:n_busy_slots_per_decode"), // a running mean, typed counter upstream
)

// dynamoModel is the Dynamo frontend's label set of most families.
var dynamoModel = []string{LabelDynamoModel}

// Dynamo is NVIDIA Dynamo's frontend page (the capture).
var Dynamo = []Family{
	{Name: "dynamo_frontend_inflight_requests", Type: TypeGauge, Labels: dynamoModel},
	{Name: "dynamo_frontend_queued_requests", Type: TypeGauge, Labels: dynamoModel},
	{Name: "dynamo_frontend_requests_total", Type: TypeCounter, Labels: []string{"endpoint", LabelDynamoModel, "request_type", "status"}},
	{Name: "dynamo_frontend_output_tokens_total", Type: TypeCounter, Labels: dynamoModel},
	{Name: "dynamo_frontend_time_to_first_token_seconds", Type: TypeHistogram, Labels: dynamoModel,
		Buckets: []float64{0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1, 2.2, 4.7, 10, 22, 48, 100, 220, 480}},
	{Name: "dynamo_frontend_inter_token_latency_seconds", Type: TypeHistogram, Labels: dynamoModel,
		Buckets: []float64{0, 0.0019, 0.0035, 0.0067, 0.013, 0.024, 0.045, 0.084, 0.16, 0.3, 0.56, 1.1, 2}},
	{Name: "dynamo_frontend_request_duration_seconds", Type: TypeHistogram, Labels: dynamoModel,
		Buckets: []float64{0, 1.9, 3.4, 6.3, 12, 22, 40, 75, 140, 260}},
	{Name: "dynamo_frontend_input_sequence_tokens", Type: TypeHistogram, Labels: dynamoModel,
		Buckets: []float64{0, 100, 210, 430, 870, 1800, 3600, 7400, 15000, 31000, 63000, 130000}},
	{Name: "dynamo_frontend_output_sequence_tokens", Type: TypeHistogram, Labels: dynamoModel,
		Buckets: []float64{0, 100, 210, 430, 880, 1800, 3700, 7600, 16000, 32000}},
}

// EndpointPicker is the llm-d / Gateway API Inference Extension endpoint
// picker's page (the chart v1.0.1 capture).
var EndpointPicker = []Family{
	{Name: "inference_model_running_requests", Type: TypeGauge, Labels: []string{LabelModel}},
	{Name: "inference_model_request_total", Type: TypeCounter, Labels: []string{LabelModel, "target_model_name"}},
	{Name: "inference_pool_average_kv_cache_utilization", Type: TypeGauge, Labels: []string{"name"}},
	{Name: "inference_pool_average_queue_size", Type: TypeGauge, Labels: []string{"name"}},
	{Name: "inference_pool_per_pod_queue_size", Type: TypeGauge, Labels: []string{LabelPod, "name"}},
	{Name: "inference_pool_ready_pods", Type: TypeGauge, Labels: []string{"name"}},
}
