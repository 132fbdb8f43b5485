package analysis_test

import (
	"encoding/json"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
)

// The JSON benchmarks are here, beside the reports they write.

// lineCounter counts the bytes of the last line written to it.
type lineCounter struct{ last int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.last = len(p)
	return len(p), nil
}

// benchmarkJSONLine writes the report as --jsonl does every interval: by
// encoding/json's Encoder, one line.
func benchmarkJSONLine(b *testing.B, r analysis.Report) {
	var out lineCounter
	b.ReportAllocs()
	for b.Loop() {
		if err := json.NewEncoder(&out).Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.last))
}

// BenchmarkReportJSON100 writes the report of 100 busy replicas as one
// JSON line.
func BenchmarkReportJSON100(b *testing.B) {
	benchmarkJSONLine(b, analysis.BusyFleetReport(100, 1))
}

// BenchmarkReportJSON25x8 writes the report of 25 busy replicas of 8
// data-parallel engines each, whose engine reports are most of the line.
func BenchmarkReportJSON25x8(b *testing.B) {
	benchmarkJSONLine(b, analysis.BusyFleetReport(25, 8))
}
