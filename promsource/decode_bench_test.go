package promsource

import (
	"bytes"
	"runtime"
	"testing"
)

// BenchmarkDecodeAnswer measures the source's decoder alone on a raw
// read of 20 simulated two-engine replicas (a 30 s window of 1 s
// scrapes, from memory: no server, no network), and reports, per series
// of the answer, the allocations and bytes of decoding it and the bytes
// the decoded answer holds once the decoder's garbage is collected: what
// the source keeps of it between refreshes.
//
//	go test ./promsource -run '^$' -bench DecodeAnswer -benchmem
func BenchmarkDecodeAnswer(b *testing.B) {
	m := simulatedWindow(b, 20, int(benchWindow/benchScrape))
	body := matrixAnswer(b, m)
	b.SetBytes(int64(len(body)))
	kept := heldBytes(b, func() any {
		held, _, err := decodeMatrix(bytes.NewReader(body), len(m), nil)
		if err != nil || len(held) != len(m) {
			b.Fatalf("%d series, %v; want %d", len(held), err, len(m))
		}
		return held
	})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, _, err := decodeMatrix(bytes.NewReader(body), len(m), nil)
		if err != nil || len(got) != len(m) {
			b.Fatalf("%d series, %v; want %d", len(got), err, len(m))
		}
	}
	n := float64(len(m))
	b.ReportMetric(kept/n, "held-B/series")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() { _, _, _ = decodeMatrix(bytes.NewReader(body), len(m), nil) }))/n, "allocs/series")
	b.ReportMetric(n, "series")
}

// heldBytes is the growth of the live heap while what make returns is
// held: what it keeps, its garbage collected.
func heldBytes(b *testing.B, make func() any) float64 {
	var before, after runtime.MemStats
	for range 3 { // objects with finalizers take more than one
		runtime.GC()
	}
	runtime.ReadMemStats(&before)
	held := make()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}
