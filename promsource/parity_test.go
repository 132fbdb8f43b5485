package promsource

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/sim"
)

// asStored turns two gathers of one replica's families into the series a
// Prometheus that scraped them 5 s apart (at t0−5s and t0) would answer
// with: every sample of the page a series of the two values.
func asStored(instance string, before, now []*dto.MetricFamily) model.Matrix {
	byKey := map[string]*model.SampleStream{}
	var order []string
	add := func(fams []*dto.MetricFamily, at time.Time) {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, fams...)
		if err != nil {
			panic(err)
		}
		for _, s := range samples {
			s.Metric["job"], s.Metric["instance"] = "vllm", model.LabelValue(instance)
			k := s.Metric.String()
			ss := byKey[k]
			if ss == nil {
				ss = &model.SampleStream{Metric: model.Metric(s.Metric)}
				byKey[k] = ss
				order = append(order, k)
			}
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: s.Timestamp, Value: s.Value})
		}
	}
	add(before, t0.Add(-5*time.Second))
	add(now, t0)
	m := make(model.Matrix, 0, len(order))
	for _, k := range order {
		m = append(m, byKey[k])
	}
	return m
}

// TestSourceParity: a page read directly and the same page read back
// from Prometheus's storage give the same Sample: every figure known on
// one side is known on the other, with the same value. Replicas of the
// newest vLLM names: waiting by reason, the sleep state, speculative
// decoding by position, prompt tokens by source.
func TestSourceParity(t *testing.T) {
	fleet, err := sim.NewFleet(sim.Options{Replicas: 3, Scenario: sim.Mixed, Seed: 6, VLLMVersion: sim.Latest,
		Configure: func(i int, c *sim.ReplicaConfig) {
			if i == 2 {
				c.SleepLevel = 1
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(time.Minute)
	gather := func() [][]*dto.MetricFamily {
		var out [][]*dto.MetricFamily
		for _, r := range fleet.Replicas() {
			fams, err := r.Gather()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fams)
		}
		return out
	}
	before := gather()
	fleet.Advance(5 * time.Second)
	now := gather()
	for i, r := range fleet.Replicas() {
		body, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
		if err != nil {
			t.Fatal(err)
		}
		direct, err := page.NewIngester().Ingest(body, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		s := testSource(t, Config{})
		s.apply(t0, 10*time.Second, fetched{raw: decodedOf(asStored("10.0.0.1:8000", before[i], now[i]))})
		readings := s.snapshot()
		if len(readings) != 1 || len(readings[0].Samples) == 0 {
			t.Fatalf("replica %d: %d replicas read back", i, len(readings))
		}
		stored := readings[0].Samples[len(readings[0].Samples)-1]
		sameSeries(t, i, &direct.Total, &stored.Total)
		if !sameNum(direct.KVCapacityTokens, stored.KVCapacityTokens) || !sameNum(direct.ProcessStartTime, stored.ProcessStartTime) {
			t.Errorf("replica %d: KV capacity %v / %v, process start %v / %v", i, direct.KVCapacityTokens, stored.KVCapacityTokens,
				direct.ProcessStartTime, stored.ProcessStartTime)
		}
	}
}

// sameSeries fails where the two series differ in a figure: known on one
// side and not the other, or of another value.
func sameSeries(t *testing.T, replica int, direct, stored *catalogue.Series) {
	t.Helper()
	for k := range catalogue.NumScalars {
		if !sameNum(direct.Scalars[k], stored.Scalars[k]) {
			t.Errorf("replica %d: %v directly %v, through Prometheus %v", replica, catalogue.ScalarFigure(k), direct.Scalars[k], stored.Scalars[k])
		}
	}
	for r := range catalogue.NumFinishReasons {
		if !sameNum(direct.Finished[r], stored.Finished[r]) {
			t.Errorf("replica %d: finished %v directly %v, through Prometheus %v", replica, r, direct.Finished[r], stored.Finished[r])
		}
	}
	for h := range catalogue.NumHistograms {
		d, s := direct.Histograms[h], stored.Histograms[h]
		if d.Present() != s.Present() || (d.Present() && !sameNum(d.Count, s.Count)) {
			t.Errorf("replica %d: histogram %v directly %v (count %v), through Prometheus %v (count %v)", replica,
				catalogue.HistogramFigure(h), d.Present(), d.Count, s.Present(), s.Count)
		}
	}
	if len(direct.SpecAcceptedPerPos) != len(stored.SpecAcceptedPerPos) {
		t.Errorf("replica %d: speculative positions directly %v, through Prometheus %v", replica, direct.SpecAcceptedPerPos, stored.SpecAcceptedPerPos)
		return
	}
	for p := range direct.SpecAcceptedPerPos {
		if !sameNum(direct.SpecAcceptedPerPos[p], stored.SpecAcceptedPerPos[p]) {
			t.Errorf("replica %d: accepted at position %d directly %v, through Prometheus %v", replica, p, direct.SpecAcceptedPerPos[p], stored.SpecAcceptedPerPos[p])
		}
	}
}

// sameNum: both unknown, or both known and equal to 1e-9.
func sameNum(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) == math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
}

// TestSourceParityEnginePages: each engine's current page (the page
// package's pages written from the engines' upstream files) reads the
// same from Prometheus's storage as directly: the new families (batch
// cap, KV blocks, TGI's shed requests, the picker's new names) reach the
// figures through PromQL as through the parser.
func TestSourceParityEnginePages(t *testing.T) {
	paths, err := filepath.Glob("../page/testdata/engines/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no engine pages: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			byName, err := parser.TextToMetricFamilies(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			fams := make([]*dto.MetricFamily, 0, len(byName))
			for _, f := range byName {
				fams = append(fams, f)
			}
			direct, err := page.NewIngester().Ingest(body, "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			s := testSource(t, Config{})
			s.apply(t0, 10*time.Second, fetched{raw: decodedOf(asStored("10.0.0.1:8000", fams, fams))})
			readings := s.snapshot()
			if len(readings) != 1 || len(readings[0].Samples) == 0 {
				t.Fatalf("%d replicas read back", len(readings))
			}
			stored := readings[0].Samples[len(readings[0].Samples)-1]
			sameSeries(t, 0, &direct.Total, &stored.Total)
			if !sameNum(direct.KVCapacityTokens, stored.KVCapacityTokens) {
				t.Errorf("KV capacity %v directly, %v through Prometheus", direct.KVCapacityTokens, stored.KVCapacityTokens)
			}
		})
	}
}
