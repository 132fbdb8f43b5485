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
