package page

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/testutil"
)

// A page rendered by the real client_golang exposition is read as
// VLLMRegistry set it, engines kept apart and aggregated.
func TestClientGolangPage(t *testing.T) {
	for _, engines := range []int{1, 2, 8} {
		t.Run(strconv.Itoa(engines)+" engines", func(t *testing.T) {
			s, err := NewIngester().Ingest(testutil.VLLMPage(t, engines), "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			checkEngines(t, s, engines)
		})
	}
}

// checkEngines asserts the figures testutil.VLLMRegistry set, summed over engines.
func checkEngines(t *testing.T, s catalogue.Sample, engines int) {
	t.Helper()
	var running, waiting, kv, prompt, stop, reps float64
	for e := range engines {
		running += float64(10 + e)
		waiting += float64(2 * e)
		kv += 0.1 * float64(e+1) / float64(engines)
		prompt += float64(1000 * (e + 1))
		stop += float64(100 + e)
		reps += float64(e + 1)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"running", s.Total.Scalars[catalogue.Running], running},
		{"waiting", s.Total.Scalars[catalogue.Waiting], waiting},
		{"kv usage (averaged)", s.Total.Scalars[catalogue.KVCacheUsage], kv},
		{"prompt tokens", s.Total.Scalars[catalogue.PromptTokens], prompt},
		{"preemptions (0, exported)", s.Total.Scalars[catalogue.Preemptions], 0},
		{"spec drafts (not exported)", s.Total.Scalars[catalogue.SpecDrafts], math.NaN()},
		{"finished stop", s.Total.Finished[catalogue.FinishStop], stop},
		{"finished abort", s.Total.Finished[catalogue.FinishAbort], 0},
		{"ttft count", s.Total.Histograms[catalogue.TTFT].Count, reps * float64(len(testutil.Observed))},
		{"ttft le=0.1", bucketAt(catalogue.TTFT, 0.1)(&s), reps * 2},
		{"ttft +Inf", bucketAt(catalogue.TTFT, math.Inf(1))(&s), reps * float64(len(testutil.Observed))},
		{"e2e sum", s.Total.Histograms[catalogue.E2E].Sum, reps * (0.003 + 0.07 + 0.2 + 0.9 + 3)},
		{"kv capacity", s.KVCapacityTokens, float64(engines * 27000 * 16)},
		{"python gc (summed over generations)", s.GCCollections, 10 + 20 + 30},
		{"http requests (summed over labels)", s.HTTPRequests, float64(len(testutil.APIHandlers) * 7)},
	}
	for _, c := range checks {
		if !sameFloat(c.got, c.want) && math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if s.Model != testutil.Model || !s.HasVLLM {
		t.Errorf("Model = %q HasVLLM = %v", s.Model, s.HasVLLM)
	}
	if math.IsNaN(s.ProcessStartTime) || math.IsNaN(s.ProcessRSSBytes) {
		t.Errorf("process figures missing: start %v rss %v", s.ProcessStartTime, s.ProcessRSSBytes)
	}
	wantBounds := append(slices.Clone(catalogue.TTFTBuckets), math.Inf(1))
	if !slices.Equal(s.Total.Histograms[catalogue.TTFT].Bounds, wantBounds) {
		t.Errorf("ttft bounds = %v", s.Total.Histograms[catalogue.TTFT].Bounds)
	}
	if engines < 2 {
		if s.Engines != nil {
			t.Errorf("Engines = %v, want nil for one engine", s.Engines)
		}
		return
	}
	if len(s.Engines) != engines {
		t.Fatalf("Engines = %d, want %d", len(s.Engines), engines)
	}
	for e, eng := range s.Engines {
		if eng.Name != strconv.Itoa(e) || eng.Scalars[catalogue.Running] != float64(10+e) ||
			eng.Histograms[catalogue.TTFT].Count != float64(e+1)*float64(len(testutil.Observed)) {
			t.Errorf("engine %d = %q running %v ttft count %v", e, eng.Name, eng.Scalars[catalogue.Running], eng.Histograms[catalogue.TTFT].Count)
		}
	}
}

// BenchmarkIngestV1Page reads one page over and over, as one target's
// Ingester does. cpu-ns/op is the process's CPU per page, the collector's
// included: on a shared machine it is steadier than the wall time, which
// also counts the time the benchmark waited for a core.
func BenchmarkIngestV1Page(b *testing.B) {
	for _, engines := range []int{1, 8} {
		page := testutil.VLLMPage(b, engines)
		name := strconv.Itoa(engines) + "-engines-" + strconv.Itoa(len(page)/1024) + "KB"
		// The same page again and again is read as values only where its
		// memo is kept (eight engines); read-in-full is every page read
		// as if its shape had changed.
		for _, full := range []bool{false, true} {
			sub := name
			if full {
				sub += "/read-in-full"
			}
			b.Run(sub, func(b *testing.B) {
				in := NewIngester()
				if full {
					setMemoMin(b, math.MaxInt)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(page)))
				cpu := testutil.CPUTime()
				for b.Loop() {
					if _, err := in.Ingest(page, "text/plain; version=0.0.4"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
