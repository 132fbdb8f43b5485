package analysis_test

import (
	"io"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/reportjson"
)

// The JSON benchmarks are here, beside the reports they write, and are
// measured from reportjson, which writes them.

// benchmarkJSONLine writes the report as --jsonl does every interval.
func benchmarkJSONLine(b *testing.B, r analysis.Report) {
	var line []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if line, err = reportjson.Append(line[:0], &r); err != nil {
			b.Fatal(err)
		}
		line = append(line, '\n')
		if _, err := io.Discard.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(line)))
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
