package catalogue

import (
	"fmt"
	"slices"
	"strings"
)

// Source says where a list of families comes from: the engine that
// exports them, the versions that do, and the upstream file that defines
// them. Every catalogued family is in one Source or more (an engine that
// kept a family across versions lists it in each).
type Source struct {
	// Engine is the engine as the engine table names it ("SGLang",
	// "Triton TensorRT-LLM backend").
	Engine string
	Kind   EngineKind
	Router RouterKind
	// Versions are the versions that export the families.
	Versions string
	// File is the upstream file (or files) that defines them.
	File string
	// Unverified, when not "", says why the families are in no upstream
	// source read: vtop reads them in case a build carries them.
	Unverified string
	Families   []Family
}

// pick returns the families of list with those names, in list's order.
func pick(list []Family, names ...string) []Family {
	var out []Family
	for _, f := range list {
		if slices.Contains(names, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// Sources are the catalogue's families by engine, version and upstream
// file (the engines' sources as read 2026-12), in the order of the engine
// table (docs/engines.md).
var Sources = []Source{
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "V1 engine, 0.8 to main (#51655, 2026-08-14)",
		File: "vllm/v1/metrics/loggers.py, vllm/v1/spec_decode/metrics.py", Families: VLLMV1},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "V0 engine, to 0.10", File: "vllm/engine/metrics.py", Families: VLLMV0},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "main after #49984 (merged 2026-09; the Rust frontend's #57033 too)",
		File: "vllm/v1/metrics/loggers.py", Families: pick(VLLMLatest, "vllm:request_num_preemptions")},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "none released",
		File:       "vllm/v1/metrics/loggers.py as PR #55812 would change it",
		Unverified: "proposed in vLLM PR #55812 (open, 2026-09-08), in no vLLM source read",
		Families:   pick(VLLMLatest, "vllm:admission_rejections_total")},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "V1 with the NIXL connector (disaggregated prefill)",
		File: "vllm/distributed/kv_transfer/ (the NIXL connector's stats)", Families: VLLMNIXL},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "V1 with the offloading connector",
		File: "vllm/distributed/kv_transfer/ (the offloading connector's stats)", Families: VLLMOffload},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "V1 with --enable-lora", File: "vllm/v1/metrics/loggers.py", Families: VLLMLoRA},
	{Engine: "vLLM", Kind: EngineVLLM, Versions: "v0.17–v0.19 only", File: "vllm/v1/metrics/loggers.py", Families: VLLMRetired},
	{Engine: "API server (any engine)", Versions: "every Python server",
		File: "prometheus_client's process collector, prometheus-fastapi-instrumentator", Families: Frontend},

	{Engine: "SGLang", Kind: EngineSGLang, Versions: "~0.4", File: "python/sglang/srt/metrics/collector.py (its docs' sample page)", Families: SGLangV04},
	{Engine: "SGLang", Kind: EngineSGLang, Versions: "0.5 to 2026-04 (the 2026 capture behind Dynamo)",
		File: "python/sglang/srt/metrics/collector.py", Families: SGLang},
	{Engine: "SGLang", Kind: EngineSGLang, Versions: "main to #25153 (2026-06-30); the retraction counters from 2026-05 (#24197)",
		File: "python/sglang/srt/observability/metrics_collector.py", Families: SGLangCurrent},

	{Engine: "TensorRT-LLM", Kind: EngineTRTLLM, Versions: "trtllm-serve and its workers behind Dynamo (the captures)",
		File: "tensorrt_llm/metrics/collector.py", Families: TRTLLM},
	{Engine: "TensorRT-LLM", Kind: EngineTRTLLM, Versions: "collector.py containing PR #18583 (2026-09)",
		File: "tensorrt_llm/metrics/collector.py", Families: TRTLLMCurrent},
	{Engine: "Triton TensorRT-LLM backend", Kind: EngineTRTLLM, Versions: "23.11 and later",
		File: "inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc", Families: TritonTRTLLM},

	{Engine: "TGI", Kind: EngineTGI, Versions: "v2–v3 (the capture)", File: "router/src/infer/mod.rs, backends/v3/src/backend.rs", Families: TGI},
	{Engine: "TGI", Kind: EngineTGI, Versions: "v3 backend, db931fcf (2026-01-08)",
		File: "backends/v3/src/lib.rs:138, backends/v3/src/backend.rs:480", Families: TGIV3},

	{Engine: "llama.cpp", Kind: EngineLlamaCpp, Versions: "b4747 (2025-02-20) to b8901 (2026-04-23); n_tokens_max not in b4747",
		File: "tools/server/server-context.cpp (examples/server/server.cpp before)", Families: LlamaCpp},
	{Engine: "llama.cpp", Kind: EngineLlamaCpp, Versions: "b4747 (2025-02-20); gone by b8901",
		File: "examples/server/server.cpp", Families: LlamaCppB4747},

	{Engine: "Dynamo frontend", Kind: EngineDynamo, Versions: "the capture (ce30a764)", File: "lib/llm/src/http/service/metrics.rs", Families: Dynamo},
	{Engine: "Dynamo frontend", Kind: EngineDynamo, Versions: "metrics.rs containing PR #9526 (2026-05)",
		File: "lib/llm/src/http/service/metrics.rs, lib/runtime/src/metrics/prometheus_names.rs", Families: DynamoCurrent},

	{Engine: "Endpoint picker (llm-d, Gateway API Inference Extension)", Router: RouterEndpointPicker,
		Versions: "gateway-api-inference-extension to v1.0 (chart v1.0.1 capture)", File: "pkg/epp/metrics/metrics.go", Families: EndpointPicker},
	{Engine: "Endpoint picker (llm-d, Gateway API Inference Extension)", Router: RouterEndpointPicker,
		Versions: "inference_objective_* from v1.1.0 (2025-10-24, #1567); llm_d_epp_* in llm-d/llm-d-router (2026-08-22)",
		File:     "pkg/epp/metrics/llm_d_router_metrics.go, pkg/epp/metrics/metrics.go", Families: EndpointPickerCurrent},
}

// Unread says, of each catalogued family vtop does not read, why not.
var Unread = map[string]string{
	// vLLM
	"vllm:iteration_tokens_total":                "tokens per engine step: the token counters give the throughput",
	"vllm:estimated_flops_per_gpu_total":         "an estimate of the model's work, not of the server's load",
	"vllm:estimated_read_bytes_per_gpu_total":    "an estimate of the model's work, not of the server's load",
	"vllm:estimated_write_bytes_per_gpu_total":   "an estimate of the model's work, not of the server's load",
	"vllm:mm_cache_hits_total":                   "the multimodal input cache: no verdict reads it",
	"vllm:mm_cache_queries_total":                "the multimodal input cache: no verdict reads it",
	"vllm:request_inference_time_seconds":        "prefill + decode time, read apart",
	"vllm:request_max_num_generation_tokens":     "a request's parameter, not its service",
	"vllm:request_params_max_tokens":             "a request's parameter, not its service",
	"vllm:request_params_n":                      "a request's parameter, not its service",
	"vllm:request_prefill_kv_computed_tokens":    "the prompt tokens by source give it",
	"vllm:request_time_per_output_token_seconds": "a per-request mean; the inter-token latency is read",
	"vllm:nixl_num_descriptors":                  "the transfer's bookkeeping; its time and bytes are read",
	"vllm:nixl_post_time_seconds":                "the transfer's bookkeeping; its time and bytes are read",
	"vllm:nixl_num_failed_notifications_total":   "failed transfers are read; notifications follow them",
	"vllm:nixl_num_kv_expired_reqs_total":        "failed transfers are read",
	"vllm:kv_offload_load_time_total":            "the bytes moved are read",
	"vllm:kv_offload_store_time_total":           "the bytes moved are read",
	"process_cpu_seconds_total":                  "the API server's CPU; the engine's work is in its own families",
	// SGLang
	"sglang:cache_hit_rate":                  "a gauge reset by every decode report: the rate of cached_tokens_total ÷ prompt_tokens_total is read",
	"sglang:gen_throughput":                  "a gauge of the last logging interval: the token counter's rate is read",
	"sglang:num_used_tokens":                 "token_usage, its fraction of the pool, is read",
	"sglang:num_retracted_reqs":              "the retractions of the last interval: num_retracted_requests_total counts them all",
	"sglang:num_prefill_inflight_queue_reqs": "prefill done, its KV cache being sent: not waiting",
	"sglang:max_running_requests_under_SLO":  "a cap only when configured, on the requests within the SLO: not the batch cap",
	"sglang:spec_accept_length":              "a mean of the last interval, and SGLang counts no accepted tokens: acceptance stays n/a",
	"sglang:spec_accept_rate":                "a mean of the last interval, and SGLang counts no accepted tokens: acceptance stays n/a",
	"sglang:spec_num_draft_tokens":           "the adaptive tier's setting, not a count",
	"sglang:spec_num_steps":                  "the adaptive tier's setting, not a count",
	// TensorRT-LLM and Triton
	"trtllm_max_batch_size_static":             "the engine's build limit; max_num_active_requests caps the running requests",
	"trtllm_max_batch_size_runtime":            "the tuner's step limit; max_num_active_requests caps the running requests",
	"trtllm_max_num_tokens_runtime":            "a per-step token limit, not a cap of requests",
	"trtllm_kv_cache_used_blocks":              "kv_cache_utilization is used ÷ max blocks, read",
	"trtllm_kv_cache_free_blocks":              "max − used blocks",
	"trtllm_kv_cache_hit_rate":                 "a gauge: the cached prompt tokens' counter is read",
	"trtllm_spec_decode_acceptance_length":     "the draft and accepted token counters give it",
	"trtllm_spec_decode_drafted_tokens_total":  "by token_position: no count of drafts to divide the positions by, so no acceptance by position; the totals are read",
	"trtllm_spec_decode_accepted_tokens_total": "by token_position: no count of drafts to divide the positions by, so no acceptance by position; the totals are read",
	"trtllm_request_inference_time_seconds":    "prefill + decode time, read apart",
	// TGI
	"tgi_request_count":              "arrivals: the finished requests and the queue are read",
	"tgi_request_inference_duration": "per-batch time read by method (prefill) instead",
	"tgi_request_skipped_tokens":     "speculative tokens skipped; no figure of vtop's holds it",
	// llama.cpp
	"llamacpp:kv_cache_tokens":          "the tokens held: kv_cache_usage_ratio, their fraction, is read; no capacity is exported",
	"llamacpp:n_decode_total":           "decode calls: no figure of vtop's holds them",
	"llamacpp:n_busy_slots_per_decode":  "a running mean typed counter: no rate can be taken of it",
	"llamacpp:n_tokens_max":             "the largest batch seen in tokens, typed counter: not a capacity",
	"llamacpp:prompt_tokens_seconds":    "b4747 resets it on every read, by anyone: rates come from the counters",
	"llamacpp:predicted_tokens_seconds": "b4747 resets it on every read, by anyone: rates come from the counters",
	// Dynamo
	"dynamo_frontend_model_max_num_batched_tokens": "a per-step token limit, not a cap of requests",
	"dynamo_frontend_model_context_length":         "a request's limit, not the server's load",
	"dynamo_frontend_model_cancellation_total":     "cancellations are in requests_total, read",
	"dynamo_frontend_worker_active_decode_blocks":  "per worker, and the frontend says not how many workers share the model's blocks",
	// Endpoint picker
	"inference_model_request_total":     "arrivals at the picker: its backends' own pages count them",
	"inference_objective_request_total": "arrivals at the picker: its backends' own pages count them",
	"llm_d_epp_request_total":           "arrivals at the picker: its backends' own pages count them",
	"inference_pool_average_queue_size": "the per-backend queues are read and summed",
	"llm_d_epp_average_queue_size":      "the per-backend queues are read and summed",
	"inference_pool_ready_pods":         "the backends are counted from the queues' labels",
	"llm_d_epp_ready_endpoints":         "the backends are counted from the queues' labels",
}

// FamilyUse says what vtop does with a catalogued family: the figures it
// feeds (and under which label values), whether only where a newer name is
// absent, what is derived from it; or why it is not read. "" when the
// catalogue does not say, which a test forbids.
func FamilyUse(name string) string {
	i, ok := readIndex[name]
	if !ok {
		if why := Unread[name]; why != "" {
			return "not read: " + why
		}
		return ""
	}
	r := &Reads[i]
	var b strings.Builder
	b.WriteString("read: " + r.feeds())
	if r.Legacy {
		b.WriteString(", where no newer name is on the page")
	}
	if r.Derived {
		b.WriteString(" (standing in, with another meaning)")
	}
	if d := r.derives(); d != "" {
		b.WriteString("; derives " + d)
	}
	return b.String()
}

// feeds names the figures the row's series go to.
func (r *Read) feeds() string {
	switch r.Kind {
	case ReadScalar:
		return r.Scalar.String()
	case ReadHistogram:
		return r.Histogram.String()
	case ReadSleep:
		return SleepLevel.String()
	case ReadFinishedAs:
		s := "finished requests (" + FinishReasonNames[r.Finish] + ")"
		if parts := r.splitFeeds(); len(parts) > 0 {
			s += ", but " + strings.Join(parts, ", ")
		}
		return s
	}
	if name, ok := fixedFeeds[r.Kind]; ok {
		return name
	}
	return strings.Join(r.splitFeeds(), ", ") + "; other values not read"
}

// fixedFeeds names what the rows of a kind feed, whatever the row.
var fixedFeeds = map[ReadKind]string{
	ReadFinished:     "finished requests by finished_reason",
	ReadCacheConfig:  "KV capacity in tokens",
	ReadKVCapacity:   "KV capacity in tokens",
	ReadSpecPerPos:   "accepted tokens by draft position",
	ReadLoRA:         "LoRA adapters",
	ReadProcessStart: "process start (restarts)",
	ReadRSS:          "resident memory",
	ReadGC:           "GC collections",
	ReadHTTP:         "HTTP requests",
}

// splitFeeds names the figure each value of the row's split label goes to.
func (r *Read) splitFeeds() []string {
	var parts []string
	for _, sp := range r.Split {
		fig := sp.Scalar.String()
		if r.Kind == ReadSplitHistogram {
			fig = sp.Histogram.String()
		}
		parts = append(parts, fmt.Sprintf("%s=%q → %s", r.Label, sp.Value, fig))
	}
	return parts
}

// derives names what is derived from the row's figure on its engine's
// pages.
func (r *Read) derives() string {
	var out []string
	for _, d := range Derivations {
		if d.Engine != r.Engine {
			continue
		}
		var src FigureSet
		switch d.Op {
		case DeriveHistogramSum:
			src.Add(HistogramFigure(d.Histogram))
		case DeriveCopy:
			src.Add(ScalarFigure(d.From))
		case DeriveRatio:
			src.Add(ScalarFigure(d.From))
			src.Add(ScalarFigure(d.Over))
		case DeriveAddFinished:
			if r.Kind == ReadFinishedAs && r.Finish == d.Finish {
				out = append(out, d.Scalar.String())
			}
			continue
		}
		if r.FigureSet()&src != 0 {
			out = append(out, d.Scalar.String())
		}
	}
	if r.FigureSet()&(1<<ScalarFigure(KVBlocks)|1<<ScalarFigure(KVBlockTokens)) != 0 {
		out = append(out, "KV capacity in tokens (blocks × tokens per block)")
	}
	return strings.Join(out, ", ")
}
