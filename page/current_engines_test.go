package page

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// enginesDir holds a page of each engine and version of the engine table
// (docs/engines.md), written from the upstream file the catalogue names
// for it, or copied from a real server's capture (its README says which).
const enginesDir = "testdata/engines"

func kvCapacity(s *catalogue.Sample) float64 { return s.KVCapacityTokens }

// Each engine's current page reads with the figures its current families
// give: the batch cap, the KV cache's capacity and use, SGLang's
// preemptions after num_retractions was removed, the llm-d picker's
// running requests under its new names; and a family that is not what it
// looks like (Dynamo's queued_requests, TGI's overload shedding) is not
// read as what it is not.
func TestCurrentEnginePages(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		file    string
		kind    catalogue.EngineKind
		router  catalogue.RouterKind
		role    catalogue.Role
		figures []want
		derived []catalogue.Figure
	}{
		{file: "sglang-2026-06.txt", kind: catalogue.EngineSGLang, role: catalogue.RoleUnified, figures: []want{
			{"running", scalar(catalogue.Running), 48},
			{"waiting", scalar(catalogue.Waiting), 12},
			{"waiting outside the queue (grammar)", scalar(catalogue.WaitingOutsideQueue), 2},
			{"preemptions (retracted requests)", scalar(catalogue.Preemptions), 17},
			{"retracted tokens", scalar(catalogue.RetractedTokens), 25500},
			{"paused", scalar(catalogue.Paused), 0},
			{"spec drafts (verify calls)", scalar(catalogue.SpecDrafts), 23000},
			{"prefix cache hits over every cache source", scalar(catalogue.PrefixCacheHits), 100000},
			{"KV capacity", kvCapacity, 163840},
			{"KV usage", scalar(catalogue.KVCacheUsage), 0.93},
		}, derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.PrefixCacheQueries)}},
		{file: "sglang-2026-06-disagg-decode.txt", kind: catalogue.EngineSGLang, role: catalogue.RoleDecode, figures: []want{
			{"waiting", scalar(catalogue.Waiting), 0},
			{"waiting outside the queue (prealloc + transfer)", scalar(catalogue.WaitingOutsideQueue), 8},
			{"preemptions", scalar(catalogue.Preemptions), nan},
		}},
		{file: "trtllm-serve-2026-09.txt", kind: catalogue.EngineTRTLLM, figures: []want{
			{"running", scalar(catalogue.Running), 64},
			{"batch cap", scalar(catalogue.MaxRunning), 64},
			{"KV capacity (max blocks × tokens per block)", kvCapacity, 4096 * 32},
			{"KV usage", scalar(catalogue.KVCacheUsage), 0.75},
			{"paused", scalar(catalogue.Paused), 2},
			{"prompt tokens", scalar(catalogue.PromptTokens), 512000},
			{"generation tokens", scalar(catalogue.GenerationTokens), 128000},
			{"cached prompt tokens", scalar(catalogue.PromptTokensCached), 100000},
			{"spec draft tokens", scalar(catalogue.SpecDraftTokens), 30000},
			{"spec accepted tokens", scalar(catalogue.SpecAcceptedTokens), 18000},
			{"errors", finished(catalogue.FinishError), 5},
			{"prefill time", histCount(catalogue.PrefillTime), 18},
			{"decode time", histCount(catalogue.DecodeTime), 21},
		}},
		{file: "triton-trtllm-2026.txt", kind: catalogue.EngineTRTLLM, figures: []want{
			{"running (active, what max caps)", scalar(catalogue.Running), 64},
			{"waiting", scalar(catalogue.Waiting), 7},
			{"batch cap", scalar(catalogue.MaxRunning), 64},
			{"KV capacity (max blocks × tokens per block)", kvCapacity, 6240 * 64},
			{"KV usage", scalar(catalogue.KVCacheUsage), 0.9},
			{"paused", scalar(catalogue.Paused), 4},
		}},
		{file: "dynamo-frontend-2026-05.txt", kind: catalogue.EngineDynamo, figures: []want{
			{"running (active requests)", scalar(catalogue.Running), 40},
			{"waiting: queued_requests is no queue", scalar(catalogue.Waiting), nan},
			{"awaiting the first token", scalar(catalogue.AwaitingFirstToken), 25},
			{"batch cap (a worker's)", scalar(catalogue.MaxRunning), 32},
			{"KV capacity (a worker's blocks × block size)", kvCapacity, 2000 * 16},
			{"rejections", scalar(catalogue.AdmissionRejections), 7},
			{"finished", scalar(catalogue.FinishedRequests), 510},
		}, derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.Running)}},
		{file: "tgi-db931fcf.txt", kind: catalogue.EngineTGI, figures: []want{
			{"token budget", scalar(catalogue.TokenBudget), 32000},
			{"tokens the batch may reach", scalar(catalogue.BatchTokens), 24000},
			{"KV usage: the token budget's fullness", scalar(catalogue.KVCacheUsage), 0.75},
			{"shed at the concurrency limit", scalar(catalogue.AdmissionRejections), 30},
			{"errors, without the shed", finished(catalogue.FinishError), 4},
			{"finished: successes and errors, not the shed", scalar(catalogue.FinishedRequests), 994},
		}, derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.KVCacheUsage), catalogue.ScalarFigure(catalogue.FinishedRequests)}},
		{file: "llamacpp-b4747.txt", kind: catalogue.EngineLlamaCpp, figures: []want{
			{"running", scalar(catalogue.Running), 2},
			{"waiting", scalar(catalogue.Waiting), 6},
			{"KV usage (kv_cache_usage_ratio)", scalar(catalogue.KVCacheUsage), 0.177734},
			{"generation seconds", scalar(catalogue.GenerationSeconds), 27.422},
			{"prompt seconds", scalar(catalogue.PromptSeconds), 0.411},
		}, derived: []catalogue.Figure{catalogue.HistogramFigure(catalogue.ITL)}},
		{file: "llamacpp-b8901.txt", kind: catalogue.EngineLlamaCpp, figures: []want{
			{"running", scalar(catalogue.Running), 2},
			{"waiting", scalar(catalogue.Waiting), 6},
			{"KV usage: b8901 has none", scalar(catalogue.KVCacheUsage), nan},
			{"generation seconds", scalar(catalogue.GenerationSeconds), 25.894},
			{"prompt seconds", scalar(catalogue.PromptSeconds), 0.237},
		}, derived: []catalogue.Figure{catalogue.HistogramFigure(catalogue.ITL)}},
		{file: "llmd-epp-2026-08.txt", router: catalogue.RouterEndpointPicker, figures: []want{
			{"running (llm_d_epp_request_running, the deprecated name not added)", scalar(catalogue.Running), 21},
			{"waiting (per endpoint, the per-pod copy not added)", scalar(catalogue.Waiting), 4},
			{"KV usage", scalar(catalogue.KVCacheUsage), 0.4},
		}},
		{file: "gie-epp-v1.1.txt", router: catalogue.RouterEndpointPicker, figures: []want{
			{"running (inference_objective_running_requests)", scalar(catalogue.Running), 9},
			{"waiting", scalar(catalogue.Waiting), 2},
			{"KV usage", scalar(catalogue.KVCacheUsage), 0.6},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(enginesDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			checkEngineCase(t, engineCase{name: tt.file, page: string(b), kind: tt.kind, router: tt.router,
				role: tt.role, figures: tt.figures, derived: tt.derived})
		})
	}
}

// The llm-d picker names its backends by model_server_endpoint now,
// beside the deprecated model_server_pod: both name the same backends.
func TestEndpointPickerBackends(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(enginesDir, "llmd-epp-2026-08.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewIngester().Ingest(b, "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Backends) != 2 || s.Backends[0] != "vllm-a" || s.Backends[1] != "vllm-b" {
		t.Errorf("Backends = %q, want [vllm-a vllm-b]", s.Backends)
	}
}
