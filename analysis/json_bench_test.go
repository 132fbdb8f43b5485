package analysis

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// BenchmarkReportJSON100 writes the report of 100 busy replicas as one
// JSON line, as --jsonl does every interval.
func BenchmarkReportJSON100(b *testing.B) {
	s := newServer()
	s.running, s.waiting, s.kv = 200, 20, 0.8
	samples, now := run(s, 30, time.Second, finishing(10, chat))
	var targets []catalogue.Readings
	for i := range 100 {
		targets = append(targets, catalogue.Readings{Target: fmt.Sprintf("gpu-%d:8000", i), Samples: samples})
	}
	r := Analyze(now, targets, DefaultConfig(), nil)
	enc := json.NewEncoder(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(&r); err != nil {
			b.Fatal(err)
		}
	}
}
