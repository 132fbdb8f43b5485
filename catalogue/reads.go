package catalogue

import "slices"

// SleepStates are the values of vllm:engine_sleep_state's sleep_state
// label in the order of their level (awake 0, weights offloaded 1, all
// discarded 2): the series that is 1 gives the engine's SleepLevel.
var SleepStates = [...]string{"awake", "weights_offloaded", "discard_all"}

// MaxSpecPositions caps the draft positions of speculative decoding read
// by position: num_speculative_tokens is a handful in practice.
const MaxSpecPositions = 64

// ReadKind says what a family vtop reads feeds in a Sample.
type ReadKind uint8

// The kinds of family vtop reads.
const (
	ReadScalar       ReadKind = iota // one of Scalar
	ReadHistogram                    // one of Histogram
	ReadFinished                     // finished requests by the finished_reason label
	ReadCacheConfig                  // vllm:cache_config_info labels
	ReadProcessStart                 // process_start_time_seconds
	ReadRSS                          // process_resident_memory_bytes
	ReadGC                           // python_gc_collections_total
	ReadHTTP                         // http_requests_total
	ReadFinishedAs                   // finished requests of one reason (Finish), whatever the labels
	ReadSleep                        // vllm:engine_sleep_state by sleep_state: SleepLevel
	ReadSpecPerPos                   // vllm:spec_decode_num_accepted_tokens_per_pos_total by position
	ReadLoRA                         // vllm:lora_requests_info labels
	ReadKVCapacity                   // a gauge of the KV cache's capacity in tokens
	// ReadSplitScalar and ReadSplitHistogram feed one figure per value of
	// the row's Label (Split). They are kinds of their own so that a reader
	// that knows only ReadScalar and ReadHistogram skips them rather than
	// reading every value into one figure.
	ReadSplitScalar
	ReadSplitHistogram
)

// IsHistogram reports whether the family is a histogram (with _bucket, _sum and _count samples).
func (k ReadKind) IsHistogram() bool { return k == ReadHistogram || k == ReadSplitHistogram }

// Split maps one value of a Read's Label to the figure its series feed.
type Split struct {
	Value     string
	Scalar    Scalar
	Histogram Histogram
}

// Read is one row of the alias table: a family vtop reads, under one of the
// names an engine has exposed it as.
type Read struct {
	// Name is the family as exposed on a page (counters with _total where
	// the engine writes it).
	Name string
	// Engine is the engine that exports the family; EngineUnknown for the
	// process and API-server families every engine may carry, and for
	// routers' families.
	Engine EngineKind
	// Router is set on the families of a router's own page.
	Router RouterKind
	// Kind says what the family feeds.
	Kind ReadKind
	// Scalar is the figure fed, when Kind is ReadScalar.
	Scalar Scalar
	// Histogram is the figure fed, when Kind is ReadHistogram.
	Histogram Histogram
	// Finish is the reason counted, when Kind is ReadFinishedAs.
	Finish FinishReason
	// Label and Split pick the figure of a ReadSplitScalar or
	// ReadSplitHistogram by the series' value of Label; series with other
	// values are not read.
	Label string
	Split []Split
	// Legacy marks an old (or alternative) name: it is read only when the
	// page does not also carry the current name for the same figure.
	Legacy bool
	// NoEngineLabel marks a vLLM engine family without the engine label
	// (it counts for the whole server).
	NoEngineLabel bool
	// Derived marks a family that stands in for vtop's figure with another
	// meaning (a per-request mean for per-step gaps, a per-batch time for a
	// per-request one): the figure is then flagged in Sample.Derived.
	Derived bool
}

// Model returns the label naming the model on the family's series, "" for
// engines that serve one unnamed model.
func (r *Read) Model() string {
	switch r.Engine {
	case EngineDynamo:
		return LabelDynamoModel
	case EngineTGI, EngineLlamaCpp:
		return ""
	}
	return LabelModel
}

// Reads is THE alias table: every family vtop reads, under every name an
// engine has exposed it, with the engine that exports it. Anything not
// listed here is dropped before parsing. Sources: vllm-metrics §3 and §8,
// engines-and-gpus §1–2 and the captured pages of each engine.
//
// A row is the whole declaration of a family: every source (a page, a
// Prometheus server, a recording) reads it through Read.Resolve, queries
// and records it by its SampleNames, and charts it when its figure is one
// of Charts. Adding a family of an existing kind is adding its row; a new
// kind is one case in Resolve (and, for a new place in a Sample, one
// Target the sources fold).
var Reads = slices.Concat(vllmReads, frontendReads, sglangReads, trtllmReads, tgiReads, llamacppReads, dynamoReads, eppReads)

// vllmReads are vLLM's families, every generation's names.
var vllmReads = engineRows(EngineVLLM, []Read{
	{Name: "vllm:num_requests_running", Kind: ReadScalar, Scalar: Running},
	{Name: "vllm:num_requests_waiting", Kind: ReadScalar, Scalar: Waiting},
	{Name: "vllm:kv_cache_usage_perc", Kind: ReadScalar, Scalar: KVCacheUsage},
	{Name: "vllm:gpu_cache_usage_perc", Kind: ReadScalar, Scalar: KVCacheUsage, Legacy: true},
	{Name: "vllm:prompt_tokens_total", Kind: ReadScalar, Scalar: PromptTokens},
	{Name: "vllm:generation_tokens_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "vllm:num_preemptions_total", Kind: ReadScalar, Scalar: Preemptions},
	{Name: "vllm:prefix_cache_queries_total", Kind: ReadScalar, Scalar: PrefixCacheQueries},
	{Name: "vllm:gpu_prefix_cache_queries_total", Kind: ReadScalar, Scalar: PrefixCacheQueries, Legacy: true},
	{Name: "vllm:prefix_cache_hits_total", Kind: ReadScalar, Scalar: PrefixCacheHits},
	{Name: "vllm:gpu_prefix_cache_hits_total", Kind: ReadScalar, Scalar: PrefixCacheHits, Legacy: true},
	{Name: "vllm:spec_decode_num_drafts_total", Kind: ReadScalar, Scalar: SpecDrafts},
	{Name: "vllm:spec_decode_num_draft_tokens_total", Kind: ReadScalar, Scalar: SpecDraftTokens},
	{Name: "vllm:spec_decode_num_accepted_tokens_total", Kind: ReadScalar, Scalar: SpecAcceptedTokens},
	{Name: "vllm:num_requests_waiting_by_reason", Kind: ReadSplitScalar, Label: LabelReason, Split: []Split{
		{Value: "capacity", Scalar: WaitingCapacity}, {Value: "deferred", Scalar: WaitingDeferred}}},
	// In no vLLM source read: proposed by PR #55812 (open, 2026-09).
	{Name: "vllm:admission_rejections_total", Kind: ReadScalar, Scalar: AdmissionRejections, NoEngineLabel: true},
	{Name: "vllm:prompt_tokens_cached_total", Kind: ReadScalar, Scalar: PromptTokensCached},
	{Name: "vllm:prompt_tokens_recomputed_total", Kind: ReadScalar, Scalar: PromptTokensRecomputed},
	{Name: "vllm:prompt_tokens_by_source_total", Kind: ReadSplitScalar, Label: LabelSource, Split: []Split{
		{Value: "local_compute", Scalar: PromptTokensLocalCompute},
		{Value: "local_cache_hit", Scalar: PromptTokensLocalCacheHit},
		{Value: "external_kv_transfer", Scalar: PromptTokensExternal}}},
	{Name: "vllm:external_prefix_cache_queries_total", Kind: ReadScalar, Scalar: ExternalPrefixQueries},
	{Name: "vllm:external_prefix_cache_hits_total", Kind: ReadScalar, Scalar: ExternalPrefixHits},
	{Name: "vllm:nixl_num_failed_transfers_total", Kind: ReadScalar, Scalar: NIXLFailedTransfers},
	{Name: "vllm:kv_offload_load_bytes_total", Kind: ReadScalar, Scalar: KVOffloadLoadBytes},
	{Name: "vllm:kv_offload_store_bytes_total", Kind: ReadScalar, Scalar: KVOffloadStoreBytes},

	{Name: "vllm:time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT},
	{Name: "vllm:inter_token_latency_seconds", Kind: ReadHistogram, Histogram: ITL},
	{Name: "vllm:time_per_output_token_seconds", Kind: ReadHistogram, Histogram: ITL, Legacy: true},
	{Name: "vllm:e2e_request_latency_seconds", Kind: ReadHistogram, Histogram: E2E},
	{Name: "vllm:request_queue_time_seconds", Kind: ReadHistogram, Histogram: QueueTime},
	{Name: "vllm:request_prefill_time_seconds", Kind: ReadHistogram, Histogram: PrefillTime},
	{Name: "vllm:request_decode_time_seconds", Kind: ReadHistogram, Histogram: DecodeTime},
	{Name: "vllm:request_prompt_tokens", Kind: ReadHistogram, Histogram: PromptLength},
	{Name: "vllm:request_generation_tokens", Kind: ReadHistogram, Histogram: GenerationLength},
	// vLLM main after PR #49984 (merged 2026-09).
	{Name: "vllm:request_num_preemptions", Kind: ReadHistogram, Histogram: PreemptionsPerRequest},
	{Name: "vllm:nixl_xfer_time_seconds", Kind: ReadHistogram, Histogram: NIXLTransferTime},
	{Name: "vllm:nixl_bytes_transferred", Kind: ReadHistogram, Histogram: NIXLTransferBytes},

	{Name: "vllm:request_success_total", Kind: ReadFinished},
	{Name: "vllm:cache_config_info", Kind: ReadCacheConfig},
	{Name: "vllm:engine_sleep_state", Kind: ReadSleep},
	{Name: "vllm:spec_decode_num_accepted_tokens_per_pos_total", Kind: ReadSpecPerPos},
	{Name: "vllm:lora_requests_info", Kind: ReadLoRA},
})

// frontendReads are the process and API-server families, whoever serves
// them.
var frontendReads = []Read{
	{Name: "process_start_time_seconds", Kind: ReadProcessStart},
	{Name: "process_resident_memory_bytes", Kind: ReadRSS},
	{Name: "python_gc_collections_total", Kind: ReadGC},
	{Name: "http_requests_total", Kind: ReadHTTP},
}

// sglangReads: engines-and-gpus §2, vllm-metrics §11 and the SGLang
// captures. SGLang counts preemptions as retractions: before 2026-05 per
// finished request only (sglang:num_retractions), since as they happen
// (below); its prefix-cache hits are cached prompt tokens.
var sglangReads = engineRows(EngineSGLang, []Read{
	{Name: "sglang:num_running_reqs", Kind: ReadScalar, Scalar: Running},
	{Name: "sglang:num_queue_reqs", Kind: ReadScalar, Scalar: Waiting},
	{Name: "sglang:token_usage", Kind: ReadScalar, Scalar: KVCacheUsage},
	{Name: "sglang:prompt_tokens_total", Kind: ReadScalar, Scalar: PromptTokens},
	{Name: "sglang:generation_tokens_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "sglang:cached_tokens_total", Kind: ReadScalar, Scalar: PrefixCacheHits},
	{Name: "sglang:num_requests_total", Kind: ReadScalar, Scalar: FinishedRequests},
	{Name: "sglang:num_aborted_requests_total", Kind: ReadFinishedAs, Finish: FinishAbort},
	{Name: "sglang:time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT},
	{Name: "sglang:inter_token_latency_seconds", Kind: ReadHistogram, Histogram: ITL},
	{Name: "sglang:time_per_output_token_seconds", Kind: ReadHistogram, Histogram: ITL, Legacy: true},
	{Name: "sglang:e2e_request_latency_seconds", Kind: ReadHistogram, Histogram: E2E},
	{Name: "sglang:queue_time_seconds", Kind: ReadHistogram, Histogram: QueueTime},
	{Name: "sglang:num_retractions", Kind: ReadHistogram, Histogram: PreemptionsPerRequest},
	{Name: "sglang:max_total_num_tokens", Kind: ReadKVCapacity},
	// Current SGLang (from 2026-05, #24197): retractions counted as they
	// happen, with the tokens they throw away; the queues apart from the
	// scheduler's; requests paused for a weight update; speculative
	// decoding's verify passes, one per draft.
	{Name: "sglang:num_retracted_requests_total", Kind: ReadScalar, Scalar: Preemptions},
	{Name: "sglang:num_retracted_input_tokens_total", Kind: ReadScalar, Scalar: RetractedTokens},
	{Name: "sglang:num_retracted_output_tokens_total", Kind: ReadScalar, Scalar: RetractedTokens},
	{Name: "sglang:num_grammar_queue_reqs", Kind: ReadScalar, Scalar: WaitingOutsideQueue},
	{Name: "sglang:num_prefill_bootstrap_queue_reqs", Kind: ReadScalar, Scalar: WaitingOutsideQueue},
	{Name: "sglang:num_decode_prealloc_queue_reqs", Kind: ReadScalar, Scalar: WaitingOutsideQueue},
	{Name: "sglang:num_decode_transfer_queue_reqs", Kind: ReadScalar, Scalar: WaitingOutsideQueue},
	{Name: "sglang:num_paused_reqs", Kind: ReadScalar, Scalar: Paused},
	{Name: "sglang:spec_verify_calls_total", Kind: ReadScalar, Scalar: SpecDrafts},
})

// trtllmReads: engines-and-gpus §2 (tensorrt_llm/metrics/collector.py)
// and the captures. Behind Dynamo the families carry the trtllm_ prefix;
// trtllm-serve's own /prometheus/metrics has been seen without it, so the
// unprefixed names are read when the prefixed ones are absent. Its
// time_per_output_token is one mean per request, not vLLM's per-step gaps.
var trtllmReads = engineRows(EngineTRTLLM, []Read{
	{Name: "trtllm_num_requests_running", Kind: ReadScalar, Scalar: Running},
	{Name: "trtllm_num_requests_waiting", Kind: ReadScalar, Scalar: Waiting},
	// The reference does not state its range; read as vLLM's 0–1 fraction.
	{Name: "trtllm_kv_cache_utilization", Kind: ReadScalar, Scalar: KVCacheUsage},
	{Name: "trtllm_num_requests_completed_total", Kind: ReadScalar, Scalar: FinishedRequests},
	{Name: "trtllm_request_success_total", Kind: ReadFinished},
	{Name: "trtllm_time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT},
	{Name: "trtllm_time_per_output_token_seconds", Kind: ReadHistogram, Histogram: ITL, Derived: true},
	{Name: "trtllm_e2e_request_latency_seconds", Kind: ReadHistogram, Histogram: E2E},
	{Name: "trtllm_request_queue_time_seconds", Kind: ReadHistogram, Histogram: QueueTime},
	// tensorrt_llm/metrics/collector.py as of 2026-09 (PR #18583).
	{Name: "trtllm_prompt_tokens_total", Kind: ReadScalar, Scalar: PromptTokens},
	{Name: "trtllm_generation_tokens_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "trtllm_prompt_cached_tokens_total", Kind: ReadScalar, Scalar: PromptTokensCached},
	{Name: "trtllm_max_num_active_requests", Kind: ReadScalar, Scalar: MaxRunning},
	{Name: "trtllm_kv_cache_max_blocks", Kind: ReadScalar, Scalar: KVBlocks},
	{Name: "trtllm_kv_cache_tokens_per_block", Kind: ReadScalar, Scalar: KVBlockTokens},
	{Name: "trtllm_num_paused_requests", Kind: ReadScalar, Scalar: Paused},
	{Name: "trtllm_spec_decode_num_draft_tokens_total", Kind: ReadScalar, Scalar: SpecDraftTokens},
	{Name: "trtllm_spec_decode_num_accepted_tokens_total", Kind: ReadScalar, Scalar: SpecAcceptedTokens},
	{Name: "trtllm_request_error_total", Kind: ReadFinishedAs, Finish: FinishError},
	{Name: "trtllm_request_prefill_time_seconds", Kind: ReadHistogram, Histogram: PrefillTime},
	{Name: "trtllm_request_decode_time_seconds", Kind: ReadHistogram, Histogram: DecodeTime},
	{Name: "request_success_total", Kind: ReadFinished, Legacy: true},
	{Name: "time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT, Legacy: true},
	{Name: "time_per_output_token_seconds", Kind: ReadHistogram, Histogram: ITL, Legacy: true, Derived: true},
	{Name: "e2e_request_latency_seconds", Kind: ReadHistogram, Histogram: E2E, Legacy: true},
	{Name: "request_queue_time_seconds", Kind: ReadHistogram, Histogram: QueueTime, Legacy: true},
	// Triton's TensorRT-LLM backend (custom_metrics_reporter.cc): gauges
	// split by a type label. Running is the active requests, those max
	// caps (as trtllm-serve's num_requests_running counts them); the
	// requests scheduled in this iteration are fewer. The backend exports
	// no latency histograms.
	{Name: "nv_trt_llm_request_metrics", Kind: ReadSplitScalar, Label: LabelRequestType,
		Split: []Split{{Value: "active", Scalar: Running}, {Value: "waiting", Scalar: Waiting}, {Value: "max", Scalar: MaxRunning}}},
	{Name: "nv_trt_llm_kv_cache_block_metrics", Kind: ReadSplitScalar, Label: LabelKVBlockType,
		Split: []Split{{Value: "fraction", Scalar: KVCacheUsage}, {Value: "max", Scalar: KVBlocks}, {Value: "tokens_per", Scalar: KVBlockTokens}}},
	{Name: "nv_trt_llm_inflight_batcher_metrics", Kind: ReadSplitScalar, Label: LabelInflightBatcherMetric,
		Split: []Split{{Value: "paused_requests", Scalar: Paused}}},
})

// tgiReads: vllm-metrics §11 (TGI's docs/source/reference/metrics.md) and
// the TGI capture. Counters have no _total, durations no _seconds. TGI has
// no TTFT: Capabilities say how the analysis derives its mean.
var tgiReads = engineRows(EngineTGI, []Read{
	{Name: "tgi_batch_current_size", Kind: ReadScalar, Scalar: Running},
	{Name: "tgi_queue_size", Kind: ReadScalar, Scalar: Waiting},
	{Name: "tgi_request_success", Kind: ReadScalar, Scalar: FinishedRequests},
	// err="overloaded" is a request shed at the concurrency limit
	// (router/src/infer/mod.rs:117), not one that failed: a rejection.
	{Name: "tgi_request_failure", Kind: ReadFinishedAs, Finish: FinishError, Label: LabelErr,
		Split: []Split{{Value: "overloaded", Scalar: AdmissionRejections}}},
	{Name: "tgi_batch_max_total_tokens", Kind: ReadScalar, Scalar: TokenBudget},
	{Name: "tgi_batch_current_max_tokens", Kind: ReadScalar, Scalar: BatchTokens},
	{Name: "tgi_request_duration", Kind: ReadHistogram, Histogram: E2E},
	{Name: "tgi_request_queue_duration", Kind: ReadHistogram, Histogram: QueueTime},
	{Name: "tgi_request_mean_time_per_token_duration", Kind: ReadHistogram, Histogram: ITL, Derived: true},
	{Name: "tgi_batch_inference_duration", Kind: ReadSplitHistogram, Label: LabelMethod, Derived: true,
		Split: []Split{{Value: "prefill", Histogram: PrefillTime}}},
	{Name: "tgi_request_input_length", Kind: ReadHistogram, Histogram: PromptLength},
	{Name: "tgi_request_generated_tokens", Kind: ReadHistogram, Histogram: GenerationLength},
})

// llamacppReads: engines-and-gpus §2 and the llama.cpp capture. It has no
// histograms and no count of requests.
var llamacppReads = engineRows(EngineLlamaCpp, []Read{
	{Name: "llamacpp:requests_processing", Kind: ReadScalar, Scalar: Running},
	{Name: "llamacpp:requests_deferred", Kind: ReadScalar, Scalar: Waiting},
	{Name: "llamacpp:prompt_tokens_total", Kind: ReadScalar, Scalar: PromptTokens},
	{Name: "llamacpp:tokens_predicted_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "llamacpp:prompt_seconds_total", Kind: ReadScalar, Scalar: PromptSeconds},
	{Name: "llamacpp:tokens_predicted_seconds_total", Kind: ReadScalar, Scalar: GenerationSeconds},
	// Up to 2025 (b4747 has it; later versions dropped it).
	{Name: "llamacpp:kv_cache_usage_ratio", Kind: ReadScalar, Scalar: KVCacheUsage},
})

// dynamoReads: engines-and-gpus §2 and the Dynamo frontend capture. The
// frontend's in-flight requests are every request it holds, so Running is
// marked derived.
var dynamoReads = engineRows(EngineDynamo, []Read{
	{Name: "dynamo_frontend_active_requests", Kind: ReadScalar, Scalar: Running, Derived: true},
	{Name: "dynamo_frontend_inflight_requests", Kind: ReadScalar, Scalar: Running, Derived: true, Legacy: true},
	// queued_requests counts a request from the HTTP handler's start until
	// its first token, prefill included: read as waiting it would
	// overstate the queue.
	{Name: "dynamo_frontend_queued_requests", Kind: ReadScalar, Scalar: AwaitingFirstToken},
	// The KV router's queue: requests it holds until a worker has room
	// (only where the router queues).
	{Name: "dynamo_frontend_router_queue_pending_requests", Kind: ReadScalar, Scalar: Waiting},
	// A worker's configuration, for each model: a worker's batch cap and
	// KV cache, not the frontend's sum (Capabilities note it).
	{Name: "dynamo_frontend_model_max_num_seqs", Kind: ReadScalar, Scalar: MaxRunning},
	{Name: "dynamo_frontend_model_total_kv_blocks", Kind: ReadScalar, Scalar: KVBlocks},
	{Name: "dynamo_frontend_model_kv_cache_block_size", Kind: ReadScalar, Scalar: KVBlockTokens},
	{Name: "dynamo_frontend_model_rejection_total", Kind: ReadScalar, Scalar: AdmissionRejections},
	{Name: "dynamo_frontend_requests_total", Kind: ReadScalar, Scalar: FinishedRequests},
	{Name: "dynamo_frontend_output_tokens_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "dynamo_frontend_time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT},
	{Name: "dynamo_frontend_inter_token_latency_seconds", Kind: ReadHistogram, Histogram: ITL},
	{Name: "dynamo_frontend_request_duration_seconds", Kind: ReadHistogram, Histogram: E2E},
	{Name: "dynamo_frontend_input_sequence_tokens", Kind: ReadHistogram, Histogram: PromptLength},
	{Name: "dynamo_frontend_output_sequence_tokens", Kind: ReadHistogram, Histogram: GenerationLength},
})

// eppReads are the endpoint picker's pool families (engines-and-gpus §2
// and the EPP capture): a router page, summed over the pods it names.
// Each figure under three generations of names: the llm-d router's
// llm_d_epp_* (2026), the extension's inference_objective_* (v1.1.0,
// 2025-10, still emitted, deprecated) and the first inference_model_* /
// inference_pool_* names; an older name is read only where the newer is
// absent, so a picker that emits both is not counted twice.
var eppReads = []Read{
	{Name: "llm_d_epp_request_running", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: Running},
	{Name: "inference_objective_running_requests", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: Running, Legacy: true},
	{Name: "inference_model_running_requests", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: Running, Legacy: true},
	{Name: "llm_d_epp_per_endpoint_queue_size", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: Waiting},
	{Name: "inference_pool_per_pod_queue_size", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: Waiting, Legacy: true},
	{Name: "llm_d_epp_average_kv_cache_utilization", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: KVCacheUsage},
	{Name: "inference_pool_average_kv_cache_utilization", Router: RouterEndpointPicker, Kind: ReadScalar, Scalar: KVCacheUsage, Legacy: true},
}

func engineRows(k EngineKind, rows []Read) []Read {
	for i := range rows {
		rows[i].Engine = k
	}
	return rows
}

var readIndex = indexReads(Reads)

func indexReads(rows []Read) map[string]int {
	m := make(map[string]int, len(rows))
	for i, f := range rows {
		m[f.Name] = i
	}
	return m
}

var histogramSuffixes = [...]string{"_bucket", "_sum", "_count"}

// LookupSample returns the row of Reads a sample name belongs to, and
// whether vtop reads it. A histogram's _bucket/_sum/_count samples belong to
// the histogram family; the table, not the suffix, says it is a histogram.
func LookupSample(name []byte) (int, bool) {
	// m[string(b)] does not allocate: this runs for every line of a page.
	if i, ok := readIndex[string(name)]; ok {
		return i, true
	}
	for _, suf := range histogramSuffixes {
		if len(name) > len(suf) && string(name[len(name)-len(suf):]) == suf {
			if i, ok := readIndex[string(name[:len(name)-len(suf)])]; ok && Reads[i].Kind.IsHistogram() {
				return i, true
			}
		}
	}
	return 0, false
}

// FinishReasonOf maps a finished_reason label value to its FinishReason.
func FinishReasonOf(v string) (FinishReason, bool) {
	i := slices.Index(FinishReasonNames[:], v)
	return FinishReason(max(i, 0)), i >= 0
}

// HistogramName returns vLLM's current exposed name of a histogram.
func HistogramName(h Histogram) string {
	for _, f := range Reads {
		if f.Engine == EngineVLLM && f.Kind == ReadHistogram && f.Split == nil && f.Histogram == h && !f.Legacy {
			return f.Name
		}
	}
	return "histogram"
}

// Label names vtop reads.
const (
	LabelModel          = "model_name"
	LabelEngine         = "engine"
	LabelFinishedReason = "finished_reason"
	LabelReason         = "reason"                // vllm:num_requests_waiting_by_reason
	LabelSource         = "source"                // vllm:prompt_tokens_by_source_total
	LabelSleepState     = "sleep_state"           // vllm:engine_sleep_state
	LabelPosition       = "position"              // vllm:spec_decode_num_accepted_tokens_per_pos_total
	LabelEngineType     = "engine_type"           // SGLang's role, TensorRT-LLM's backend
	LabelMethod         = "method"                // TGI's prefill/decode split
	LabelRequestType    = "request_type"          // Triton TensorRT-LLM backend's request gauges
	LabelKVBlockType    = "kv_cache_block_type"   // Triton TensorRT-LLM backend's KV cache gauges
	LabelDynamoModel    = "model"                 // Dynamo's model label
	LabelServer         = "server"                // the production-stack router's backend
	LabelPod            = "model_server_pod"      // the endpoint picker's backend (deprecated)
	LabelEndpoint       = "model_server_endpoint" // the llm-d picker's backend

	LabelErr                   = "err"                              // TGI's failure kind
	LabelInflightBatcherMetric = "inflight_batcher_specific_metric" // Triton TensorRT-LLM backend's batcher gauges
)

// LookupFamily returns the row of Reads for an exposed family name (as a
// # TYPE line names it), and whether vtop reads it. The name is the page's
// bytes, as LookupSample's: the look-up does not allocate.
func LookupFamily(name []byte) (int, bool) {
	i, ok := readIndex[string(name)]
	return i, ok
}

// Prefixes are the spellings of vLLM's "vllm:" prefix in the wild: vLLM's
// own, KServe's rewrite ("kserve_vllm:"), Ray Serve's ("ray_vllm_", the
// colon made an underscore) and NVIDIA NIM's, which drops the prefix. A
// reader of someone else's storage (a Prometheus server) meets them all; a
// page of vLLM itself only the first.
var Prefixes = []string{VLLMPrefix, "kserve_vllm:", "ray_vllm_", ""}

// VLLMPrefix is vLLM's own prefix, the one the alias table spells its
// names with.
const VLLMPrefix = "vllm:"

// Canonical returns the name a sample has under vLLM's own prefix when it
// is a vLLM sample vtop reads under a rewritten prefix (or none), and the
// name unchanged otherwise: "kserve_vllm:num_requests_running" and
// "num_requests_running" both give "vllm:num_requests_running", while
// "process_start_time_seconds" stays itself. LookupSample of the result
// then finds the family.
func Canonical(name string) string {
	for _, p := range Prefixes {
		if p == VLLMPrefix || len(name) <= len(p) || name[:len(p)] != p {
			continue
		}
		c := VLLMPrefix + name[len(p):]
		if i, ok := LookupSample([]byte(c)); ok && Reads[i].Name[:len(VLLMPrefix)] == VLLMPrefix {
			return c
		}
	}
	return name
}
