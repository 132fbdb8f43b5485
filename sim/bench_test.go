package sim

import (
	"testing"
	"time"
)

// BenchmarkFleet100Scrape is one second of a 100-replica mixed fleet scraped
// once a second: each op advances every replica by one virtual second and
// renders its page once. ns/op ÷ 1e9 is the share of one core the fleet
// needs in real time (reported as core-share).
func BenchmarkFleet100Scrape(b *testing.B) {
	f, err := NewFleet(Options{Replicas: 100, Scenario: Mixed, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	f.Advance(2 * time.Minute) // past the warm-up: full queues, busy caches
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range f.Replicas() {
			r.Advance(time.Second)
			if _, err := r.Render(textFormat); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9, "core-share")
}

// BenchmarkRender is the rendering of one busy replica's page alone.
func BenchmarkRender(b *testing.B) {
	f, err := NewFleet(Options{Replicas: 2, Scenario: Mixed, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	f.Advance(time.Minute)
	r := f.Replicas()[1]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(textFormat); err != nil {
			b.Fatal(err)
		}
	}
}
