package record

import (
	"fmt"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// benchPages renders n consecutive 1 s pages of a healthy replica.
func benchPages(b *testing.B, engines, n int) [][]byte {
	f := simFleet(b, sim.Options{Replicas: 1, Scenario: sim.Healthy, Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = engines }})
	pages := make([][]byte, n)
	for i := range pages {
		f.Advance(time.Second)
		pages[i] = render(b, f.Replicas()[0], textFormat)
	}
	return pages
}

// BenchmarkWatch is what watching costs per scrape: parsing the page.
// BenchmarkRecord is what recording adds: filtering, splitting,
// compressing and writing it. Their ratio is recording's cost on top of
// watching.
func BenchmarkWatch(b *testing.B) {
	for _, engines := range []int{1, 8} {
		b.Run(fmt.Sprintf("engines=%d", engines), func(b *testing.B) {
			pages := benchPages(b, engines, 60)
			in := page.NewIngester()
			b.ResetTimer()
			for i := range b.N {
				if _, err := in.Ingest(pages[i%len(pages)], textPlain); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRecord(b *testing.B) {
	for _, engines := range []int{1, 8} {
		b.Run(fmt.Sprintf("engines=%d", engines), func(b *testing.B) {
			pages := benchPages(b, engines, 60)
			targets := simTargets(1)
			rec, err := Create(tempPath(b), Options{Targets: targets, Interval: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer rec.Close()
			at := time.Unix(1_800_000_000, 0)
			b.ResetTimer()
			for i := range b.N {
				rec.Page(scrape.Page{Target: targets[0], Time: at.Add(time.Duration(i) * time.Second), Body: pages[i%len(pages)], ContentType: textPlain})
			}
			b.ReportMetric(float64(rec.Size())/float64(b.N), "bytes/frame")
		})
	}
}
