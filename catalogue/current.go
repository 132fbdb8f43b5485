package catalogue

import "slices"

// The engines' families as their current sources define them (read
// 2026-12), beyond the lists of the captures (families.go): what each
// release added, with the labels and buckets of its upstream file.

// sglangTokenizer are the labels of SGLang's tokenizer families today
// (request histograms and counters): engine_type beside model_name.
var sglangTokenizer = []string{LabelEngineType, LabelModel}

// SGLangCurrent are the families current SGLang added or renamed
// (python/sglang/srt/observability/metrics_collector.py, main to #25153):
// num_retractions, a histogram counted when a request finished, was
// removed on 2026-05-01 (#24197) for a counter of retractions as they
// happen and the tokens they throw away.
var SGLangCurrent = slices.Concat(
	families(TypeGauge, sglangRanks, "sglang:num_retracted_reqs"),
	families(TypeCounter, sglangRanks, "sglang:num_retracted_requests_total", "sglang:num_retracted_input_tokens_total",
		"sglang:num_retracted_output_tokens_total"),
	families(TypeGauge, sglangRanks, "sglang:num_paused_reqs", "sglang:num_grammar_queue_reqs",
		"sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_prefill_inflight_queue_reqs",
		"sglang:num_decode_prealloc_queue_reqs", "sglang:num_decode_transfer_queue_reqs",
		"sglang:max_running_requests_under_SLO", "sglang:spec_accept_length", "sglang:spec_accept_rate",
		"sglang:spec_num_draft_tokens", "sglang:spec_num_steps"),
	families(TypeCounter, sglangTokenizer, "sglang:spec_verify_calls_total"),
	families(TypeCounter, []string{"cache_source", LabelEngineType, LabelModel}, "sglang:cached_tokens_total"),
	families(TypeCounter, sglangTokenizer, "sglang:prompt_tokens_total", "sglang:generation_tokens_total",
		"sglang:num_requests_total"),
	[]Family{
		{Name: "sglang:time_to_first_token_seconds", Type: TypeHistogram, Labels: sglangTokenizer, Buckets: SGLangTTFTBuckets},
		{Name: "sglang:inter_token_latency_seconds", Type: TypeHistogram, Labels: sglangTokenizer, Buckets: SGLangITLBuckets},
		{Name: "sglang:e2e_request_latency_seconds", Type: TypeHistogram, Labels: sglangTokenizer, Buckets: SGLangE2EBuckets},
		{Name: "sglang:queue_time_seconds", Type: TypeHistogram, Labels: sglangRanks, Buckets: SGLangQueueBucketsCurrent},
	},
)

// SGLangQueueBucketsCurrent is the queue-time list of current SGLang: the
// 2026 capture's with 0.001, 0.005, 0.01 and 0.05 added.
var SGLangQueueBucketsCurrent = append([]float64{0, 0.001, 0.005, 0.01, 0.05}, SGLangQueueBuckets[1:]...)

// TRTLLMCurrent are the families tensorrt_llm/metrics/collector.py adds
// to the capture's (the file containing PR #18583, 2026-09), with its
// default buckets.
var TRTLLMCurrent = slices.Concat(
	families(TypeCounter, trtllmLabels, "trtllm_prompt_tokens_total", "trtllm_generation_tokens_total",
		"trtllm_prompt_cached_tokens_total"),
	families(TypeGauge, trtllmLabels, "trtllm_max_num_active_requests", "trtllm_max_batch_size_static",
		"trtllm_max_batch_size_runtime", "trtllm_max_num_tokens_runtime", "trtllm_kv_cache_max_blocks",
		"trtllm_kv_cache_used_blocks", "trtllm_kv_cache_free_blocks", "trtllm_kv_cache_tokens_per_block",
		"trtllm_kv_cache_hit_rate", "trtllm_num_paused_requests"),
	families(TypeCounter, trtllmLabels, "trtllm_spec_decode_num_draft_tokens_total",
		"trtllm_spec_decode_num_accepted_tokens_total"),
	families(TypeGauge, trtllmLabels, "trtllm_spec_decode_acceptance_length"),
	families(TypeCounter, []string{LabelEngineType, LabelModel, "token_position"}, "trtllm_spec_decode_drafted_tokens_total",
		"trtllm_spec_decode_accepted_tokens_total"),
	families(TypeCounter, []string{LabelEngineType, "http_code", LabelModel}, "trtllm_request_error_total"),
	[]Family{
		{Name: "trtllm_request_prefill_time_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: TRTLLMPrefillBuckets},
		{Name: "trtllm_request_decode_time_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: RequestLatencyBuckets},
		{Name: "trtllm_request_inference_time_seconds", Type: TypeHistogram, Labels: trtllmLabels, Buckets: RequestLatencyBuckets},
	},
)

// TRTLLMPrefillBuckets are the collector's default prefill-time bounds.
var TRTLLMPrefillBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// TGIV3 are the families of TGI's v3 backend (db931fcf, 2026-01-08) the
// capture's excerpt lacks or vtop did not list: the token budget
// (backends/v3/src/lib.rs:138) and the speculative tokens skipped
// (backends/v3/src/backend.rs:480), a histogram in the source that the
// exporter writes as a summary (the capture shows it so).
var TGIV3 = []Family{
	{Name: "tgi_batch_max_total_tokens", Type: TypeGauge},
	{Name: "tgi_request_skipped_tokens", Type: TypeSummary},
}

// LlamaCppB4747 are the families of llama.cpp b4747 (2025-02-20,
// examples/server/server.cpp) that later versions dropped, as the real
// server's pages show them.
var LlamaCppB4747 = families(TypeGauge, nil, "llamacpp:kv_cache_usage_ratio", "llamacpp:kv_cache_tokens")

// DynamoCurrent are the families of Dynamo's frontend (metrics.rs
// containing PR #9526, 2026-05; names from prometheus_names.rs) beyond the
// capture's. The model_* gauges are a worker's configuration, for each
// model.
var DynamoCurrent = slices.Concat(
	families(TypeGauge, dynamoModel, "dynamo_frontend_active_requests"),
	// requests_total gains an error_type label (overload, cancelled, …);
	// its value on a success is not stated here, so its labels are not
	// listed.
	families(TypeCounter, nil, "dynamo_frontend_requests_total"),
	families(TypeGauge, dynamoModel, "dynamo_frontend_model_max_num_seqs", "dynamo_frontend_model_max_num_batched_tokens",
		"dynamo_frontend_model_total_kv_blocks", "dynamo_frontend_model_kv_cache_block_size", "dynamo_frontend_model_context_length"),
	families(TypeCounter, dynamoModel, "dynamo_frontend_model_rejection_total", "dynamo_frontend_model_cancellation_total"),
	families(TypeGauge, []string{"dp_rank", "worker_id", "worker_type"}, "dynamo_frontend_worker_active_decode_blocks"),
	families(TypeGauge, nil, "dynamo_frontend_router_queue_pending_requests"),
)

// EndpointPickerCurrent are the llm-d router's picker families
// (llm-d/llm-d-router 2026-08-22, pkg/epp/metrics/llm_d_router_metrics.go
// and metrics.go): llm_d_epp_* beside the inference_objective_* names of
// gateway-api-inference-extension v1.1.0 (2025-10-24, #1567), which are
// still emitted, deprecated.
var EndpointPickerCurrent = []Family{
	{Name: "llm_d_epp_request_running", Type: TypeGauge, Labels: []string{"fairness_id", LabelModel, "priority", "target_model_name"}},
	{Name: "llm_d_epp_average_kv_cache_utilization", Type: TypeGauge, Labels: []string{"name"}},
	{Name: "llm_d_epp_average_queue_size", Type: TypeGauge, Labels: []string{"name"}},
	{Name: "llm_d_epp_per_endpoint_queue_size", Type: TypeGauge, Labels: []string{LabelEndpoint, "name"}},
	{Name: "llm_d_epp_ready_endpoints", Type: TypeGauge, Labels: []string{"name"}},
	{Name: "llm_d_epp_request_total", Type: TypeCounter},
	{Name: "inference_objective_running_requests", Type: TypeGauge, Labels: []string{LabelModel}},
	{Name: "inference_objective_request_total", Type: TypeCounter},
}
