package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestTwoReadingsWorkedExample is `vtop analyze before.txt after.txt
// --seconds 60`: two scrapes 60 s apart evaluated with a 60 s window give
// the plain differences ÷ 60 (48 running, 6 finished/s, 1,800 tokens/s,
// 8 s each).
func TestTwoReadingsWorkedExample(t *testing.T) {
	reading := func(at time.Time, stop, gen, ttftSum, ttftCount float64) catalogue.Sample {
		s := catalogue.NewSeries()
		s.Scalars[catalogue.Running], s.Scalars[catalogue.Waiting] = 48, 0
		s.Finished[catalogue.FinishStop] = stop
		s.Scalars[catalogue.GenerationTokens] = gen
		s.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: []float64{inf}, Counts: []float64{ttftCount}, Sum: ttftSum, Count: ttftCount}
		return catalogue.Sample{Time: at, HasVLLM: true, Total: s, KVCapacityTokens: math.NaN(), ProcessStartTime: math.NaN(),
			ProcessRSSBytes: math.NaN(), GCCollections: math.NaN(), HTTPRequests: math.NaN()}
	}
	samples := []catalogue.Sample{
		reading(t0, 12_040, 3_612_000, 2_516, 12_040),
		reading(t0.Add(time.Minute), 12_400, 3_720_000, 2_696, 12_400),
	}
	cfg := DefaultConfig()
	cfg.Window = time.Minute
	r := analyzeOne(samples, t0.Add(time.Minute), cfg)
	checks := []struct {
		name      string
		got, want Num
	}{
		{"requests/s", r.RequestsPerSecond, 6},
		{"stop/s", r.FinishedPerSecond.Stop, 6},
		{"generation tokens/s", r.GenerationTokensPerSecond, 1800},
		{"time running", r.TimeRunningSeconds, 8},
		{"mean TTFT", r.TTFT.Mean, 0.5},
		{"success rate", r.SuccessRate, 1},
		{"running", r.Running, 48},
	}
	for _, c := range checks {
		if !sameFloat(c.got.Float(), float64(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.WarmingUp {
		t.Error("two readings: not warming up")
	}
}

// TestWindowIsClosed: a sample exactly at now-window is in the window, so
// two samples exactly N seconds apart give the plain difference.
func TestWindowIsClosed(t *testing.T) {
	s := newServer()
	samples, now := run(s, 3, 10*time.Second, finishing(60, chat))
	cfg := DefaultConfig()
	cfg.Window = 30 * time.Second
	if r := analyzeOne(samples, now, cfg); !sameFloat(r.RequestsPerSecond.Float(), 6) {
		t.Errorf("requests/s = %v, want 6 (no extrapolation)", r.RequestsPerSecond)
	}
	cfg.Window = 29 * time.Second // the first sample drops out: 3 samples over 20 s, extrapolated by 9 s
	if r := analyzeOne(samples, now, cfg); !sameFloat(r.RequestsPerSecond.Float(), 6) {
		t.Errorf("requests/s over 29s = %v, want 6", r.RequestsPerSecond)
	}
}

// slowChat is 30 s of a server at low load whose long prompts put its p99
// TTFT over the SLO.
func slowChat() ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running = 8
	long := chat
	long.prompt, long.ttft, long.prefill = 6000, 2.4, 2.3
	return run(s, 30, time.Second, finishing(1, long))
}

// steadyChat is a healthy replica: 48 running, 6 requests/s, scraped every
// second for 30 s.
func steadyChat() ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running, s.kv = 48, 0.3
	return run(s, 30, time.Second, finishing(6, chat))
}

func TestStates(t *testing.T) {
	cfg := DefaultConfig()
	tests := []struct {
		name       string
		samples    func() ([]catalogue.Sample, time.Time)
		want       State
		wantReason string
		wantAction string
	}{
		{"healthy", steadyChat, StateHealthy, "running 48, waiting 0, 6 req/s", ""},
		{"idle", func() ([]catalogue.Sample, time.Time) { return run(newServer(), 30, time.Second) }, StateIdle, "no request finished", ""},
		{"full", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv, s.waiting = 256, 0.6, 41
			return run(s, 30, time.Second, finishing(12, chat), queueing(41, 1.8))
		}, StateFull, "waiting 86 → 95 over 5s, running 256 (the most seen)",
			"scale on vllm:num_requests_waiting with target 12 per replica (a 1s queue at the 12 successful req/s a full replica finishes)"},
		{"full under the most seen running", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv, s.waiting = 256, 0.6, 41
			return run(s, 30, time.Second, finishing(12, chat), queueing(41, 1.8), func(s *server, i int) {
				if i >= 20 {
					s.running = 200 // a limit below the cap holds the batch
				}
			})
		}, StateFull, "batch cap 256: the most running seen since 14:00:00 (the page does not give max_num_seqs); under it, the token budget of a step or the KV blocks hold the batch",
			"add replicas"},
		{"full and KV-bound", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv, s.waiting = 180, 0.97, 10
			return run(s, 30, time.Second, finishing(10, chat), queueing(10, 1))
		}, StateFull, "(KV-bound, KV cache at 97%)", "add replicas"},
		{"preempting", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 256, 0.99
			return run(s, 30, time.Second, finishing(6, chat), preempting(2))
		}, StatePreempting, "60 preemptions over 30s (2/s), KV cache at 99%",
			"cap max_num_seqs at 537 (what the KV cache holds: 430,000 tokens ÷ 800 tokens per request), or add VRAM / replicas; preemption is recomputing 1,300 tokens/s"},
		{"slow TTFT from long prompts", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 8
			long := chat
			long.prompt, long.ttft, long.prefill = 6000, 2.4, 2.3
			return run(s, 30, time.Second, finishing(1, long))
		}, StateSlow, "p99 TTFT 1s–2.5s over the 1s SLO", "long prompts (mean 6,000 tokens)"},
		{"slow ITL with prefill", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running = 30
			spiky := chat
			spiky.itl = 0.18
			return run(s, 30, time.Second, finishing(27, chat), finishing(3, spiky))
		}, StateSlow, "p99 ITL 195ms over the 100ms SLO, p50 38.9ms within it", "prefill interference"},
		{"stale: running but no counter moves", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.finish(100, chat)
			s.running = 12
			return run(s, 30, time.Second)
		}, StateStale, "running 12 but nothing on the page moved over 30s (31 scrapes), gauges included", "PROMETHEUS_MULTIPROC_DIR"},
		{"stale: all zero while HTTP requests rise", func() ([]catalogue.Sample, time.Time) {
			return run(newServer(), 30, time.Second, func(s *server, _ int) { s.httpRequests += 5 })
		}, StateStale, "every engine value is 0 while http_requests_total rose by 150", "PROMETHEUS_MULTIPROC_DIR"},
		{"down: scrape failing", func() ([]catalogue.Sample, time.Time) {
			samples, now := steadyChat()
			for i := 28; i <= 30; i++ {
				samples[i] = catalogue.Sample{Time: samples[i].Time, Err: "dial tcp 10.0.0.7:8000: connect: connection refused"}
			}
			return samples, now.Add(5 * time.Second)
		}, StateDown, "scrape failing since 14:00:28 (3 failed in a row): dial tcp", "check the inference server process / pod behind gpu-a:8000"},
		{"down: no inference-engine metrics", func() ([]catalogue.Sample, time.Time) {
			samples, now := steadyChat()
			samples[30] = catalogue.Sample{Time: samples[30].Time, Total: catalogue.NewSeries(), KVCapacityTokens: math.NaN()}
			return samples, now
		}, StateDown, noEngineReason, "--disable-log-stats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			r := analyzeOne(samples, now, cfg)
			if r.State != tt.want {
				t.Fatalf("state = %v, want %v; reasons %q", r.State, tt.want, r.Reasons)
			}
			if !strings.Contains(strings.Join(r.Reasons, "\n"), tt.wantReason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.wantReason)
			}
			if !strings.Contains(r.Action, tt.wantAction) {
				t.Errorf("action %q lacks %q", r.Action, tt.wantAction)
			}
		})
	}
}

// A DOWN replica shows the error, its last good scrape and its last
// gauges; the action points at the replica's own server. (A source that
// fails as a whole, such as Prometheus, is the report's, not a replica's:
// Report.SetSource.)
func TestDownReportsErrorAndLastGood(t *testing.T) {
	tests := []struct {
		name       string
		failed     catalogue.Sample
		wantAction string
		notAction  string
	}{
		{"the replica failed", catalogue.Sample{Err: "HTTP 503 Service Unavailable"},
			"check the inference server process / pod behind gpu-a:8000: HTTP 503 Service Unavailable", ""},
	}
	for _, tt := range tests {
		samples, now := steadyChat()
		tt.failed.Time = samples[30].Time
		samples[30] = tt.failed
		r := analyzeOne(samples, now.Add(2*time.Second), DefaultConfig())
		if r.State != StateDown || r.Error != "HTTP 503 Service Unavailable" {
			t.Errorf("%s: %s, error = %q, want DOWN with the scrape's error", tt.name, r.State, r.Error)
		}
		if want := "last good scrape at 14:00:29, 3s ago"; !strings.Contains(strings.Join(r.Reasons, "\n"), want) {
			t.Errorf("%s: reasons %q lack %q", tt.name, r.Reasons, want)
		}
		if !r.Running.Known() {
			t.Errorf("%s: a down replica still shows its last known gauges", tt.name)
		}
		if r.Action != tt.wantAction || (tt.notAction != "" && strings.Contains(r.Action, tt.notAction)) {
			t.Errorf("%s: action %q, want %q", tt.name, r.Action, tt.wantAction)
		}
	}
}

func TestWarmingUp(t *testing.T) {
	samples, _ := steadyChat()
	r := analyzeOne(samples[:1], samples[0].Time, DefaultConfig())
	if !r.WarmingUp {
		t.Error("one sample: warming up")
	}
	if r.Running != 48 {
		t.Errorf("gauges are shown while warming up: running = %v", r.Running)
	}
	if r.RequestsPerSecond.Known() || r.TTFT.P99.Known() {
		t.Errorf("rates need two samples: requests/s %v, p99 %v", r.RequestsPerSecond, r.TTFT.P99)
	}
}

func TestHysteresis(t *testing.T) {
	cfg := DefaultConfig() // hysteresis 2
	healthy, now := steadyChat()
	s := newServer()
	s.running, s.waiting = 256, 41
	full, _ := run(s, 30, time.Second, finishing(12, chat), queueing(41, 1.8))
	eval := func(samples []catalogue.Sample, prev *Report) Report {
		return Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, prev)
	}
	first := eval(healthy, nil)
	if first.Replicas[0].State != StateHealthy {
		t.Fatalf("first = %v", first.Replicas[0].State)
	}
	// A queue in each of the newest readings proves FULL: shown at once,
	// as DOWN is, with its event.
	second := eval(full, &first)
	if got := second.Replicas[0]; got.State != StateFull {
		t.Fatalf("a queue that persisted over the newest readings is FULL at once: got %v pending %v×%d", got.State, got.Pending, got.PendingCount)
	}
	if len(second.Events) == 0 || !strings.HasPrefix(second.Events[0].Text, "FULL: waiting 86 → 95 over 5s") {
		t.Errorf("state change event: %v", second.Events)
	}
	// Leaving a problem is held: one healthy evaluation keeps FULL, with
	// today's figures and the pending note, not the queue it had.
	back := eval(healthy, &second)
	if got := back.Replicas[0]; got.State != StateFull || got.Pending != StateHealthy || got.PendingCount != 1 {
		t.Fatalf("one healthy reading must not flip back: %v pending %v×%d", got.State, got.Pending, got.PendingCount)
	}
	if got := back.Replicas[0].Reasons; len(got) != 2 || !strings.HasPrefix(got[0], "running 48, waiting 0") || !strings.HasPrefix(got[1], "pending: healthy (1 of 2 readings)") {
		t.Errorf("a held state says today's figures and what is pending: %q", got)
	}
	if got := eval(healthy, &back).Replicas[0].State; got != StateHealthy {
		t.Errorf("two healthy readings: got %v", got)
	}
	// HEALTHY is never shown beside a p99 over its SLO: from HEALTHY,
	// SLOW shows at once (leaving it is held, and its threshold has a
	// margin); from another state it must hold twice.
	slow, _ := slowChat()
	if got := eval(slow, &first).Replicas[0]; got.State != StateSlow {
		t.Errorf("a p99 over the SLO at a HEALTHY replica: %v pending %v, want SLOW at once", got.State, got.Pending)
	}
	if got := eval(slow, &second).Replicas[0]; got.State != StateFull || got.Pending != StateSlow {
		t.Errorf("one SLOW reading after FULL must not flip the state: %v pending %v", got.State, got.Pending)
	}

	downSamples := append([]catalogue.Sample(nil), healthy...)
	downSamples[30] = catalogue.Sample{Time: downSamples[30].Time, Err: "connection refused"}
	if got := eval(downSamples, &first).Replicas[0].State; got != StateDown {
		t.Errorf("DOWN shows at once: got %v", got)
	}
	cfg.Hysteresis = 1
	if got := eval(full, &first).Replicas[0].State; got != StateFull {
		t.Errorf("hysteresis 1 is off: got %v", got)
	}
}

func TestCounterResets(t *testing.T) {
	cfg := DefaultConfig()
	t.Run("all counters reset at once", func(t *testing.T) {
		s := newServer()
		s.running = 48
		s.finish(1_000_000, chat) // a long-lived server
		samples, now := run(s, 30, time.Second, finishing(6, chat), func(s *server, i int) {
			if i == 15 { // restart: everything from zero, new start time
				fresh := newServer()
				fresh.running, fresh.startTime = 48, s.startTime+900
				*s = *fresh
			}
		})
		r := analyzeOne(samples, now, cfg)
		if !r.Restarted {
			t.Error("restart not noticed")
		}
		if got := r.RequestsPerSecond.Float(); got < 0 || got > 6.5 {
			t.Errorf("requests/s = %v, want about 6 (non-negative, not inflated)", got)
		}
		if got := r.TTFT.P99.Float(); !(got > 0.25 && got <= 0.5) {
			t.Errorf("p99 TTFT = %v, want within the 0.5 s bucket", got)
		}
	})
	t.Run("one finished_reason series resets alone", func(t *testing.T) {
		s := newServer()
		s.running = 48
		s.finished[catalogue.FinishAbort] = 5_000
		samples, now := run(s, 30, time.Second, finishing(6, chat), func(s *server, i int) {
			if i == 10 {
				s.finished[catalogue.FinishAbort] = 0
			}
		})
		r := analyzeOne(samples, now, cfg)
		if !r.Restarted {
			t.Error("reset not noticed")
		}
		if got := r.FinishedPerSecond.Abort.Float(); got != 0 {
			t.Errorf("abort/s = %v, want 0: a reset is not 5,000 aborts", got)
		}
		if got := r.RequestsPerSecond.Float(); !sameFloat(got, 6) {
			t.Errorf("requests/s = %v, want 6", got)
		}
	})
	t.Run("histograms that leave the page are no reset", func(t *testing.T) {
		s := newServer()
		s.running = 48
		s.finish(1_000_000, chat)
		samples, now := run(s, 30, time.Second, finishing(6, chat), func(s *server, i int) {
			s.noHistograms = i >= 15 // the exporter stops writing them
		})
		r := analyzeOne(samples, now, cfg)
		if r.Restarted {
			t.Errorf("restart reported (%v): a histogram that is gone did not drop to zero", r.RestartedAt)
		}
		if got := r.RequestsPerSecond.Float(); !sameFloat(got, 6) {
			t.Errorf("requests/s = %v, want 6", got)
		}
	})
}

// TestGaugesAloneAreNotStale: a page with work running and no counters at
// all (no finish reasons, tokens, preemptions or histograms) has no counter
// that could stand still, so it is not STALE.
func TestGaugesAloneAreNotStale(t *testing.T) {
	s := newServer()
	s.running = 18
	s.noHistograms = true
	s.prompt, s.gen, s.preemptions, s.httpRequests = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	for reason := range s.finished {
		s.finished[reason] = math.NaN()
	}
	samples, now := run(s, 30, time.Second)
	r := analyzeOne(samples, now, DefaultConfig())
	if r.State == StateStale {
		t.Errorf("state %v with no counter exported; reasons %q", r.State, r.Reasons)
	}
	if r.RequestsPerSecond.Known() {
		t.Errorf("requests/s = %v, want n/a", r.RequestsPerSecond)
	}
}

func TestNotExportedIsNA(t *testing.T) {
	samples, now := steadyChat()
	r := analyzeOne(samples, now, DefaultConfig())
	for name, n := range map[string]Num{
		"prefix hit rate": r.PrefixCacheHitRate, "spec acceptance": r.SpecDecodeAcceptanceRate,
		"accepted per draft": r.SpecDecodeAcceptedPerDraft, "gc/s": r.GCPerSecond,
	} {
		if n.Known() {
			t.Errorf("%s = %v, want n/a", name, n)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"prefix_cache_hit_rate":null`) {
		t.Errorf("JSON lacks a null hit rate: %s", b)
	}

	s := newServer()
	s.running, s.prefixQueries, s.prefixHits = 48, 0, 0
	s.specDrafts, s.specDraftToks, s.specAccepted = 0, 0, 0
	samples, now = run(s, 30, time.Second, finishing(6, chat), func(s *server, _ int) {
		s.prefixQueries += 3000
		s.prefixHits += 1200
		s.specDrafts += 100
		s.specDraftToks += 300
		s.specAccepted += 210
	})
	r = analyzeOne(samples, now, DefaultConfig())
	if !sameFloat(r.PrefixCacheHitRate.Float(), 0.4) || !sameFloat(r.SpecDecodeAcceptanceRate.Float(), 0.7) ||
		!sameFloat(r.SpecDecodeAcceptedPerDraft.Float(), 2.1) {
		t.Errorf("hit rate %v, acceptance %v, per draft %v; want 0.4, 0.7, 2.1",
			r.PrefixCacheHitRate, r.SpecDecodeAcceptanceRate, r.SpecDecodeAcceptedPerDraft)
	}
}

func TestFigures(t *testing.T) {
	s := newServer()
	s.running = 48
	samples, now := run(s, 30, time.Second, finishing(5, chat), finishing(1, request{reason: catalogue.FinishLength, prompt: 500, gen: 300,
		ttft: 3, itl: 0.027, e2e: 9, queue: 0.05, prefill: 0.45, decode: 8}))
	cfg := DefaultConfig()
	cfg.SLOE2E = 10 * time.Second
	r := analyzeOne(samples, now, cfg)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"requests/s", r.RequestsPerSecond.Float(), 6},
		{"success rate", r.SuccessRate.Float(), 5.0 / 6},
		{"length share", r.LengthShare.Float(), 1.0 / 6},
		{"prompt tokens/s", r.PromptTokensPerSecond.Float(), 3000},
		{"I/O ratio", r.IORatio.Float(), 500.0 / 300},
		{"mean prompt", r.MeanPromptTokens.Float(), 500},
		{"mean generation", r.MeanGenerationTokens.Float(), 300},
		{"max seqs the KV holds", r.MaxSeqsKVHolds.Float(), 537},
		{"arrivals", r.ArrivalsPerSecond.Float(), 6},
		{"efficiency", r.Efficiency.Float(), 1},
		{"waiting growth", r.WaitingGrowth.Float(), 0},
		{"goodput (TTFT ≤ 1 s and e2e ≤ 10 s)", r.Goodput.Float(), 5.0 / 6},
		{"TTFT p50 in the (0.25, 0.5] bucket", r.TTFT.P50.Float(), 0.25 + 0.25*(3.0/5)},
		{"TTFT p99 in the (2.5, 5] bucket", r.TTFT.P99.Float(), 2.5 + 2.5*(0.99*6-5)},
		{"preemptions/s", r.PreemptionsPerSecond.Float(), 0},
		{"recomputed tokens/s", r.RecomputedTokensPerSecond.Float(), 0},
	}
	for _, c := range checks {
		if !sameFloat(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.Point.PromptLengthBounds == nil || r.Point.PromptLengthDeltas[8] != 6 {
		t.Errorf("prompt length column: %v (want 6 requests in the ≤500 bucket)", r.Point.PromptLengthDeltas)
	}
	for j, d := range r.Point.PromptLengthDeltas {
		if j != 8 && d != 0 {
			t.Errorf("bucket %d: %v requests, want 0", j, d)
		}
	}
}

func TestEngines(t *testing.T) {
	s := newServer()
	s.running, s.engines, s.engineRunning = 48, []string{"0", "1"}, []float64{40, 8}
	samples, now := run(s, 30, time.Second, finishing(6, chat))
	r := analyzeOne(samples, now, DefaultConfig())
	if len(r.Engines) != 2 {
		t.Fatalf("engines = %d, want 2", len(r.Engines))
	}
	if r.Engines[0].Engine != "0" || r.Engines[0].Running != 40 || r.Engines[1].Running != 8 {
		t.Errorf("engine gauges: %+v", r.Engines)
	}
	if !sameFloat(r.Engines[1].RequestsPerSecond.Float(), 3) {
		t.Errorf("engine 1 requests/s = %v, want 3", r.Engines[1].RequestsPerSecond)
	}
	if single, _ := steadyChat(); analyzeOne(single, now, DefaultConfig()).Engines != nil {
		t.Error("a single-engine server has no engine reports")
	}
}

// TestJSONFieldNames pins the names scripts read.
func TestJSONFieldNames(t *testing.T) {
	samples, now := steadyChat()
	rep := Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, DefaultConfig(), nil)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["window_seconds"]; !ok {
		t.Error("no window_seconds")
	}
	fleet := doc["fleet"].(map[string]any)
	if _, ok := fleet["advice"]; !ok {
		t.Error("no fleet.advice")
	}
	replica := doc["replicas"].([]any)[0].(map[string]any)
	for _, key := range []string{"target", "model", "state", "reasons", "action", "error", "running", "waiting",
		"kv_cache_usage", "requests_per_second", "finished_per_second", "success_rate", "prompt_tokens_per_second",
		"generation_tokens_per_second", "time_running_seconds", "preemptions_per_second", "prefix_cache_hit_rate",
		"spec_decode_acceptance_rate", "ttft_seconds", "itl_seconds", "e2e_seconds", "queue_seconds",
		"prefill_seconds", "decode_seconds"} {
		if _, ok := replica[key]; !ok {
			t.Errorf("replicas[] lacks %q", key)
		}
	}
	for _, key := range []string{"stop", "length", "abort", "error"} {
		if _, ok := replica["finished_per_second"].(map[string]any)[key]; !ok {
			t.Errorf("finished_per_second lacks %q", key)
		}
	}
	for _, key := range []string{"mean", "p50", "p90", "p99"} {
		if _, ok := replica["ttft_seconds"].(map[string]any)[key]; !ok {
			t.Errorf("ttft_seconds lacks %q", key)
		}
	}
	if replica["state"] != "healthy" {
		t.Errorf("state = %v", replica["state"])
	}

	s := newServer()
	s.running, s.engines = 48, []string{"0", "1"}
	samples, now = run(s, 3, time.Second, finishing(6, chat))
	b, _ = json.Marshal(Analyze(now, []catalogue.Readings{{Target: "x", Samples: samples}}, DefaultConfig(), nil))
	if !strings.Contains(string(b), `"engines":[{"engine":"0"`) {
		t.Errorf("engines missing from JSON: %s", b)
	}
}

// Just after vtop starts, the window reaches back before the first scrape:
// rates are over the seconds vtop has watched, not diluted by the rest.
func TestWindowStartsAtFirstGoodScrape(t *testing.T) {
	tests := []struct {
		name    string
		samples func() ([]catalogue.Sample, time.Time)
		want    float64
	}{
		{"5 s watched, 30 s window", func() ([]catalogue.Sample, time.Time) {
			return run(newServer(), 5, time.Second, finishing(6, chat))
		}, 6},
		{"first scrapes failed, then 4 s of good ones", func() ([]catalogue.Sample, time.Time) {
			good, now := run(newServer(), 4, time.Second, finishing(6, chat))
			failed := []catalogue.Sample{{Time: t0.Add(-3 * time.Second), Err: "connection refused"}, {Time: t0.Add(-2 * time.Second), Err: "connection refused"}}
			return append(failed, good...), now
		}, 6},
		{"history older than the window: Prometheus's extrapolation over the window", func() ([]catalogue.Sample, time.Time) {
			return run(newServer(), 60, time.Second, finishing(6, chat))
		}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			r := analyzeOne(samples, now, DefaultConfig())
			if got := r.RequestsPerSecond.Float(); !sameFloat(got, tt.want) {
				t.Errorf("requests/s = %v, want %v", got, tt.want)
			}
		})
	}
}

// Requests that wait one scheduler step are not a full server: FULL needs a
// queue in every reading.
func TestFullNeedsPersistentQueue(t *testing.T) {
	blips := func(s *server, i int) { s.waiting = float64((i % 2) * 3) }
	s := newServer()
	s.running, s.kv = 115, 0.3
	samples, now := run(s, 30, time.Second, finishing(6, chat), blips)
	if r := analyzeOne(samples, now, DefaultConfig()); r.State == StateFull {
		t.Errorf("waiting 0,3,0,3… with running flat at 115 is %v (%q), want not full", r.State, r.Reasons)
	}
	tests := []struct {
		scrapes int
		waiting float64
		want    bool
	}{
		{2, 3, false},                // a short queue in two readings may be chance
		{fullMinSamples, 3, true},    // a short queue that persists
		{2, obviousQueue, true},      // a long queue in both readings
		{2, obviousQueue - 1, false}, // just short of it
		{1, 400, false},              // one reading is no trend
	}
	for _, tt := range tests {
		s = newServer()
		s.running, s.kv, s.waiting = 256, 0.6, tt.waiting
		samples, now = run(s, tt.scrapes-1, time.Second, finishing(12, chat), queueing(tt.waiting, 1))
		r := analyzeOne(samples, now, DefaultConfig())
		if got := r.State == StateFull; got != tt.want {
			t.Errorf("%d scrapes, waiting from %v: %v (%q), want full = %v", tt.scrapes, tt.waiting, r.State, r.Reasons, tt.want)
		}
	}
}

// A replica that is full when vtop starts is shown FULL as soon as the
// evidence allows (two scrapes of a long queue), not a hysteresis later.
func TestFirstStateIsNotHeldBack(t *testing.T) {
	s := newServer()
	s.running, s.kv, s.waiting = 256, 0.6, 41
	samples, _ := run(s, 10, time.Second, finishing(12, chat), queueing(41, 2))
	cfg := DefaultConfig()
	var prev *Report
	firstFull := -1
	for i := range samples {
		r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples[:i+1]}}, cfg, prev)
		prev = &r
		if r.Replicas[0].State == StateFull && firstFull < 0 {
			firstFull = i
		}
	}
	if firstFull != 1 {
		t.Errorf("FULL (41 waiting) first shown at scrape %d, want 2 (a long queue in two readings)", firstFull+1)
	}
}

// TestStatedBatchCap: where the page states the batch cap (TensorRT-LLM's
// max_num_active_requests, Triton's max), the batch cap is the stated
// one, and FULL's reasons say so; elsewhere, and where the statement is
// not the cap of the running the page counts (a Dynamo frontend states a
// worker's cap; running beyond a stated cap), it is the most running seen.
func TestStatedBatchCap(t *testing.T) {
	tests := []struct {
		name       string
		kind       catalogue.EngineKind
		stated     float64 // NaN: the page states none
		running    float64
		wantCap    float64
		wantStated bool
		wantReason []string
	}{
		{"TensorRT-LLM at its stated cap", catalogue.EngineTRTLLM, 256, 256, 256, true, []string{
			"running 256 (at the stated cap of 256)",
			"batch cap 256, as the page states it (trtllm_max_num_active_requests or nv_trt_llm_request_metrics{request_type=\"max\"})"}},
		{"TensorRT-LLM under its stated cap: the most seen is not it", catalogue.EngineTRTLLM, 512, 256, 512, true, []string{
			"running 256 (under the stated 512)",
			"batch cap 512, as the page states it (trtllm_max_num_active_requests or nv_trt_llm_request_metrics{request_type=\"max\"}); under it, the token budget of a step or the KV blocks hold the batch"}},
		{"a Dynamo frontend states a worker's cap", catalogue.EngineDynamo, 64, 256, 256, false, []string{
			"running 256 (the most seen)", "batch cap 256: the most running seen since"}},
		{"running beyond a stated cap", catalogue.EngineTRTLLM, 128, 256, 256, false, []string{
			"running 256 (the most seen)", "batch cap 256: the most running seen since"}},
		{"vLLM states none", catalogue.EngineVLLM, math.NaN(), 256, 256, false, []string{
			"running 256 (the most seen)", "batch cap 256: the most running seen since 14:00:00 (the page does not give max_num_seqs)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer()
			s.running, s.kv, s.waiting = tt.running, 0.6, 41
			samples, now := run(s, 30, time.Second, finishing(12, chat), queueing(41, 1.8))
			for i := range samples {
				samples[i].EngineKind = tt.kind
				samples[i].Total.Scalars[catalogue.MaxRunning] = tt.stated
			}
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != StateFull {
				t.Fatalf("state %v, want FULL: %q", r.State, r.Reasons)
			}
			if !sameFloat(r.BatchCap.Float(), tt.wantCap) || r.BatchCapStated != tt.wantStated {
				t.Errorf("batch cap %v (stated %v), want %v (stated %v)", r.BatchCap, r.BatchCapStated, tt.wantCap, tt.wantStated)
			}
			reasons := strings.Join(r.Reasons, "\n")
			for _, want := range tt.wantReason {
				if !strings.Contains(reasons, want) {
					t.Errorf("reasons %q lack %q", r.Reasons, want)
				}
			}
		})
	}
}
