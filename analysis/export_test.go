package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// BusyFleetReport is busyFleetReport for the benchmarks of the JSON
// writer, outside the package.
var BusyFleetReport = busyFleetReport

// WithBucketsOnly is withBucketsOnly for the tests outside the package.
var WithBucketsOnly = withBucketsOnly

// withBucketsOnly is the samples as a source that leaves the buckets of
// every histogram but keep to the store builds them: those histograms'
// _sum and _count, no bounds. A histogram the page lacks stays absent.
func withBucketsOnly(samples []catalogue.Sample, keep ...catalogue.Histogram) []catalogue.Sample {
	return eachSeries(samples, func(s *catalogue.Series) {
		for h := range s.Histograms {
			if !slices.Contains(keep, catalogue.Histogram(h)) && s.Histograms[h].Bounds != nil {
				s.Histograms[h].Bounds, s.Histograms[h].Counts = []float64{}, nil
			}
		}
	})
}

// eachSeries is a copy of samples with f applied to each of their
// series, the total and every engine's (the samples given are left as
// they are).
func eachSeries(samples []catalogue.Sample, f func(*catalogue.Series)) []catalogue.Sample {
	out := slices.Clone(samples)
	for i := range out {
		f(&out[i].Total)
		out[i].Engines = slices.Clone(out[i].Engines)
		for e := range out[i].Engines {
			f(&out[i].Engines[e].Series)
		}
	}
	return out
}

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
