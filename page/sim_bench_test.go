package page

import (
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// BenchmarkIngestSimScrapes reads the successive pages of one simulated
// vLLM replica of eight engines, one second apart, as its Ingester reads
// them from scrape to scrape: unlike BenchmarkIngestV1Page's one page,
// about half of the lines change from one page to the next.
func BenchmarkIngestSimScrapes(b *testing.B) {
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: sim.Mixed, Seed: 1,
		Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = 8 }})
	if err != nil {
		b.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	pages := make([][]byte, 16)
	for i := range pages {
		fleet.Advance(time.Second)
		if pages[i], err = fleet.Replicas()[0].Render(expfmt.NewFormat(expfmt.TypeTextPlain)); err != nil {
			b.Fatal(err)
		}
	}
	in := NewIngester()
	b.ReportAllocs()
	b.SetBytes(int64(len(pages[0])))
	cpu := testutil.CPUTime()
	i := 0
	for b.Loop() {
		s, err := in.Ingest(pages[i%len(pages)], "text/plain; version=0.0.4")
		if err != nil || !s.HasVLLM || len(s.Engines) != 8 {
			b.Fatalf("page %d: %v, vLLM %v, %d engines", i%len(pages), err, s.HasVLLM, len(s.Engines))
		}
		i++
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
