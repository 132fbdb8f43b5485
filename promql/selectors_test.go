package promql

import (
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestAlternatives holds the selectors to the alias table: current names
// first with vLLM's prefixes, legacy names apart, split families by their
// label, derivations where the engine lacks the figure.
func TestAlternatives(t *testing.T) {
	tests := []struct {
		name   string
		engine catalogue.EngineKind
		fig    catalogue.Figure
		suffix string
		want   []string
	}{
		{"vLLM waiting under every prefix", catalogue.EngineVLLM, catalogue.ScalarFigure(catalogue.Waiting), "",
			[]string{`{__name__=~"vllm:num_requests_waiting|kserve_vllm:num_requests_waiting|ray_vllm_num_requests_waiting|num_requests_waiting"}`}},
		{"vLLM KV usage: the legacy name after the current", catalogue.EngineVLLM, catalogue.ScalarFigure(catalogue.KVCacheUsage), "",
			[]string{`{__name__=~"vllm:kv_cache_usage_perc|kserve_vllm:kv_cache_usage_perc|ray_vllm_kv_cache_usage_perc|kv_cache_usage_perc"}`,
				`{__name__=~"vllm:gpu_cache_usage_perc|kserve_vllm:gpu_cache_usage_perc|ray_vllm_gpu_cache_usage_perc|gpu_cache_usage_perc"}`}},
		{"TensorRT-LLM waiting: Triton's split gauge after trtllm-serve's", catalogue.EngineTRTLLM, catalogue.ScalarFigure(catalogue.Waiting), "",
			[]string{`{__name__="trtllm_num_requests_waiting"}`, `{__name__="nv_trt_llm_request_metrics", request_type="waiting"}`}},
		{"SGLang preemptions: its retraction counter, else derived from its retractions per request", catalogue.EngineSGLang, catalogue.ScalarFigure(catalogue.Preemptions), "",
			[]string{`{__name__="sglang:num_retracted_requests_total"}`, `{__name__="sglang:num_retractions_sum"}`}},
		{"TGI rejections: the failures shed at the concurrency limit", catalogue.EngineTGI, catalogue.ScalarFigure(catalogue.AdmissionRejections), "",
			[]string{`{__name__="tgi_request_failure", err="overloaded"}`}},
		{"Dynamo running: active requests, then the deprecated in-flight", catalogue.EngineDynamo, catalogue.ScalarFigure(catalogue.Running), "",
			[]string{`{__name__="dynamo_frontend_active_requests"}`, `{__name__="dynamo_frontend_inflight_requests"}`}},
		{"TensorRT-LLM has no preemptions", catalogue.EngineTRTLLM, catalogue.ScalarFigure(catalogue.Preemptions), "", nil},
		{"TGI ITL buckets", catalogue.EngineTGI, catalogue.HistogramFigure(catalogue.ITL), "_bucket",
			[]string{`{__name__="tgi_request_mean_time_per_token_duration_bucket"}`}},
		{"llama.cpp has no TTFT", catalogue.EngineLlamaCpp, catalogue.HistogramFigure(catalogue.TTFT), "_bucket", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range alternatives(tt.engine, tt.fig, tt.suffix) {
				got = append(got, s.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestCounterNames: STALE and IDLE read the work counters, and only them.
func TestCounterNames(t *testing.T) {
	tests := []struct {
		engine catalogue.EngineKind
		want   string
	}{
		{catalogue.EngineTGI, "tgi_request_success tgi_request_failure"},
		{catalogue.EngineLlamaCpp, "llamacpp:prompt_tokens_total llamacpp:tokens_predicted_total"},
	}
	for _, tt := range tests {
		if got := strings.Join(counterNames(tt.engine), " "); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.engine, got, tt.want)
		}
	}
}
