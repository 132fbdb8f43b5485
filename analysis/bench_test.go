package analysis

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// BenchmarkAnalyzeReplica is one evaluation of one replica over 31 samples
// of a realistic V1 page: every core counter, prefix-cache counters, and all
// 8 histograms with vLLM's real bucket lists.
func BenchmarkAnalyzeReplica(b *testing.B) {
	s := newServer()
	s.running, s.waiting, s.kv, s.prefixQueries, s.prefixHits = 200, 20, 0.8, 0, 0
	samples, now := run(s, 30, time.Second, finishing(10, chat), finishing(2, request{reason: catalogue.FinishLength,
		prompt: 4000, gen: 1000, ttft: 1.2, itl: 0.04, e2e: 40, queue: 0.7, prefill: 0.5, decode: 39}),
		func(s *server, _ int) { s.prefixQueries += 9000; s.prefixHits += 3000 })
	targets := []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}
	cfg := DefaultConfig()
	prev := Analyze(now, targets, cfg, nil)
	b.ReportAllocs()
	for b.Loop() {
		Analyze(now, targets, cfg, &prev)
	}
}
