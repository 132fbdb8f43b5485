package page

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// dumpSample writes everything a Sample holds, one figure a line, so that a
// golden diff shows exactly which reading of a real page changed.
func dumpSample(s *catalogue.Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "has_vllm %v\nmodel %q\nkv_capacity_tokens %g\nprocess_start %g\nrss %g\ngc %g\nhttp_requests %g\n",
		s.HasVLLM, s.Model, s.KVCapacityTokens, s.ProcessStartTime, s.ProcessRSSBytes, s.GCCollections, s.HTTPRequests)
	fmt.Fprintf(&b, "engine_kind %v\nrouter %q\nbackends %q\nrole %q\n", s.EngineKind, s.Router, s.Backends, s.Role)
	for f := catalogue.Figure(0); f < catalogue.Figure(catalogue.NumScalars)+catalogue.Figure(catalogue.NumHistograms); f++ {
		if s.Derived.Has(f) {
			fmt.Fprintf(&b, "derived %v\n", f)
		}
	}
	if s.LoRA.Present {
		fmt.Fprintf(&b, "lora max=%g running=%q waiting=%q\n", s.LoRA.MaxLoRAs, s.LoRA.Running, s.LoRA.Waiting)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning %q\n", w)
	}
	dumpSeries(&b, "total", &s.Total)
	for _, e := range s.Engines {
		dumpSeries(&b, "engine "+e.Name, &e.Series)
	}
	return b.String()
}

func dumpSeries(b *strings.Builder, prefix string, s *catalogue.Series) {
	for i, v := range s.Scalars {
		if !math.IsNaN(v) {
			fmt.Fprintf(b, "%s %s %g\n", prefix, catalogue.Scalar(i), v)
		}
	}
	for i, v := range s.Finished {
		if !math.IsNaN(v) {
			fmt.Fprintf(b, "%s finished_%s %g\n", prefix, catalogue.FinishReasonNames[i], v)
		}
	}
	if s.SpecAcceptedPerPos != nil {
		fmt.Fprintf(b, "%s spec_accepted_per_pos %v\n", prefix, s.SpecAcceptedPerPos)
	}
	for h, hb := range s.Histograms {
		if hb.Present() {
			fmt.Fprintf(b, "%s %s bounds=%v counts=%v sum=%g count=%g\n",
				prefix, catalogue.Histogram(h), hb.Bounds, hb.Counts, hb.Sum, hb.Count)
		}
	}
}

// Every real capture reads to the figures recorded in its golden file.
// Run with -update after a deliberate change and review the diff.
func TestIngestRealGolden(t *testing.T) {
	entries, err := os.ReadDir(realDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			s, err := NewIngester().Ingest(loadReal(t, e.Name()), "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			got := dumpSample(&s)
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(e.Name(), ".txt")+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("reading of %s changed:\n--- got\n%s\n--- want\n%s", e.Name(), got, want)
			}
		})
	}
}
