package promsource

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/sim"
)

// TestPastPagesParseAsStored: the samples Prometheus stored of a scrape,
// written back as a page, parse to the very Sample the live source builds
// from the same samples, for every engine's page and every vLLM version
// of names: a recording of the past holds what a live watch through
// Prometheus saw.
func TestPastPagesParseAsStored(t *testing.T) {
	tests := []struct {
		name string
		opts sim.Options
	}{
		{"vLLM V1", sim.Options{Replicas: 3, Scenario: sim.Mixed, Seed: 6}},
		{"vLLM V0", sim.Options{Replicas: 2, Scenario: sim.Mixed, Seed: 6, VLLMVersion: sim.V0}},
		{"vLLM latest names", sim.Options{Replicas: 3, Scenario: sim.Mixed, Seed: 6, VLLMVersion: sim.Latest}},
		{"every engine", sim.Options{Replicas: 5, Scenario: sim.MixedEngines, Seed: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fleet, err := sim.NewFleet(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			fleet.Advance(time.Minute)
			before := gatherFleet(t, fleet)
			fleet.Advance(5 * time.Second)
			now := gatherFleet(t, fleet)
			for i := range before {
				stored := asStored("10.0.0.1:8000", before[i], now[i])
				checkPastPages(t, i, stored)
			}
		})
	}
}

// gatherFleet gathers every replica's families.
func gatherFleet(t *testing.T, fleet *sim.Fleet) [][]*dto.MetricFamily {
	t.Helper()
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

// checkPastPages writes the stored samples as pages and compares each
// page's Sample with the live build's sample at its time.
func checkPastPages(t *testing.T, replica int, stored model.Matrix) {
	t.Helper()
	s := testSource(t, Config{})
	s.apply(t0, 10*time.Second, fetched{raw: decodedOf(stored)})
	readings := s.snapshot()
	if len(readings) != 1 {
		t.Fatalf("replica %d: %d replicas built", replica, len(readings))
	}
	built := readings[0].Samples[1:] // after the reading that says Prometheus watched before the window
	p := &Past{src: s, index: map[scrapeTarget]int{{job: "vllm", instance: "10.0.0.1:8000"}: 0},
		Targets: []PastTarget{{Name: "10.0.0.1:8000", Job: "vllm", Instance: "10.0.0.1:8000"}}}
	after := model.TimeFromUnixNano(t0.Add(-time.Minute).UnixNano())
	pages := p.pages(stored, nil, after, model.TimeFromUnixNano(t0.UnixNano()))
	if len(pages) != len(built) || len(pages) != 2 {
		t.Fatalf("replica %d: %d pages, %d samples built: want 2 of each", replica, len(pages), len(built))
	}
	in := page.NewIngester()
	for k, pg := range pages {
		got, err := in.Ingest(pg.Body, PastContentType)
		if err != nil {
			t.Fatalf("replica %d: page %d does not parse: %v\n%s", replica, k, err, pg.Body)
		}
		want := built[k]
		if !pg.Time.Equal(want.Time) {
			t.Errorf("replica %d: page at %v, sample at %v", replica, pg.Time, want.Time)
		}
		sameSeries(t, replica, &want.Total, &got.Total)
		if got.EngineKind != want.EngineKind || got.Model != want.Model || len(got.Engines) != len(want.Engines) {
			t.Errorf("replica %d: engine %v model %q engines %d, built %v %q %d", replica,
				got.EngineKind, got.Model, len(got.Engines), want.EngineKind, want.Model, len(want.Engines))
		}
		if !sameNum(got.KVCapacityTokens, want.KVCapacityTokens) || !sameNum(got.ProcessStartTime, want.ProcessStartTime) ||
			!sameNum(got.HTTPRequests, want.HTTPRequests) || !sameNum(got.ProcessRSSBytes, want.ProcessRSSBytes) {
			t.Errorf("replica %d: page KV capacity %v start %v http %v rss %v; built %v %v %v %v", replica,
				got.KVCapacityTokens, got.ProcessStartTime, got.HTTPRequests, got.ProcessRSSBytes,
				want.KVCapacityTokens, want.ProcessStartTime, want.HTTPRequests, want.ProcessRSSBytes)
		}
		if want.Total.Histograms[catalogue.TTFT].Present() == false && want.EngineKind == catalogue.EngineVLLM {
			t.Errorf("replica %d: no TTFT histogram built: the comparison proves little", replica)
		}
	}
}

// TestPastPageText: the text format's spelling of what Prometheus holds:
// label values escaped, special values, a histogram's series together
// under its TYPE in the order of their bounds.
func TestPastPageText(t *testing.T) {
	at := model.Time(1000)
	series := func(name string, v float64, labels ...string) *model.SampleStream {
		m := model.Metric{model.MetricNameLabel: model.LabelValue(name), "job": "vllm", "instance": "a:1"}
		for i := 0; i+1 < len(labels); i += 2 {
			m[model.LabelName(labels[i])] = model.LabelValue(labels[i+1])
		}
		return &model.SampleStream{Metric: m, Values: []model.SamplePair{{Timestamp: at, Value: model.SampleValue(v)}}}
	}
	stored := model.Matrix{
		series("vllm:time_to_first_token_seconds_count", 7, "model_name", "m"),
		series("vllm:time_to_first_token_seconds_bucket", 7, "model_name", "m", "le", "+Inf"),
		series("vllm:time_to_first_token_seconds_bucket", 3, "model_name", "m", "le", "0.5"),
		series("vllm:time_to_first_token_seconds_sum", 2.5, "model_name", "m"),
		series("vllm:num_requests_running", 4, "model_name", "say \"hi\"\n\\"),
		series("vllm:kv_cache_usage_perc", mathInf(), "model_name", "m"),
		series("vllm:request_success_total", 9, "finished_reason", "stop", "model_name", "m"),
	}
	var w pageWriter
	times := w.prepare(decodedOf(stored), 0, at)
	if len(times) != 1 {
		t.Fatalf("%d pages, want 1", len(times))
	}
	body := w.page(times[0])
	want := strings.Join([]string{
		`# TYPE vllm:kv_cache_usage_perc gauge`,
		`vllm:kv_cache_usage_perc{instance="a:1",job="vllm",model_name="m"} +Inf`,
		`# TYPE vllm:num_requests_running gauge`,
		`vllm:num_requests_running{instance="a:1",job="vllm",model_name="say \"hi\"\n\\"} 4`,
		`# TYPE vllm:request_success_total counter`,
		`vllm:request_success_total{finished_reason="stop",instance="a:1",job="vllm",model_name="m"} 9`,
		`# TYPE vllm:time_to_first_token_seconds histogram`,
		`vllm:time_to_first_token_seconds_bucket{instance="a:1",job="vllm",le="0.5",model_name="m"} 3`,
		`vllm:time_to_first_token_seconds_bucket{instance="a:1",job="vllm",le="+Inf",model_name="m"} 7`,
		`vllm:time_to_first_token_seconds_sum{instance="a:1",job="vllm",model_name="m"} 2.5`,
		`vllm:time_to_first_token_seconds_count{instance="a:1",job="vllm",model_name="m"} 7`,
	}, "\n") + "\n"
	if got := string(body); got != want {
		t.Errorf("page:\n%s\nwant:\n%s", got, want)
	}
	if _, err := page.NewIngester().Ingest(body, PastContentType); err != nil {
		t.Errorf("the page does not parse: %v", err)
	}
}

func mathInf() float64 { return math.Inf(1) }

// The pages of a chunk are handed on in batches of about pastBatchBytes
// of text, oldest first, a batch never splitting the pages of one time
// (a tick after a batch needs every page at or before its last), and
// every page once.
func TestPastPagesComeInBatches(t *testing.T) {
	const targets, times, lines = 100, 120, 12
	p := &Past{index: map[scrapeTarget]int{}}
	var raw model.Matrix
	for i := range targets {
		instance := fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250)
		p.index[scrapeTarget{job: "vllm", instance: instance}] = i
		p.Targets = append(p.Targets, PastTarget{Name: instance, Job: "vllm", Instance: instance})
		for l := range lines {
			ss := &model.SampleStream{Metric: model.Metric{"__name__": "vllm:request_success_total", "job": "vllm", "instance": model.LabelValue(instance),
				"finished_reason": model.LabelValue(fmt.Sprintf("reason-%02d", l)), "model_name": "meta-llama/Llama-3.1-8B-Instruct"}}
			for k := range times {
				// Targets scrape out of step, as they do: each time is one target's.
				ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.Time(1_800_000_000_000 + k*5000 + i), Value: model.SampleValue(k)})
			}
			raw = append(raw, ss)
		}
	}
	var batches [][]PastPage
	total := 0
	err := p.eachPages(decodedOf(raw), nil, 0, model.Time(1<<62), func(pages []PastPage) error {
		batches = append(batches, pages)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(batches) < 2 {
		t.Fatalf("%d batch(es): the pages, over %d MB, were handed on at once", len(batches), pastBatchBytes>>20)
	}
	var last time.Time
	for k, b := range batches {
		size := 0
		for _, pg := range b {
			if pg.Time.Before(last) {
				t.Fatalf("batch %d: a page at %s after one at %s", k, pg.Time, last)
			}
			if len(pg.Body) == 0 {
				t.Fatalf("batch %d: a page of target %d at %s without a body", k, pg.Target, pg.Time)
			}
			last = pg.Time
			size += len(pg.Body)
		}
		total += len(b)
		if k+1 < len(batches) && !batches[k+1][0].Time.After(last) {
			t.Errorf("batch %d ends at %s and the next starts at %s: one time's pages split", k, last, batches[k+1][0].Time)
		}
		if onePage := len(b[0].Body); size > pastBatchBytes+onePage {
			t.Errorf("batch %d: %d bytes of pages, over the %d of a batch and one page more", k, size, pastBatchBytes)
		}
	}
	if total != targets*times {
		t.Errorf("%d pages, want %d (one per target and time)", total, targets*times)
	}
}

// pages is every page of eachPages at once.
func (p *Past) pages(raw, up model.Matrix, after, through model.Time) []PastPage {
	var out []PastPage
	_ = p.eachPages(decodedOf(raw), decodedOf(up), after, through, func(pages []PastPage) error {
		out = append(out, pages...)
		return nil
	})
	return out
}
