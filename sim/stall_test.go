package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	vtoppage "github.com/vtop-dev/vtop/page"
)

// A stalled replica is an engine that stopped stepping under an API server
// that still answers: /metrics and /health answer 200; no token is
// generated and no request finishes; running stands where it was and the
// arrivals pile up in waiting. vtop's parser and analysis read it as
// STALLED within seconds. Leaving the fault, the engine steps again.
func TestStallFault(t *testing.T) {
	f, url, clock := startFleet(t)
	r := f.Replicas()[0]
	clock.Add(2 * time.Minute)
	in := vtoppage.NewIngester()
	readings := []catalogue.Readings{{Target: "r0"}}
	cfg := analysis.DefaultConfig()
	var prev *analysis.Report
	read := func() (page, analysis.ReplicaReport) {
		t.Helper()
		body, p := scrapeOK(t, url)
		s, err := in.Ingest(body, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		s.Time = clock.Now()
		readings[0].Samples = append(readings[0].Samples, s)
		rep := analysis.Analyze(clock.Now(), readings, cfg, prev)
		prev = &rep
		return p, rep.Replicas[0]
	}
	for range 30 {
		clock.Add(time.Second)
		read()
	}
	if err := r.SetFault(FaultStall); err != nil {
		t.Fatal(err)
	}
	before, _ := read()
	if before.value("vllm:num_requests_running") == 0 {
		t.Fatal("nothing runs at the stall: the test proves nothing")
	}
	var stalled time.Duration
	var last page
	for i := 1; i <= 20; i++ {
		clock.Add(time.Second)
		p, rep := read()
		if rep.State == analysis.StateStalled && stalled == 0 {
			stalled = time.Duration(i) * time.Second
		}
		last = p
	}
	for _, name := range []string{"vllm:generation_tokens_total", "vllm:prompt_tokens_total", "vllm:request_success_total", "vllm:num_requests_running", "vllm:kv_cache_usage_perc"} {
		if b, a := before.value(name), last.value(name); a != b {
			t.Errorf("%s moved under the stall: %v → %v", name, b, a)
		}
	}
	if b, a := before.value("vllm:num_requests_waiting"), last.value("vllm:num_requests_waiting"); !(a > b) {
		t.Errorf("waiting %v → %v under the stall: the arrivals do not pile up", b, a)
	}
	if status, _, err := get(strings.TrimSuffix(url, "/metrics")+"/health", 2*time.Second); err != nil || status != 200 {
		t.Errorf("/health under the stall: %d %v, want 200", status, err)
	}
	if stalled == 0 || stalled > 15*time.Second {
		t.Errorf("named STALLED after %v of the stall, want within 15s", stalled)
	}
	if err := r.SetFault(FaultNone); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Second)
	if after, _ := read(); !(after.value("vllm:generation_tokens_total") > last.value("vllm:generation_tokens_total")) {
		t.Error("the engine does not step again when the stall ends")
	}
}
