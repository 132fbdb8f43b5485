package promsource

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// The benchmark's rhythm: Prometheus scrapes every second (as
// bench/prometheus.sh does: 30 samples per series in the default 30 s
// window, the costly case), and vtop refreshes every 5 s.
const (
	benchScrape   = time.Second
	benchWindow   = 30 * time.Second
	benchInterval = 5 * time.Second
)

// BenchmarkRefresh measures one refresh (the queries, the decoding and the
// readings) and one analysis of a fleet of replicas with two engines each
// behind one real Prometheus, and reports the requests per refresh and
// what was read. read=whole reads the whole window every refresh (as the
// first refresh does); read=increment is the steady state, each refresh
// an interval after the one before (the wait is not timed). Setting up
// takes a window of scraping per size:
//
//	go test ./promsource -run '^$' -bench Refresh -benchtime 5x
func BenchmarkRefresh(b *testing.B) {
	for _, n := range []int{50, 200} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			prom := benchFleet(b, n)
			for _, whole := range []bool{true, false} {
				name := "read=increment"
				if whole {
					name = "read=whole"
				}
				b.Run(name, func(b *testing.B) { benchRefresh(b, prom, n, whole) })
			}
		})
	}
}

// benchRefresh runs refreshes of a new source of prom's fleet of n
// replicas, each from an empty window when whole.
func benchRefresh(b *testing.B, prom *testutil.Prometheus, n int, whole bool) {
	src, err := New(Config{URL: prom.URL(), Selector: `{job="vllm"}`, Window: benchWindow, Interval: benchInterval, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	cfg := analysis.DefaultConfig()
	cfg.Window = benchWindow
	ctx := context.Background()
	src.refresh(ctx) // the first read is whole either way
	before := src.Stats()
	var analyzeTime time.Duration
	var samples int
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if whole {
			src.raw.reset()
		} else {
			time.Sleep(benchInterval)
		}
		b.StartTimer()
		src.refresh(ctx)
		start := time.Now()
		rep := analysis.Analyze(src.Now(), src.Readings(nil), cfg, nil)
		analyzeTime += time.Since(start)
		if len(rep.Replicas) != n || !src.Status().OK() {
			b.Fatalf("%d replicas, status %+v", len(rep.Replicas), src.Status())
		}
		samples += src.Stats().Samples
	}
	st := src.Stats()
	refreshes := float64(st.Refreshes - before.Refreshes)
	b.ReportMetric(float64(st.Requests-before.Requests)/refreshes, "requests/refresh")
	b.ReportMetric(float64(st.FullReads-before.FullReads)/refreshes, "whole-reads/refresh")
	b.ReportMetric(float64(samples)/refreshes, "samples-read/refresh")
	b.ReportMetric(analyzeTime.Seconds()*1000/refreshes, "analyze-ms/refresh")
}

// benchFleet serves n replicas of two engines each and a Prometheus
// scraping them, and waits until it holds a full window.
func benchFleet(b *testing.B, n int) *testutil.Prometheus { return benchFleetT(b, n) }

// benchFleetT is benchFleet for any test.
func benchFleetT(b testing.TB, n int) *testutil.Prometheus {
	b.Helper()
	testutil.PrometheusTool(b, "prometheus")
	fleet, err := sim.NewFleet(sim.Options{Replicas: n, Scenario: sim.Mixed, Seed: 1,
		Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = 2 }})
	if err != nil {
		b.Fatal(err)
	}
	fleet.Advance(time.Minute)
	urls := testutil.ServeFleet(b.Context(), b, fleet)
	targets := make([]string, len(urls))
	for i, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			b.Fatal(err)
		}
		targets[i] = pu.Host
	}
	prom := testutil.StartPrometheus(b, benchScrape, targets)
	prom.WaitForWindow(benchWindow + benchScrape)
	return prom
}
