package sim

import (
	"bytes"
	"math"
	"testing"
	"time"
)

// TestLittlesLaw checks L = λW for the running set of a healthy replica over
// ten virtual minutes, once from the simulator's accounting and once from
// what a scraper sees: the running gauge sampled each second, the finish
// rate from request_success_total and the time running from
// request_inference_time_seconds.
func TestLittlesLaw(t *testing.T) {
	if testing.Short() {
		t.Skip("ten virtual minutes")
	}
	f, err := NewFleet(Options{Replicas: 1, Scenario: Healthy, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Replicas()[0]
	f.Advance(time.Minute) // warm up
	const window = 600
	before, statsBefore := scrape(t, r), r.Stats()
	var runningSum float64
	for range window {
		f.Advance(time.Second)
		mfs, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "vllm:num_requests_running" {
				runningSum += mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
	}
	after, statsAfter := scrape(t, r), r.Stats()

	// Inside: ∫running dt ÷ T against Σ time running ÷ T.
	l := (statsAfter.RunningSeconds - statsBefore.RunningSeconds) / window
	lw := (statsAfter.InferenceSeconds - statsBefore.InferenceSeconds) / window
	if l < 10 || math.Abs(l-lw)/l > 0.03 {
		t.Errorf("accounting: mean running %.2f, finish rate × time running %.2f", l, lw)
	}

	// Outside, from the exported metrics.
	meanRunning := runningSum / window
	finishRate := (after.value("vllm:request_success_total") - before.value("vllm:request_success_total")) / window
	inference := after.hist(t, "vllm:request_inference_time_seconds").minus(before.hist(t, "vllm:request_inference_time_seconds"))
	timeRunning := inference.sum / inference.count
	if got := finishRate * timeRunning; math.Abs(meanRunning-got)/meanRunning > 0.05 {
		t.Errorf("metrics: mean running %.2f, finish rate %.3f/s × time running %.2fs = %.2f", meanRunning, finishRate, timeRunning, got)
	}
	// Time running is e2e minus queue time, request by request.
	e2e := after.hist(t, "vllm:e2e_request_latency_seconds").minus(before.hist(t, "vllm:e2e_request_latency_seconds"))
	queue := after.hist(t, "vllm:request_queue_time_seconds").minus(before.hist(t, "vllm:request_queue_time_seconds"))
	if d := e2e.sum/e2e.count - queue.sum/queue.count - timeRunning; math.Abs(d) > 0.05*timeRunning {
		t.Errorf("mean e2e − queue differs from mean time running by %.3fs", d)
	}
	// The calibration: a healthy chat replica runs tens of sequences at
	// roughly 25–40 ms per token.
	itl := after.hist(t, "vllm:inter_token_latency_seconds").minus(before.hist(t, "vllm:inter_token_latency_seconds"))
	if meanITL := itl.sum / itl.count; meanITL < 0.015 || meanITL > 0.06 {
		t.Errorf("mean inter-token latency %.3fs, want 15–60 ms", meanITL)
	}
}

// signature is what a scraper sees of a replica over one virtual minute.
type signature struct {
	running, waitingStart, waitingEnd float64
	waitingMean                       float64
	finished, preemptions             float64
	ttftP99                           float64
}

func observe(t *testing.T, r *Replica, f func(time.Duration)) signature {
	t.Helper()
	before := scrape(t, r)
	var s signature
	const samples = 12
	for range samples {
		f(5 * time.Second)
		p := scrape(t, r)
		s.waitingMean += p.value("vllm:num_requests_waiting") / samples
	}
	after := scrape(t, r)
	s.running = after.value("vllm:num_requests_running")
	s.waitingStart = before.value("vllm:num_requests_waiting")
	s.waitingEnd = after.value("vllm:num_requests_waiting")
	s.finished = after.value("vllm:request_success_total") - before.value("vllm:request_success_total")
	s.preemptions = after.value("vllm:num_preemptions_total") - before.value("vllm:num_preemptions_total")
	s.ttftP99 = after.hist(t, "vllm:time_to_first_token_seconds").minus(before.hist(t, "vllm:time_to_first_token_seconds")).quantile(0.99)
	return s
}

// TestScenarioSignatures plays the mixed fleet (healthy with two engines;
// full with prefix caching and speculative decoding; slow; preempting;
// healthy) plus an idle replica for a few virtual minutes, and checks that
// the exported metrics of each show its state.
func TestScenarioSignatures(t *testing.T) {
	mixed, err := NewFleet(Options{Replicas: 5, Scenario: Mixed, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	idle, err := NewFleet(Options{Replicas: 1, Scenario: Idle, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	mixed.Advance(3 * time.Minute)
	idle.Advance(3 * time.Minute)
	healthy := func(t *testing.T, s signature) {
		if s.waitingEnd > 5 || s.preemptions != 0 || s.ttftP99 >= 1 || s.running >= 200 || s.finished == 0 {
			t.Errorf("not healthy: %+v", s)
		}
	}
	tests := []struct {
		name  string
		r     *Replica
		check func(*testing.T, signature)
	}{
		{"healthy, two engines", mixed.Replicas()[0], healthy},
		{"full", mixed.Replicas()[1], func(t *testing.T, s signature) {
			if s.running < 250 || s.waitingEnd <= s.waitingStart || s.waitingEnd < 50 {
				t.Errorf("not full: %+v", s)
			}
		}},
		{"slow", mixed.Replicas()[2], func(t *testing.T, s signature) {
			if s.ttftP99 <= 1 || s.waitingMean > 0.5 || s.preemptions != 0 {
				t.Errorf("not slow: %+v", s)
			}
		}},
		{"preempting", mixed.Replicas()[3], func(t *testing.T, s signature) {
			if s.preemptions <= 0 {
				t.Errorf("not preempting: %+v", s)
			}
		}},
		{"healthy", mixed.Replicas()[4], healthy},
		{"idle", idle.Replicas()[0], func(t *testing.T, s signature) {
			if s.finished != 0 || s.running != 0 || s.waitingEnd != 0 || !math.IsNaN(s.ttftP99) {
				t.Errorf("not idle: %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := observe(t, tt.r, tt.r.Advance)
			t.Logf("%+v", s)
			tt.check(t, s)
		})
	}
}

// TestSpecDecodeAndPrefixCache checks the counters of replica 1 of the
// mixed fleet: acceptance below 1, hits below queries, cached prompt tokens
// equal to hits.
func TestSpecDecodeAndPrefixCache(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 2, Scenario: Mixed, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Minute)
	p := scrape(t, f.Replicas()[1])
	drafts := p.value("vllm:spec_decode_num_drafts_total")
	draftTokens := p.value("vllm:spec_decode_num_draft_tokens_total")
	accepted := p.value("vllm:spec_decode_num_accepted_tokens_total")
	pos0 := p.value("vllm:spec_decode_num_accepted_tokens_per_pos_total", "position", "0")
	pos2 := p.value("vllm:spec_decode_num_accepted_tokens_per_pos_total", "position", "2")
	if drafts == 0 || draftTokens != 3*drafts || accepted <= 0 || accepted >= draftTokens || pos0 <= pos2 {
		t.Errorf("spec decode: drafts %g, draft tokens %g, accepted %g, pos0 %g, pos2 %g", drafts, draftTokens, accepted, pos0, pos2)
	}
	if alpha := accepted / draftTokens; alpha < 0.4 || alpha > 0.7 {
		t.Errorf("acceptance rate %.2f, want ≈ (0.7+0.49+0.34)/3 = 0.51", alpha)
	}
	queries, hits := p.value("vllm:prefix_cache_queries_total"), p.value("vllm:prefix_cache_hits_total")
	if queries == 0 || hits <= 0 || hits >= queries {
		t.Errorf("prefix cache: queries %g, hits %g", queries, hits)
	}
	// Without the features the counters stay at 0 (registered, as in vLLM).
	p0 := scrape(t, f.Replicas()[0])
	if _, ok := p0["vllm:spec_decode_num_drafts_total"]; ok {
		t.Error("spec decode counters on a replica without speculative decoding")
	}
	if p0.value("vllm:prefix_cache_hits_total") != 0 {
		t.Error("prefix cache hits on a replica without prefix caching")
	}
}

// TestDeterministic checks that a seed fixes every byte of every page after
// the same virtual time, and that another seed changes them.
func TestDeterministic(t *testing.T) {
	render := func(seed uint64) [][]byte {
		f, err := NewFleet(Options{Replicas: 4, Scenario: Mixed, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		f.Advance(90 * time.Second)
		var pages [][]byte
		for _, r := range f.Replicas() {
			b, err := r.Render(textFormat)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, b)
		}
		return pages
	}
	a, b, c := render(42), render(42), render(43)
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("replica %d: same seed, different pages", i)
		}
		if bytes.Equal(a[i], c[i]) {
			t.Errorf("replica %d: different seeds, same page", i)
		}
	}
}

// TestIdleCostsNothing checks that an idle replica jumps over time instead
// of stepping through it.
func TestIdleCostsNothing(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Idle})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() { f.Advance(time.Hour) })
	if allocs > 0 {
		t.Errorf("advancing an idle replica an hour allocates %v times", allocs)
	}
	if s := f.Replicas()[0].Stats(); s.Uptime != 10*time.Hour+time.Hour || s.Finished != 0 {
		t.Errorf("idle replica: %+v", s)
	}
}

func TestBadOptions(t *testing.T) {
	tests := []Options{
		{Scenario: "nope"},
		{VLLMVersion: "v2"},
		{Replicas: -1},
		{Configure: func(_ int, c *ReplicaConfig) { c.MaxNumSeqs = 0 }},
		{Configure: func(_ int, c *ReplicaConfig) { c.SpecTokens, c.SpecAcceptance = 2, 1 }},
	}
	for i, o := range tests {
		if _, err := NewFleet(o); err == nil {
			t.Errorf("case %d: NewFleet(%+v) succeeded", i, o)
		}
	}
}
