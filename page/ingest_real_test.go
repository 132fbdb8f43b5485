package page

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// realDir holds verbatim captures of real /metrics pages.
const realDir = "testdata/real"

// captures returns the paths of the captured pages, failing the test when
// there are none.
func captures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(realDir, "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	return paths
}

// loadReal reads a capture the way its README says to: issue and pull-request
// excerpts lose their (possibly cut) last line, and "[... trimmed ...]"
// markers and "..." elisions, which are not exposition lines, go.
func loadReal(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return cleanReal(name, b)
}

func cleanReal(name string, b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if bytes.HasPrefix([]byte(name), []byte("issue-")) || bytes.HasPrefix([]byte(name), []byte("pr-")) {
		for len(lines) > 0 && len(bytes.TrimSpace(lines[len(lines)-1])) == 0 {
			lines = lines[:len(lines)-1]
		}
		lines = lines[:max(len(lines)-1, 0)]
	}
	var out []byte
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("[...")) || string(bytes.TrimSpace(l)) == "..." {
			continue
		}
		out = append(out, l...)
	}
	return out
}

// want is one expected figure of a Sample.
type want struct {
	what string
	got  func(s *catalogue.Sample) float64
	want float64 // NaN means "must be absent"
}

func scalar(sc catalogue.Scalar) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 { return s.Total.Scalars[sc] }
}

func finished(r catalogue.FinishReason) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 { return s.Total.Finished[r] }
}

func histCount(h catalogue.Histogram) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 {
		if !s.Total.Histograms[h].Present() {
			return math.NaN()
		}
		return s.Total.Histograms[h].Count
	}
}

func histSum(h catalogue.Histogram) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 {
		if !s.Total.Histograms[h].Present() {
			return math.NaN()
		}
		return s.Total.Histograms[h].Sum
	}
}

// bucketAt returns the cumulative count at bound le, NaN when absent.
func bucketAt(h catalogue.Histogram, le float64) func(*catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 {
		b := s.Total.Histograms[h]
		if i := slices.Index(b.Bounds, le); i >= 0 {
			return b.Counts[i]
		}
		return math.NaN()
	}
}

func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

func TestIngestRealCaptures(t *testing.T) {
	inf := math.Inf(1)
	nan := math.NaN()
	tests := []struct {
		file    string
		hasVLLM bool
		kind    catalogue.EngineKind
		router  catalogue.RouterKind
		role    catalogue.Role
		model   string
		kvCap   float64
		figures []want
		derived []catalogue.Figure
		bounds  map[catalogue.Histogram][]float64
	}{
		{
			file: "gh-file-vllm-v0.10-cpu-v0engine-qwen3-0.6b.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "Qwen/Qwen3-0.6B", kvCap: 2340 * 16,
			figures: []want{
				{"running", scalar(catalogue.Running), 0},
				{"waiting", scalar(catalogue.Waiting), 0},
				{"kv usage (old name)", scalar(catalogue.KVCacheUsage), 0},
				{"prompt tokens", scalar(catalogue.PromptTokens), 43952},
				{"generation tokens", scalar(catalogue.GenerationTokens), 4874},
				{"preemptions", scalar(catalogue.Preemptions), 0},
				{"prefix queries absent", scalar(catalogue.PrefixCacheQueries), nan},
				{"finished length", finished(catalogue.FinishLength), 38},
				{"finished stop absent", finished(catalogue.FinishStop), nan},
				{"ttft count", histCount(catalogue.TTFT), 69},
				{"ttft sum (multiprocess order)", histSum(catalogue.TTFT), 4941.843970537186},
				{"ttft le=1", bucketAt(catalogue.TTFT, 1), 4},
				{"ttft le=640", bucketAt(catalogue.TTFT, 640), 69},
				{"ttft +Inf", bucketAt(catalogue.TTFT, inf), 69},
				{"itl from time_per_output_token", histCount(catalogue.ITL), 4805},
				{"e2e sum", histSum(catalogue.E2E), 902.0056705474854},
				{"queue count", histCount(catalogue.QueueTime), 38},
				{"prompt length sum", histSum(catalogue.PromptLength), 12952},
				{"generation length sum", histSum(catalogue.GenerationLength), 4843},
			},
			bounds: map[catalogue.Histogram][]float64{
				catalogue.TTFT: {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560, inf},
			},
		},
		{
			file: "aibrix-docs-runtime-rst-vllm-v0.7-v0-engine.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "Qwen/Qwen2.5-Coder-1.5B-Instruct", kvCap: 81767 * 16,
			figures: []want{
				{"running", scalar(catalogue.Running), 0},
				{"kv usage (old name)", scalar(catalogue.KVCacheUsage), 0},
				{"prompt tokens", scalar(catalogue.PromptTokens), 148},
				{"generation tokens", scalar(catalogue.GenerationTokens), 955},
				{"finished stop", finished(catalogue.FinishStop), 4},
				{"ttft absent", histCount(catalogue.TTFT), nan},
			},
		},
		{
			file: "gh-file-book-ch03-vllm-v0.29.0-cpu-trimmed.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "smollm2-360m", kvCap: nan,
			figures: []want{
				{"generation tokens (no TYPE line)", scalar(catalogue.GenerationTokens), 11392},
				{"prompt tokens absent", scalar(catalogue.PromptTokens), nan},
				{"ttft count", histCount(catalogue.TTFT), 178},
				{"ttft sum", histSum(catalogue.TTFT), 50.285691261291504},
				{"ttft le=0.25", bucketAt(catalogue.TTFT, 0.25), 129},
				{"ttft le=2.5", bucketAt(catalogue.TTFT, 2.5), 178},
			},
			bounds: map[catalogue.Histogram][]float64{
				catalogue.TTFT: {0.1, 0.25, 0.5, 1, 2.5, inf},
			},
		},
		{
			file: "issue-production-stack-617-vllm-v0.10.0.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "zai-org/GLM-4.5", kvCap: nan,
			figures: []want{
				{"kv usage (new name)", scalar(catalogue.KVCacheUsage), 9.75010481363281e-06},
				{"prefix queries (new name)", scalar(catalogue.PrefixCacheQueries), 32},
				{"prefix hits (old name, new one cut off)", scalar(catalogue.PrefixCacheHits), 0},
				{"running absent", scalar(catalogue.Running), nan},
			},
		},
		{
			file: "issue-vllm-pr1890-v0.2.x-aioprometheus.txt", hasVLLM: true, kind: catalogue.EngineUnknown, kvCap: nan,
			figures: []want{
				{"running absent", scalar(catalogue.Running), nan},
				{"prompt tokens absent", scalar(catalogue.PromptTokens), nan},
			},
		},
		{
			file: "sglang-docs-production_metrics-md.txt", kind: catalogue.EngineSGLang,
			model: "meta-llama/Llama-3.1-8B-Instruct", kvCap: nan,
			figures: []want{
				{"running", scalar(catalogue.Running), 162},
				{"queued", scalar(catalogue.Waiting), 2826},
				{"token usage", scalar(catalogue.KVCacheUsage), 0.28},
				{"prompt tokens", scalar(catalogue.PromptTokens), 8.128902e+06},
				{"ttft count", histCount(catalogue.TTFT), 11008},
				{"itl from time_per_output_token", histCount(catalogue.ITL), 7.400757e+06},
				{"prefix queries absent: no cached-token counter to go with them", scalar(catalogue.PrefixCacheQueries), nan},
				{"finished absent", scalar(catalogue.FinishedRequests), nan},
			},
		},
		{
			file: "docs-dynamo-a7b23c00-sglang_via_dynamo-unstated.txt", kind: catalogue.EngineSGLang, role: catalogue.RoleUnified,
			model: "Qwen/Qwen3-0.6B", kvCap: 92962,
			figures: []want{
				{"running", scalar(catalogue.Running), 0},
				{"finished", scalar(catalogue.FinishedRequests), 1},
				{"generation tokens", scalar(catalogue.GenerationTokens), 300},
				{"preemptions from retractions", scalar(catalogue.Preemptions), 0},
				{"retractions per request", histCount(catalogue.PreemptionsPerRequest), 1},
				{"queue time sum", histSum(catalogue.QueueTime), 0.0018392642959952354},
				{"itl count", histCount(catalogue.ITL), 299},
				{"no prefill time", histCount(catalogue.PrefillTime), nan},
			},
			derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.Preemptions)},
			bounds:  map[catalogue.Histogram][]float64{catalogue.TTFT: append(slices.Clone(catalogue.SGLangTTFTBuckets), inf)},
		},
		{
			file: "issue-sglang-13485-sglang-v0.5.1-EXCERPT.txt", kind: catalogue.EngineSGLang, role: catalogue.RoleUnified,
			model: "Qwen-32B", kvCap: nan,
			figures: []want{{"running", scalar(catalogue.Running), 1}, {"waiting cut off", scalar(catalogue.Waiting), nan}},
		},
		{
			file: "docs-dynamo-a7b23c00-vllm_via_dynamo-unstated.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "Qwen/Qwen3-0.6B", kvCap: 95088,
			figures: []want{
				{"awake", scalar(catalogue.SleepLevel), 0},
				{"external prefix queries", scalar(catalogue.ExternalPrefixQueries), 66},
				{"external prefix hits", scalar(catalogue.ExternalPrefixHits), 0},
				{"finished from reasons", scalar(catalogue.FinishedRequests), 2},
				{"no waiting by reason before v0.20", scalar(catalogue.WaitingDeferred), nan},
			},
		},
		{
			file: "docs-dynamo-ce30a764-trtllm_via_dynamo-unstated.txt", kind: catalogue.EngineTRTLLM,
			model: "Qwen/Qwen3-0.6B", kvCap: nan,
			figures: []want{
				{"finished length", finished(catalogue.FinishLength), 2},
				{"finished", scalar(catalogue.FinishedRequests), 2},
				{"ttft sum", histSum(catalogue.TTFT), 0.06795299984514713},
				{"tpot count (per request)", histCount(catalogue.ITL), 2},
				{"queue count", histCount(catalogue.QueueTime), 2},
				{"no preemptions", scalar(catalogue.Preemptions), nan},
				{"no running on this page", scalar(catalogue.Running), nan},
			},
			derived: []catalogue.Figure{catalogue.HistogramFigure(catalogue.ITL)},
		},
		{
			file: "issue-aibrix-2004-trtllm_serve-unstated_2026-03-EXCERPT.txt", kind: catalogue.EngineTRTLLM,
			model: "undefined", kvCap: nan,
			figures: []want{{"e2e sum, unprefixed", histSum(catalogue.E2E), 3.4878239994868636}},
		},
		{
			file: "docs-tensorrtllm_backend-0b9d7d5a-triton_trtllm-23.11plus.txt", kind: catalogue.EngineTRTLLM, kvCap: 6239 * 64,
			figures: []want{
				{"running: the active requests, those max caps", scalar(catalogue.Running), 0},
				{"batch cap", scalar(catalogue.MaxRunning), 512},
				{"waiting", scalar(catalogue.Waiting), 1},
				{"kv usage: the block fraction", scalar(catalogue.KVCacheUsage), 0.4875},
				{"no finished counter", scalar(catalogue.FinishedRequests), nan},
				{"no ttft", histCount(catalogue.TTFT), nan},
			},
		},
		{
			file: "docs-dynamo-ce30a764-dynamo_frontend-unstated.txt", kind: catalogue.EngineDynamo,
			model: "qwen/qwen3-0.6b", kvCap: 92962 * 1,
			figures: []want{
				{"in flight", scalar(catalogue.Running), 0},
				{"queued_requests is no queue", scalar(catalogue.Waiting), nan},
				{"queued_requests: awaiting the first token", scalar(catalogue.AwaitingFirstToken), 0},
				{"a worker's batch cap", scalar(catalogue.MaxRunning), 2},
				{"requests", scalar(catalogue.FinishedRequests), 1},
				{"output tokens", scalar(catalogue.GenerationTokens), 300},
				{"input tokens from the ISL histogram", scalar(catalogue.PromptTokens), 33},
				{"ttft sum", histSum(catalogue.TTFT), 1.5625701570000001},
				{"itl count", histCount(catalogue.ITL), 299},
				{"no kv usage", scalar(catalogue.KVCacheUsage), nan},
			},
			derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.Running), catalogue.ScalarFigure(catalogue.PromptTokens)},
		},
		{
			file: "fixture-datadog_integrations-core-9e390cde-tgi-unstated-EXCERPT.txt", kind: catalogue.EngineTGI, kvCap: nan,
			figures: []want{
				{"batch size", scalar(catalogue.Running), 0},
				{"queue", scalar(catalogue.Waiting), 0},
				{"success + failure", scalar(catalogue.FinishedRequests), 111},
				{"failures", finished(catalogue.FinishError), 2},
				{"prompt tokens from input lengths", scalar(catalogue.PromptTokens), 662},
				{"no ttft", histCount(catalogue.TTFT), nan},
				{"no kv usage", scalar(catalogue.KVCacheUsage), nan},
				{"input length le=5.11", bucketAt(catalogue.PromptLength, 5.11), 0},
				{"input length le=10.22", bucketAt(catalogue.PromptLength, 10.22), 109},
			},
			derived: []catalogue.Figure{catalogue.ScalarFigure(catalogue.PromptTokens), catalogue.ScalarFigure(catalogue.FinishedRequests)},
			bounds:  map[catalogue.Histogram][]float64{catalogue.PromptLength: append(catalogue.TGILengthBuckets(511), inf)},
		},
		{
			file: "fixture-aginies_llmtui-7494e9ae-llamacpp-unstated.txt", kind: catalogue.EngineLlamaCpp, kvCap: nan,
			derived: []catalogue.Figure{catalogue.HistogramFigure(catalogue.ITL)},
			figures: []want{
				{"processing", scalar(catalogue.Running), 0},
				{"deferred", scalar(catalogue.Waiting), 0},
				{"prompt tokens", scalar(catalogue.PromptTokens), 479209},
				{"predicted tokens", scalar(catalogue.GenerationTokens), 123063},
				{"no requests counter", scalar(catalogue.FinishedRequests), nan},
				{"no ttft", histCount(catalogue.TTFT), nan},
				{"the ITL's sum: the time spent generating", histSum(catalogue.ITL), 683.744},
				{"the ITL's count: the tokens generated", histCount(catalogue.ITL), 123063},
			},
		},
		{
			// The excerpt shows the bug of its issue: the router wrote no
			// server label, so nothing tells it from a vLLM page.
			file: "issue-production-stack-318-vllm_router-unstated_2025-03-EXCERPT.txt", hasVLLM: true, kind: catalogue.EngineVLLM,
			model: "Qwen/Qwen2.5-Coder-32B-Instruct", kvCap: nan,
			figures: []want{{"running", scalar(catalogue.Running), 0}},
		},
		{
			file: "repo-yalmashad_Inference-gwapi-282f0d73-gie_epp-chart_v1.0.1-EXCERPT.txt", kind: catalogue.EngineUnknown,
			router: catalogue.RouterEndpointPicker, model: "my-org/chat-quality", kvCap: nan,
			figures: []want{
				{"running", scalar(catalogue.Running), 0},
				{"per-pod queues", scalar(catalogue.Waiting), 0},
				{"pool kv", scalar(catalogue.KVCacheUsage), 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := NewIngester().Ingest(loadReal(t, tt.file), "text/plain; version=0.0.4; charset=utf-8")
			if err != nil {
				t.Fatalf("Ingest: %v", err)
			}
			if s.HasVLLM != tt.hasVLLM || s.EngineKind != tt.kind || s.Router != tt.router || s.Role != tt.role {
				t.Errorf("HasVLLM, EngineKind, Router, Role = %v, %v, %q, %q, want %v, %v, %q, %q",
					s.HasVLLM, s.EngineKind, s.Router, s.Role, tt.hasVLLM, tt.kind, tt.router, tt.role)
			}
			if !s.HasEngineMetrics() && tt.kind != catalogue.EngineUnknown {
				t.Error("an engine's page reads as no inference-engine metrics")
			}
			var wantDerived catalogue.FigureSet
			for _, f := range tt.derived {
				wantDerived.Add(f)
			}
			if s.Derived != wantDerived {
				t.Errorf("Derived = %b, want %b", s.Derived, wantDerived)
			}
			if s.Model != tt.model {
				t.Errorf("Model = %q, want %q", s.Model, tt.model)
			}
			if !sameFloat(s.KVCapacityTokens, tt.kvCap) {
				t.Errorf("KVCapacityTokens = %v, want %v", s.KVCapacityTokens, tt.kvCap)
			}
			if s.Engines != nil {
				t.Errorf("Engines = %d, want nil for a single-engine page", len(s.Engines))
			}
			for _, w := range tt.figures {
				if got := w.got(&s); !sameFloat(got, w.want) {
					t.Errorf("%s = %v, want %v", w.what, got, w.want)
				}
			}
			for h, bounds := range tt.bounds {
				if got := s.Total.Histograms[h].Bounds; !slices.Equal(got, bounds) {
					t.Errorf("histogram %d bounds = %v, want %v", h, got, bounds)
				}
			}
		})
	}
}

// The bucket bounds of one target are interned: two pages share one slice.
func TestIngestInternsBounds(t *testing.T) {
	in := NewIngester()
	page := loadReal(t, "gh-file-vllm-v0.10-cpu-v0engine-qwen3-0.6b.txt")
	a, err := in.Ingest(page, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := in.Ingest(page, "")
	if err != nil {
		t.Fatal(err)
	}
	ba, bb := a.Total.Histograms[catalogue.TTFT].Bounds, b.Total.Histograms[catalogue.TTFT].Bounds
	if len(ba) == 0 || &ba[0] != &bb[0] {
		t.Error("bounds of two pages are not the same slice")
	}
	ca, cb := a.Total.Histograms[catalogue.TTFT].Counts, b.Total.Histograms[catalogue.TTFT].Counts
	if &ca[0] == &cb[0] {
		t.Error("counts of two pages share memory; the ring would see them change")
	}
}
