package page

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// lines joins exposition lines into a page.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

// engineCase is a small page of one engine, built from the families the
// reference names, with the figures it must give.
type engineCase struct {
	name    string
	page    string
	kind    catalogue.EngineKind
	router  catalogue.RouterKind
	role    catalogue.Role
	figures []want
	derived []catalogue.Figure
}

func checkEngineCase(t *testing.T, c engineCase) catalogue.Sample {
	t.Helper()
	s, err := NewIngester().Ingest([]byte(c.page), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if s.EngineKind != c.kind || s.Router != c.router || s.Role != c.role {
		t.Errorf("EngineKind, Router, Role = %v, %q, %q, want %v, %q, %q", s.EngineKind, s.Router, s.Role, c.kind, c.router, c.role)
	}
	for _, w := range c.figures {
		if got := w.got(&s); !sameFloat(got, w.want) {
			t.Errorf("%s = %v, want %v", w.what, got, w.want)
		}
	}
	var wantDerived catalogue.FigureSet
	for _, f := range c.derived {
		wantDerived.Add(f)
	}
	if s.Derived != wantDerived {
		t.Errorf("Derived = %b, want %b", s.Derived, wantDerived)
	}
	return s
}

// Each engine's families map to vtop's figures; what it does not export
// stays n/a. The pages are built from the reference's family names (and
// the captures' labels), not captured.
func TestEngineMappings(t *testing.T) {
	nan := math.NaN()
	cases := []engineCase{
		{
			name: "sglang prefill worker with cached tokens",
			page: lines(
				`sglang:num_running_reqs{engine_type="prefill",model_name="m",pp_rank="0",tp_rank="0"} 7`,
				`sglang:num_queue_reqs{engine_type="prefill",model_name="m",pp_rank="0",tp_rank="0"} 3`,
				`sglang:token_usage{engine_type="prefill",model_name="m",pp_rank="0",tp_rank="0"} 0.5`,
				`sglang:prompt_tokens_total{model_name="m"} 1000`,
				`sglang:cached_tokens_total{model_name="m"} 400`,
				`sglang:num_requests_total{model_name="m"} 20`,
				`sglang:num_aborted_requests_total{model_name="m"} 2`,
				`# TYPE sglang:num_retractions histogram`,
				`sglang:num_retractions_bucket{le="1.0",model_name="m"} 18`,
				`sglang:num_retractions_bucket{le="+Inf",model_name="m"} 20`,
				`sglang:num_retractions_sum{model_name="m"} 5`,
				`sglang:num_retractions_count{model_name="m"} 20`,
				`sglang:max_total_num_tokens{engine_type="prefill",model_name="m",pp_rank="0",tp_rank="0"} 92962`),
			kind: catalogue.EngineSGLang, role: catalogue.RolePrefill,
			figures: []want{
				{"running", scalar(catalogue.Running), 7},
				{"waiting", scalar(catalogue.Waiting), 3},
				{"kv", scalar(catalogue.KVCacheUsage), 0.5},
				{"hits", scalar(catalogue.PrefixCacheHits), 400},
				{"queries = prompt tokens", scalar(catalogue.PrefixCacheQueries), 1000},
				{"finished", scalar(catalogue.FinishedRequests), 20},
				{"aborted", finished(catalogue.FinishAbort), 2},
				{"stop n/a", finished(catalogue.FinishStop), nan},
				{"preemptions = retractions", scalar(catalogue.Preemptions), 5},
				{"kv capacity", func(s *catalogue.Sample) float64 { return s.KVCapacityTokens }, 92962},
				{"no deferred waiting", scalar(catalogue.WaitingDeferred), nan},
			},
			derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.PrefixCacheQueries), catalogue.ScalarFigure(catalogue.Preemptions)},
		},
		{
			name: "tensorrt-llm prefixed, unprefixed spelling ignored beside it",
			page: lines(
				`trtllm_num_requests_running{engine_type="trtllm",model_name="m"} 4`,
				`trtllm_num_requests_waiting{engine_type="trtllm",model_name="m"} 1`,
				`trtllm_kv_cache_utilization{engine_type="trtllm",model_name="m"} 0.25`,
				`trtllm_num_requests_completed_total{engine_type="trtllm",model_name="m"} 9`,
				`trtllm_request_success_total{engine_type="trtllm",finished_reason="stop",model_name="m"} 9`,
				`# TYPE trtllm_e2e_request_latency_seconds histogram`,
				`trtllm_e2e_request_latency_seconds_bucket{engine_type="trtllm",le="+Inf",model_name="m"} 9`,
				`trtllm_e2e_request_latency_seconds_sum{engine_type="trtllm",model_name="m"} 18`,
				`trtllm_e2e_request_latency_seconds_count{engine_type="trtllm",model_name="m"} 9`,
				`# TYPE e2e_request_latency_seconds histogram`,
				`e2e_request_latency_seconds_bucket{engine_type="trtllm",le="+Inf",model_name="m"} 100`,
				`e2e_request_latency_seconds_sum{engine_type="trtllm",model_name="m"} 100`,
				`e2e_request_latency_seconds_count{engine_type="trtllm",model_name="m"} 100`),
			kind: catalogue.EngineTRTLLM,
			figures: []want{
				{"running", scalar(catalogue.Running), 4},
				{"waiting", scalar(catalogue.Waiting), 1},
				{"kv", scalar(catalogue.KVCacheUsage), 0.25},
				{"completed", scalar(catalogue.FinishedRequests), 9},
				{"stop", finished(catalogue.FinishStop), 9},
				{"e2e from the prefixed family", histCount(catalogue.E2E), 9},
				{"no preemptions", scalar(catalogue.Preemptions), nan},
			},
		},
		{
			name: "tgi: prefill batches only, derived tokens",
			page: lines(
				`# TYPE tgi_request_success counter`, `tgi_request_success 10`,
				`# TYPE tgi_request_failure counter`, `tgi_request_failure{err="overloaded"} 3`,
				`tgi_batch_current_size 5`, `tgi_queue_size 2`,
				`# TYPE tgi_batch_inference_duration histogram`,
				`tgi_batch_inference_duration_bucket{method="prefill",le="+Inf"} 4`,
				`tgi_batch_inference_duration_sum{method="prefill"} 0.8`,
				`tgi_batch_inference_duration_count{method="prefill"} 4`,
				`tgi_batch_inference_duration_bucket{method="decode",le="+Inf"} 400`,
				`tgi_batch_inference_duration_sum{method="decode"} 8`,
				`tgi_batch_inference_duration_count{method="decode"} 400`,
				`# TYPE tgi_request_mean_time_per_token_duration histogram`,
				`tgi_request_mean_time_per_token_duration_bucket{le="+Inf"} 10`,
				`tgi_request_mean_time_per_token_duration_sum 0.3`,
				`tgi_request_mean_time_per_token_duration_count 10`,
				`# TYPE tgi_request_generated_tokens histogram`,
				`tgi_request_generated_tokens_bucket{le="+Inf"} 10`,
				`tgi_request_generated_tokens_sum 2500`,
				`tgi_request_generated_tokens_count 10`),
			kind: catalogue.EngineTGI,
			figures: []want{
				{"running", scalar(catalogue.Running), 5},
				{"waiting", scalar(catalogue.Waiting), 2},
				{"finished = success: a request shed when overloaded did not finish", scalar(catalogue.FinishedRequests), 10},
				{"shed when overloaded: rejections", scalar(catalogue.AdmissionRejections), 3},
				{"no error", finished(catalogue.FinishError), nan},
				{"prefill batches", histCount(catalogue.PrefillTime), 4},
				{"decode batches are not prefill", histSum(catalogue.PrefillTime), 0.8},
				{"itl from per-request means", histCount(catalogue.ITL), 10},
				{"generation tokens", scalar(catalogue.GenerationTokens), 2500},
				{"prompt tokens n/a without the histogram", scalar(catalogue.PromptTokens), nan},
				{"ttft n/a", histCount(catalogue.TTFT), nan},
				{"kv n/a", scalar(catalogue.KVCacheUsage), nan},
			},
			derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.GenerationTokens),
				catalogue.HistogramFigure(catalogue.PrefillTime), catalogue.HistogramFigure(catalogue.ITL)},
		},
		{
			name: "production-stack router",
			page: lines(
				`vllm:num_requests_running{model_name="a",server="http://10.0.0.1:8000"} 3`,
				`vllm:num_requests_running{model_name="b",server="http://10.0.0.2:8000"} 4`,
				`vllm:num_requests_waiting{model_name="a",server="http://10.0.0.1:8000"} 1`,
				`vllm:num_requests_waiting{model_name="b",server="http://10.0.0.2:8000"} 0`),
			kind: catalogue.EngineVLLM, router: catalogue.RouterProductionStack,
			figures: []want{
				{"running over backends", scalar(catalogue.Running), 7},
				{"waiting over backends", scalar(catalogue.Waiting), 1},
			},
		},
		{
			name:    "process metrics only",
			page:    lines(`process_start_time_seconds 100`, `process_resident_memory_bytes 1e9`),
			kind:    catalogue.EngineUnknown,
			figures: []want{{"running", scalar(catalogue.Running), nan}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkEngineCase(t, c) })
	}
}

func TestRouterBackends(t *testing.T) {
	page := lines(
		`vllm:num_requests_running{model_name="a",server="http://b:8000"} 3`,
		`vllm:num_requests_running{model_name="a",server="http://a:8000"} 4`,
		`vllm:num_requests_waiting{model_name="a",server="http://b:8000"} 1`,
		"vllm:num_requests_waiting{model_name=\"a\",server=\"http://\x1b[31mc:8000\"} 1")
	s, err := NewIngester().Ingest([]byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a:8000", "http://b:8000", "http://c:8000"}
	if !slices.Equal(s.Backends, want) {
		t.Errorf("Backends = %q, want %q", s.Backends, want)
	}
	plain, err := NewIngester().Ingest([]byte(lines(`vllm:num_requests_running{model_name="a"} 3`)), "")
	if err != nil || plain.Router != catalogue.RouterNone || plain.Backends != nil {
		t.Errorf("a replica's page: Router %q, Backends %q, err %v", plain.Router, plain.Backends, err)
	}
}
