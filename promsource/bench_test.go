package promsource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// The benchmark's rhythm: Prometheus scrapes every second (as
// bench/prometheus.sh does by default: 30 samples per series in the
// default 30 s window, the costly case) or every 5 s, and vtop refreshes
// every 5 s.
const (
	benchScrape   = time.Second
	benchWindow   = 30 * time.Second
	benchInterval = 5 * time.Second
)

// BenchmarkRefresh measures one refresh (the queries, the decoding and the
// readings) and one analysis of a fleet of replicas with two engines each
// behind one real Prometheus scraping every second or every 5 s, and
// reports the requests per refresh, what was read and the slowest
// refresh. read=whole reads the whole window every refresh (as the first
// refresh does); read=increment is the steady state, each refresh
// starting an interval after the one before began, as the source's own
// loop starts them (the wait is not timed). 13 increments cover a minute
// of refreshes, every part of the recheck. buckets=raw reads every bucket
// series raw; buckets=server leaves them to the server (summary.go).
// Setting up takes a window of scraping per size:
//
//	go test ./promsource -run '^$' -bench 'Refresh/scrape=1s/replicas=200/read=increment' -benchtime 13x
func BenchmarkRefresh(b *testing.B) {
	for _, scrape := range []time.Duration{benchScrape, 5 * time.Second} {
		for _, n := range []int{50, 200} {
			b.Run(fmt.Sprintf("scrape=%s/replicas=%d", scrape, n), func(b *testing.B) {
				prom := benchFleet(b, n, scrape)
				for _, whole := range []bool{true, false} {
					name := "read=increment"
					if whole {
						name = "read=whole"
					}
					for _, server := range []bool{false, true} {
						above, buckets := -1, "/buckets=raw"
						if server {
							above, buckets = 1, "/buckets=server"
						}
						b.Run(name+buckets, func(b *testing.B) { benchRefresh(b, prom, n, whole, above) })
					}
				}
			})
		}
	}
}

// benchRefresh runs refreshes of a new source of prom's fleet of n
// replicas, each from an empty window when whole, leaving the buckets to
// the server above bucketsAbove scrape targets (-1: never).
func benchRefresh(b *testing.B, prom *testutil.Prometheus, n int, whole bool, bucketsAbove int) {
	// 200 two-engine replicas scraped every second are 82,000 series of
	// 30 points: more than the default bound holds.
	cfg := analysis.DefaultConfig()
	cfg.Window = benchWindow
	// The server evaluates the buckets the states read, as vtop asks it to.
	src, err := New(Config{URL: prom.URL(), Selector: `{job="vllm"}`, Window: benchWindow, Interval: benchInterval, Timeout: time.Minute,
		MaxMemory: 1 << 30, BucketsAbove: bucketsAbove, Histograms: analysis.JudgedHistograms(cfg)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	began := time.Now()
	src.refresh(ctx) // the first read is whole either way
	before := src.Stats()
	var analyzeTime, slowest time.Duration
	var samples int
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if whole {
			src.raw.reset()
		} else {
			time.Sleep(time.Until(began.Add(benchInterval)))
		}
		began = time.Now()
		b.StartTimer()
		src.refresh(ctx)
		slowest = max(slowest, time.Since(began))
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
	b.ReportMetric(slowest.Seconds(), "slowest-refresh-s")
	b.ReportMetric(float64(st.Series), "series-read-last-refresh")
}

// benchFleet serves n replicas of two engines each and a Prometheus
// scraping them every scrape, and waits until it holds a full window.
func benchFleet(b *testing.B, n int, scrape time.Duration) *testutil.Prometheus {
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
	prom := testutil.StartPrometheus(b, scrape, targets)
	prom.WaitForWindow(benchWindow + scrape)
	return prom
}

// BenchmarkReadWindow measures vtop's own side of a refresh without a
// server or a network in the timing: decoding a raw read of a fleet of two-engine
// replicas (a whole 30 s window of 1 s scrapes of the simulator's pages,
// served over loopback) by the query client and by the source's own
// decoder, and building every replica's samples from the window.
//
//	go test ./promsource -run '^$' -bench ReadWindow -benchmem
func BenchmarkReadWindow(b *testing.B) {
	for _, n := range []int{50, 200} {
		m := simulatedWindow(b, n, int(benchWindow/benchScrape))
		body := matrixAnswer(b, m)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}))
		b.Cleanup(srv.Close)
		src, err := New(Config{URL: srv.URL, Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		at := time.UnixMilli(int64(m[0].Values[len(m[0].Values)-1].Timestamp))
		// Each decoder returns how many series it read: converting one's
		// series to the other's types is no part of decoding.
		decoders := []struct {
			name   string
			decode func() (int, []string, error)
		}{
			{"client", func() (int, []string, error) {
				v, warns, err := src.query(ctx, "raw", at)
				m, _ := v.(model.Matrix)
				return len(m), warns, err
			}},
			{"stream", func() (int, []string, error) {
				got, warns, err := src.stream(ctx, "raw", at, resultMatrix, false)
				return len(got), warns, err
			}},
		}
		for _, d := range decoders {
			b.Run(fmt.Sprintf("replicas=%d/decode=%s", n, d.name), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					got, _, err := d.decode()
					if err != nil || got != len(m) {
						b.Fatalf("%d series, %v; want %d", got, err, len(m))
					}
				}
			})
		}
		b.Run(fmt.Sprintf("replicas=%d/build", n), func(b *testing.B) {
			raw := decodedOf(m)
			for b.Loop() {
				src.replicas = map[string]*replica{}
				src.apply(at, benchWindow, fetched{raw: raw})
				if len(src.replicas) != n {
					b.Fatalf("%d replicas, want %d", len(src.replicas), n)
				}
			}
		})
	}
}

// simulatedWindow is the raw series vtop reads of n simulated two-engine
// replicas over points scrapes a second apart, as Prometheus would hold
// them (instance and job labels added).
func simulatedWindow(b testing.TB, n, points int) model.Matrix {
	b.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: n, Scenario: sim.Mixed, Seed: 1,
		Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = 2 }})
	if err != nil {
		b.Fatal(err)
	}
	fleet.Advance(time.Minute)
	byKey := map[model.Fingerprint]*model.SampleStream{}
	var order []model.Fingerprint
	at := t0
	for range points {
		fleet.Advance(benchScrape)
		at = at.Add(benchScrape)
		for i, r := range fleet.Replicas() {
			mfs, err := r.Gather()
			if err != nil {
				b.Fatal(err)
			}
			vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, mfs...)
			if err != nil {
				b.Fatal(err)
			}
			for _, smp := range vec {
				if _, ok := roleOf(string(smp.Metric[model.MetricNameLabel])); !ok {
					continue
				}
				smp.Metric["instance"] = model.LabelValue(fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250))
				smp.Metric["job"] = "vllm"
				fp := smp.Metric.Fingerprint()
				ss := byKey[fp]
				if ss == nil {
					ss = &model.SampleStream{Metric: smp.Metric}
					byKey[fp] = ss
					order = append(order, fp)
				}
				ss.Values = append(ss.Values, model.SamplePair{Timestamp: smp.Timestamp, Value: smp.Value})
			}
		}
	}
	m := make(model.Matrix, len(order))
	for i, fp := range order {
		m[i] = byKey[fp]
	}
	return m
}

// matrixAnswer is the query API's answer carrying m.
func matrixAnswer(b testing.TB, m model.Matrix) []byte {
	b.Helper()
	result, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	return slices.Concat([]byte(`{"status":"success","data":{"resultType":"matrix","result":`), result, []byte(`}}`))
}
