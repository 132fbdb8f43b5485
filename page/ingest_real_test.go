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

// loadReal reads a capture the way its README says to: issue excerpts lose
// their (possibly cut) last line, and "[... trimmed ...]" markers, which are
// not exposition lines, go.
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
	if bytes.HasPrefix([]byte(name), []byte("issue-")) {
		for len(lines) > 0 && len(bytes.TrimSpace(lines[len(lines)-1])) == 0 {
			lines = lines[:len(lines)-1]
		}
		lines = lines[:max(len(lines)-1, 0)]
	}
	var out []byte
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("[...")) {
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
		model   string
		kvCap   float64
		figures []want
		bounds  map[catalogue.Histogram][]float64
	}{
		{
			file: "gh-file-vllm-v0.10-cpu-v0engine-qwen3-0.6b.txt", hasVLLM: true,
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
			file: "aibrix-docs-runtime-rst-vllm-v0.7-v0-engine.txt", hasVLLM: true,
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
			file: "gh-file-book-ch03-vllm-v0.29.0-cpu-trimmed.txt", hasVLLM: true,
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
			file: "issue-production-stack-617-vllm-v0.10.0.txt", hasVLLM: true,
			model: "zai-org/GLM-4.5", kvCap: nan,
			figures: []want{
				{"kv usage (new name)", scalar(catalogue.KVCacheUsage), 9.75010481363281e-06},
				{"prefix queries (new name)", scalar(catalogue.PrefixCacheQueries), 32},
				{"prefix hits (old name, new one cut off)", scalar(catalogue.PrefixCacheHits), 0},
				{"running absent", scalar(catalogue.Running), nan},
			},
		},
		{
			file: "issue-vllm-pr1890-v0.2.x-aioprometheus.txt", hasVLLM: true, kvCap: nan,
			figures: []want{
				{"running absent", scalar(catalogue.Running), nan},
				{"prompt tokens absent", scalar(catalogue.PromptTokens), nan},
			},
		},
		{
			file: "sglang-docs-production_metrics-md.txt", hasVLLM: false, kvCap: nan,
			figures: []want{
				{"prompt tokens absent (sglang: is not vllm:)", scalar(catalogue.PromptTokens), nan},
				{"ttft absent", histCount(catalogue.TTFT), nan},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := NewIngester().Ingest(loadReal(t, tt.file), "text/plain; version=0.0.4; charset=utf-8")
			if err != nil {
				t.Fatalf("Ingest: %v", err)
			}
			if s.HasVLLM != tt.hasVLLM {
				t.Errorf("HasVLLM = %v, want %v", s.HasVLLM, tt.hasVLLM)
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
