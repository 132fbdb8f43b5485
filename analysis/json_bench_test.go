package analysis

import (
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// busyFleetReport is the report of n busy replicas of engines
// data-parallel engines each (one: no engine reports).
func busyFleetReport(n, engines int) Report {
	s := newServer()
	s.running, s.waiting, s.kv = 200, 20, 0.8
	if engines > 1 {
		for e := range engines {
			s.engines = append(s.engines, strconv.Itoa(e))
		}
	}
	samples, now := run(s, 30, time.Second, finishing(10, chat))
	var targets []catalogue.Readings
	for i := range n {
		targets = append(targets, catalogue.Readings{Target: fmt.Sprintf("gpu-%d:8000", i), Samples: samples})
	}
	return Analyze(now, targets, DefaultConfig(), nil)
}

// benchmarkJSONLine writes the report as --jsonl does every interval.
func benchmarkJSONLine(b *testing.B, r Report) {
	var line []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if line, err = r.AppendJSON(line[:0]); err != nil {
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
	benchmarkJSONLine(b, busyFleetReport(100, 1))
}

// BenchmarkReportJSON25x8 writes the report of 25 busy replicas of 8
// data-parallel engines each, whose engine reports are most of the line.
func BenchmarkReportJSON25x8(b *testing.B) {
	benchmarkJSONLine(b, busyFleetReport(25, 8))
}
