package analysis_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// TestStatedBatchCapOnEnginePages: each engine's current page (page's
// testdata) read as the monitor reads it gives the batch cap its page
// states (TensorRT-LLM's and Triton's 64), and a Dynamo frontend's
// worker cap (32 a worker) is not read as the cap of the running it sums.
func TestStatedBatchCapOnEnginePages(t *testing.T) {
	tests := []struct {
		file       string
		wantCap    float64
		wantStated bool
	}{
		{"trtllm-serve-2026-09.txt", 64, true},
		{"triton-trtllm-2026.txt", 64, true},
		{"dynamo-frontend-2026-05.txt", math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "page", "testdata", "engines", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			in := page.NewIngester()
			var samples []catalogue.Sample
			at := unixTime(1.8e9)
			for i := range 2 {
				s, err := in.Ingest(body, "text/plain; version=0.0.4")
				if err != nil {
					t.Fatal(err)
				}
				s.Time = at.Add(time.Duration(i) * time.Second)
				samples = append(samples, s)
			}
			r := analysis.Analyze(samples[1].Time, []catalogue.Readings{{Target: "t", Samples: samples}}, analysis.DefaultConfig(), nil).Replicas[0]
			if r.BatchCapStated != tt.wantStated || tt.wantStated && r.BatchCap.Float() != tt.wantCap {
				t.Errorf("batch cap %v (stated %v), want %v (stated %v)", r.BatchCap, r.BatchCapStated, tt.wantCap, tt.wantStated)
			}
		})
	}
}

// TestSGLangPreemptingEvidenceByVersion: SGLang before 2026-05 counts
// retractions when a request finishes (sglang:num_retractions, from which
// its preemptions are derived): PREEMPTING is judged on partial evidence
// there, and said so; current SGLang counts them as they happen
// (sglang:num_retracted_requests_total), the whole evidence.
func TestSGLangPreemptingEvidenceByVersion(t *testing.T) {
	tests := []struct {
		path    string
		partial bool
	}{
		{filepath.Join("engines", "sglang-2026-06.txt"), false},
		{filepath.Join("real", "docs-dynamo-a7b23c00-sglang_via_dynamo-unstated.txt"), true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "page", "testdata", tt.path))
			if err != nil {
				t.Fatal(err)
			}
			s, err := page.NewIngester().Ingest(body, "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			if s.EngineKind != catalogue.EngineSGLang || math.IsNaN(s.Total.Scalars[catalogue.Preemptions]) {
				t.Fatalf("engine %v, preemptions %v", s.EngineKind, s.Total.Scalars[catalogue.Preemptions])
			}
			why := s.EngineKind.PartialOn(catalogue.JudgePreempting, s.Derived)
			if (why != "") != tt.partial {
				t.Errorf("PREEMPTING partial: %q, want partial %v", why, tt.partial)
			}
		})
	}
}
