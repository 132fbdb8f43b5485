package catalogue

import "slices"

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
