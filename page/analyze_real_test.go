package page

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// TestRealCapturesAreJudged reads each real capture twice, ten seconds
// apart (nothing moved), and analyses it: a page of any engine or router
// vtop reads is judged on its own figures under its engine's name, never
// DOWN for want of vllm: families, and a state its engine cannot show is
// said to be unjudged rather than passed over.
func TestRealCapturesAreJudged(t *testing.T) {
	tests := []struct {
		file    string
		engine  catalogue.EngineKind
		router  catalogue.RouterKind
		state   analysis.State
		running analysis.Num // NA: the page has no running gauge
		note    string       // a reason that must be given; "" for none
	}{
		{"aibrix-docs-runtime-rst-vllm-v0.7-v0-engine.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, 0, ""},
		{"docs-dynamo-a7b23c00-sglang_via_dynamo-unstated.txt", catalogue.EngineSGLang, catalogue.RouterNone, analysis.StateIdle, 0, ""},
		{"docs-dynamo-a7b23c00-vllm_via_dynamo-unstated.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, 0, ""},
		{"docs-dynamo-ce30a764-dynamo_frontend-unstated.txt", catalogue.EngineDynamo, catalogue.RouterNone, analysis.StateIdle, 0, "the Dynamo frontend sees no preemptions; read its workers: PREEMPTING cannot be judged"},
		{"docs-dynamo-ce30a764-trtllm_via_dynamo-unstated.txt", catalogue.EngineTRTLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, "TensorRT-LLM exports no preemption counter: PREEMPTING cannot be judged"},
		// Triton's TensorRT-LLM backend has no latency histograms: not
		// proven healthy. Running is its active requests (0 in this
		// documentation sample, which shows 1 scheduled).
		{"docs-tensorrtllm_backend-0b9d7d5a-triton_trtllm-23.11plus.txt", catalogue.EngineTRTLLM, catalogue.RouterNone, analysis.StateUnjudged, 0, "this page exports no latency histograms: SLOW cannot be judged"},
		{"fixture-aginies_llmtui-7494e9ae-llamacpp-unstated.txt", catalogue.EngineLlamaCpp, catalogue.RouterNone, analysis.StateIdle, 0, "llama.cpp exports no latency histograms: SLOW cannot be judged"},
		{"fixture-datadog_integrations-core-9e390cde-tgi-unstated-EXCERPT.txt", catalogue.EngineTGI, catalogue.RouterNone, analysis.StateIdle, 0, "TGI exports no preemption counter: PREEMPTING cannot be judged"},
		{"gh-file-book-ch03-vllm-v0.29.0-cpu-trimmed.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, ""},
		{"gh-file-vllm-v0.10-cpu-v0engine-qwen3-0.6b.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, 0, ""},
		{"issue-aibrix-2004-trtllm_serve-unstated_2026-03-EXCERPT.txt", catalogue.EngineTRTLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, "TensorRT-LLM exports no preemption counter: PREEMPTING cannot be judged"},
		{"issue-production-stack-318-vllm_router-unstated_2025-03-EXCERPT.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, 0, ""},
		{"issue-production-stack-617-vllm-v0.10.0.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, ""},
		// An excerpt without the latency histograms.
		{"issue-sglang-13485-sglang-v0.5.1-EXCERPT.txt", catalogue.EngineSGLang, catalogue.RouterNone, analysis.StateUnjudged, 1, "this page exports no latency histograms: SLOW cannot be judged"},
		{"issue-vllm-pr1890-v0.2.x-aioprometheus.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, ""},
		{"pr-vllm-22227-vllm-unstated_2025-08-dp2-EXCERPT.txt", catalogue.EngineVLLM, catalogue.RouterNone, analysis.StateIdle, analysis.NA, ""},
		{"repo-yalmashad_Inference-gwapi-282f0d73-gie_epp-chart_v1.0.1-EXCERPT.txt", catalogue.EngineUnknown, catalogue.RouterEndpointPicker, analysis.StateIdle, 0, "endpoint-picker router in front of 2 backends"},
		{"sglang-docs-production_metrics-md.txt", catalogue.EngineSGLang, catalogue.RouterNone, analysis.StateFull, 162, "waiting 2,826 → 2,826 over 10s, running 162 (the most seen)"},
	}
	t0 := time.Date(2026, 5, 4, 14, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body := loadReal(t, tt.file)
			var samples []catalogue.Sample
			for i := range 2 {
				s, err := NewIngester().Ingest(body, "text/plain; version=0.0.4")
				if err != nil {
					t.Fatalf("ingest: %v", err)
				}
				s.Time = t0.Add(time.Duration(i) * 10 * time.Second)
				samples = append(samples, s)
			}
			now := samples[1].Time
			r := analysis.Analyze(now, []catalogue.Readings{{Target: "capture", Samples: samples}}, analysis.DefaultConfig(), nil).Replicas[0]
			if r.EngineKind != tt.engine || r.Router != tt.router || r.State != tt.state {
				t.Errorf("engine %v, router %q, state %v; want %v, %q, %v (reasons %q)", r.EngineKind, r.Router, r.State, tt.engine, tt.router, tt.state, r.Reasons)
			}
			if r.Running.Known() != tt.running.Known() || (tt.running.Known() && r.Running != tt.running) {
				t.Errorf("running %v, want %v", r.Running, tt.running)
			}
			if tt.note != "" && !slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.Contains(s, tt.note) }) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.note)
			}
		})
	}
}
