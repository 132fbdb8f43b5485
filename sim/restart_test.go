package sim

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	vtoppage "github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
)

// scrapeOK fetches a replica's page over HTTP and parses it.
func scrapeOK(t *testing.T, url string) ([]byte, page) {
	t.Helper()
	status, body, err := get(url, 2*time.Second)
	if err != nil || status != 200 {
		t.Fatalf("status %d, err %v", status, err)
	}
	return body, parsePage(t, body)
}

// series is one value of a page: a counter, a gauge, or a histogram's
// bucket, sum or count, keyed by name and labels.
type series map[string]float64

// flatten lists the page's values of families of the given type.
func (p page) flatten(typ dto.MetricType) series {
	out := series{}
	for name, mf := range p {
		if mf.GetType() != typ {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := name + fmt.Sprint(m.GetLabel())
			switch typ {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[key+"_count"] = float64(h.GetSampleCount())
				out[key+"_sum"] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[fmt.Sprintf("%s_bucket{le=%g}", key, b.GetUpperBound())] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

// A restarted replica is a new process, as a real vLLM's restart is: what
// it serves counts from zero (every counter, every bucket, sum and count),
// its engine is empty, and process_start_time_seconds is the restart time,
// however long the replica went unscraped before it.
func TestRestartServesAFreshProcess(t *testing.T) {
	tests := []struct {
		name  string
		pause time.Duration // unscraped before the restart
	}{
		{"scraped until the restart", 0},
		{"unscraped for longer than the catch-up", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url, clock := startFleet(t)
			clock.Add(2 * time.Minute)
			_, before := scrapeOK(t, url)
			clock.Add(tt.pause + 3*time.Second)
			restartAt := clock.Now()
			if err := f.Replicas()[0].SetFault(FaultRestart); err != nil {
				t.Fatal(err)
			}
			_, after := scrapeOK(t, url)
			checkZeroed(t, before, after)
			if got, want := after.value("process_start_time_seconds"), float64(restartAt.UnixNano())/1e9; got != want {
				t.Errorf("process_start_time_seconds %.3f, want the restart time %.3f (%v off)", got, want, time.Duration((want-got)*1e9))
			}
			clock.Add(5 * time.Second)
			_, later := scrapeOK(t, url)
			checkNearZero(t, before, later)
		})
	}
}

// checkZeroed asserts that every counter and histogram value of after is
// 0 and of before was not all 0, and that the engine is empty.
func checkZeroed(t *testing.T, before, after page) {
	t.Helper()
	for _, typ := range []dto.MetricType{dto.MetricType_COUNTER, dto.MetricType_HISTOGRAM} {
		moved := false
		for key, v := range after.flatten(typ) {
			if v != 0 {
				t.Errorf("%s = %v right after the restart, want 0", key, v)
			}
			moved = moved || before.flatten(typ)[key] > 0
		}
		if !moved {
			t.Errorf("no %v moved before the restart: the test proves nothing", typ)
		}
	}
	for _, g := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} {
		if v := after.value(g); v != 0 {
			t.Errorf("%s = %v right after the restart, want 0 (an empty engine)", g, v)
		}
	}
}

// checkNearZero asserts that five seconds after the restart every counter,
// and every histogram's count and sum, is a small share of what two
// minutes had counted before it. (Buckets are left out: a fresh, empty
// engine is faster, so its low buckets fill faster than the loaded one's
// did; right after the restart they were all 0.)
func checkNearZero(t *testing.T, before, later page) {
	t.Helper()
	for _, typ := range []dto.MetricType{dto.MetricType_COUNTER, dto.MetricType_HISTOGRAM} {
		was := before.flatten(typ)
		for key, v := range later.flatten(typ) {
			if strings.Contains(key, "_bucket{") {
				continue
			}
			if v > 0 && v > 0.25*was[key] {
				t.Errorf("%s = %v five seconds after the restart, %v two minutes in: not counting from zero", key, v, was[key])
			}
		}
	}
}

// Read by vtop's parser and analysis, a window holding the restart gives
// about the steady request rate: the reset costs at most the requests the
// old process finished after its last scrape, never a burst of the new
// process's counts.
func TestRestartKeepsTheWindowRateSane(t *testing.T) {
	f, url, clock := startFleet(t)
	clock.Add(2 * time.Minute)
	in := vtoppage.NewIngester()
	readings := []catalogue.Readings{{Target: "r0"}}
	cfg := analysis.DefaultConfig()
	scrape := func() float64 {
		t.Helper()
		body, _ := scrapeOK(t, url)
		s, err := in.Ingest(body, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		s.Time = clock.Now()
		readings[0].Samples = append(readings[0].Samples, s)
		rep := analysis.Analyze(clock.Now(), readings, cfg, nil)
		return float64(rep.Replicas[0].RequestsPerSecond)
	}
	var steady float64
	for range 8 {
		clock.Add(5 * time.Second)
		steady = scrape()
	}
	clock.Add(2 * time.Second)
	if err := f.Replicas()[0].SetFault(FaultRestart); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		clock.Add(5 * time.Second)
		if got := scrape(); !(got >= 0 && got <= 2*steady) {
			t.Errorf("%ds after the restart: %.2f req/s, steady %.2f", 5*i+3, got, steady)
		}
	}
	if !(steady > 2) {
		t.Errorf("steady rate %.2f req/s: the test proves nothing", steady)
	}
}

// The pages of the faults truncated and garbage are refused by vtop's
// parser with their cause and place, as Prometheus fails such scrapes.
func TestFaultPagesRefusedByParser(t *testing.T) {
	f, url, clock := startFleet(t)
	clock.Add(time.Minute)
	tests := []struct {
		fault Fault
		want  func(body []byte) string
	}{
		{FaultTruncated, func(body []byte) string {
			return fmt.Sprintf("page cut mid-line at byte %d", len(body))
		}},
		{FaultGarbage, func(body []byte) string {
			start := bytes.Index(body, garbage)
			return fmt.Sprintf("parse error at line %d: ", bytes.Count(body[:max(start, 0)], []byte("\n"))+1)
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			if err := f.Replicas()[0].SetFault(tt.fault); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = f.Replicas()[0].SetFault(FaultNone) })
			_, body, _ := get(url, 2*time.Second) // truncated also ends in a transport error
			_, err := vtoppage.NewIngester().Ingest(body, "text/plain; version=0.0.4")
			want := tt.want(body)
			if err == nil || !strings.HasPrefix(err.Error(), want) || !safetext.IsSafe(err.Error()) {
				t.Errorf("%d bytes ending %q: error %v, want a safe one starting %q", len(body), tail(body), err, want)
			}
		})
	}
}
