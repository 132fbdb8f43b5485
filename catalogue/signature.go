package catalogue

// EngineSignature says how to recognise one inference engine on a host: the
// paths its metrics page is served at and the families that prove a page is
// its own. Local discovery reads it; the parsers of each engine's figures
// are elsewhere.
type EngineSignature struct {
	// Engine is the name shown ("vLLM").
	Engine string
	// Paths are where the metrics page is served, most likely first.
	Paths []string
	// DefaultPort is where the engine listens when not told otherwise.
	DefaultPort int
	// Marks are the series any one of which proves the page is the
	// engine's.
	Marks []FamilyMark
	// MetricsFlag is the option that turns the metrics page on, for
	// engines that serve it only when asked ("" when always on).
	MetricsFlag string
}

// FamilyMark is a family that identifies an engine's page: its name, and a
// label its series must carry when the name alone is ambiguous.
type FamilyMark struct {
	Family string
	Label  string
}

// EngineSignatures are the engines local discovery looks for, from the
// families of engines-and-gpus §2 and the real captures.
var EngineSignatures = []EngineSignature{
	{Engine: "vLLM", Paths: []string{"/metrics"}, DefaultPort: 8000, Marks: []FamilyMark{
		{Family: "vllm:num_requests_running"}, {Family: "vllm:num_requests_waiting"},
		{Family: "vllm:generation_tokens_total"}, {Family: "vllm:time_to_first_token_seconds"},
	}},
	{Engine: "SGLang", Paths: []string{"/metrics"}, DefaultPort: 30000, Marks: []FamilyMark{
		{Family: "sglang:num_running_reqs"}, {Family: "sglang:num_queue_reqs"},
	}, MetricsFlag: "--enable-metrics"},
	{Engine: "TensorRT-LLM", Paths: []string{"/prometheus/metrics", "/metrics"}, DefaultPort: 8000, Marks: []FamilyMark{
		{Family: "trtllm_num_requests_running"}, {Family: "trtllm_request_success_total"},
		// native trtllm-serve exports unprefixed names tagged engine_type
		{Family: "e2e_request_latency_seconds", Label: "engine_type"},
		{Family: "time_to_first_token_seconds", Label: "engine_type"},
		// Triton's TensorRT-LLM backend, on Triton's metrics port
		{Family: "nv_trt_llm_request_metrics"},
	}},
	{Engine: "TGI", Paths: []string{"/metrics"}, DefaultPort: 3000, Marks: []FamilyMark{
		{Family: "tgi_queue_size"}, {Family: "tgi_batch_current_size"}, {Family: "tgi_request_count"},
	}},
	{Engine: "llama.cpp", Paths: []string{"/metrics"}, DefaultPort: 8080, Marks: []FamilyMark{
		{Family: "llamacpp:requests_processing"}, {Family: "llamacpp:prompt_tokens_total"},
	}, MetricsFlag: "--metrics"},
}
