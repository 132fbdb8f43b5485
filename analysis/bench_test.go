package analysis

import (
	"strconv"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// BenchmarkAnalyzeReplica is one evaluation of one replica over 31 samples
// of a realistic V1 page: every core counter, prefix-cache counters, and all
// 8 histograms with vLLM's real bucket lists, marked rising sample to sample
// as the scraper marks them.
func BenchmarkAnalyzeReplica(b *testing.B) {
	benchmarkAnalyzeReplica(b, 0)
}

// BenchmarkAnalyzeReplica8Engines is the same replica served by 8
// data-parallel engines: each page carries the replica's total and each
// engine's own series, and every engine gets its own figures.
func BenchmarkAnalyzeReplica8Engines(b *testing.B) {
	benchmarkAnalyzeReplica(b, 8)
}

// benchmarkAnalyzeReplica measures the evaluation of the benchmark's
// replica with that many engines (0 for a single-engine page).
func benchmarkAnalyzeReplica(b *testing.B, engines int) {
	s := newServer()
	s.running, s.waiting, s.kv, s.prefixQueries, s.prefixHits = 200, 20, 0.8, 0, 0
	for e := range engines {
		s.engines = append(s.engines, strconv.Itoa(e))
		s.engineRunning = append(s.engineRunning, float64(20+e))
	}
	samples, now := run(s, 30, time.Second, finishing(10, chat), finishing(2, request{reason: catalogue.FinishLength,
		prompt: 4000, gen: 1000, ttft: 1.2, itl: 0.04, e2e: 40, queue: 0.7, prefill: 0.5, decode: 39}),
		func(s *server, _ int) { s.prefixQueries += 9000; s.prefixHits += 3000 })
	markRising(samples) // as the scraper stores them
	targets := []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}
	cfg := DefaultConfig()
	prev := Analyze(now, targets, cfg, nil)
	if len(prev.Replicas[0].Engines) != engines && engines >= 2 {
		b.Fatalf("%d engine reports, want %d", len(prev.Replicas[0].Engines), engines)
	}
	b.ReportAllocs()
	for b.Loop() {
		Analyze(now, targets, cfg, &prev)
	}
}
