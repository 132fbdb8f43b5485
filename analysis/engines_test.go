package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// asEngine makes the samples those of another engine's page, keeping only
// the figures that engine exports (catalogue.Reads and Derivations): what
// the parser leaves of its page.
func asEngine(samples []catalogue.Sample, k catalogue.EngineKind) []catalogue.Sample {
	for i := range samples {
		s := &samples[i]
		s.HasVLLM, s.EngineKind = k == catalogue.EngineVLLM, k
		for sc := range catalogue.NumScalars {
			if !k.Exports(catalogue.ScalarFigure(sc)) {
				s.Total.Scalars[sc] = math.NaN()
			}
		}
		for h := range catalogue.NumHistograms {
			if !k.Exports(catalogue.HistogramFigure(h)) {
				s.Total.Histograms[h] = catalogue.Buckets{}
			}
		}
		for r := range catalogue.NumFinishReasons {
			s.Total.Finished[r] = math.NaN()
		}
		if k.Exports(catalogue.ScalarFigure(catalogue.FinishedRequests)) {
			s.Total.Scalars[catalogue.FinishedRequests] = float64(i) * 3
		}
	}
	return samples
}

// TestEnginesJudgedOnTheirEvidence: another engine's page is judged, not
// DOWN; a state its page cannot show is not judged and the reasons say
// so; what is missing from the evidence of the state judged is said.
func TestEnginesJudgedOnTheirEvidence(t *testing.T) {
	busy := func() ([]catalogue.Sample, time.Time) {
		s := newServer()
		s.running, s.kv = 30, 0.2
		return run(s, 10, time.Second, finishing(3, chat), preempting(1))
	}
	tests := []struct {
		name    string
		engine  catalogue.EngineKind
		derived catalogue.FigureSet // the figures the parser derived
		state   State
		reasons []string
		not     string
	}{
		// vLLM exports the preemption counter: PREEMPTING.
		{"vLLM", catalogue.EngineVLLM, 0, StatePreempting, []string{"10 preemptions over 10s"}, "partial evidence"},
		// SGLang before 2026-05 counts retractions when a request
		// finishes (sglang:num_retractions, from which the parser derives
		// its preemptions); current SGLang as they happen
		// (sglang:num_retracted_requests_total, read as such).
		{"SGLang before 2026-05", catalogue.EngineSGLang, 1 << catalogue.ScalarFigure(catalogue.Preemptions), StatePreempting, []string{
			"PREEMPTING judged on partial evidence: retractions are counted when a request finishes, not as they happen (SGLang before 2026-05: sglang:num_retractions)"}, ""},
		{"SGLang current", catalogue.EngineSGLang, 0, StatePreempting, []string{"10 preemptions over 10s"}, "partial evidence"},
		{"TensorRT-LLM", catalogue.EngineTRTLLM, 0, StateHealthy, []string{"TensorRT-LLM exports no preemption counter: PREEMPTING cannot be judged"}, ""},
		{"TGI", catalogue.EngineTGI, 0, StateHealthy, []string{"TGI exports no preemption counter: PREEMPTING cannot be judged"}, ""},
		// llama.cpp has no latency histograms: whether it is SLOW
		// cannot be told, so it is not called HEALTHY.
		{"llama.cpp", catalogue.EngineLlamaCpp, 0, StateUnjudged, []string{
			"llama.cpp exports no latency histograms: SLOW cannot be judged; no other problem shown",
			"llama.cpp exports no preemption counter: PREEMPTING cannot be judged"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := busy()
			// SGLang keeps its preemptions: the parser reads them from
			// its retraction counter, or derives them from its
			// retractions per request.
			samples = asEngine(samples, tt.engine)
			for i := range samples {
				samples[i].Derived |= tt.derived
			}
			r := analyzeOne(samples, now, DefaultConfig())
			if tt.not != "" && strings.Contains(strings.Join(r.Reasons, "\n"), tt.not) {
				t.Errorf("reasons %q say %q", r.Reasons, tt.not)
			}
			if r.State != tt.state || r.EngineKind != tt.engine {
				t.Fatalf("state %v, engine %v; want %v, %v; reasons %q", r.State, r.EngineKind, tt.state, tt.engine, r.Reasons)
			}
			for _, want := range tt.reasons {
				if !hasReason(r, want) {
					t.Errorf("reasons %q lack %q", r.Reasons, want)
				}
			}
		})
	}
}

// TestNoEngineIsDown: a page with no engine's families is DOWN, and one
// whose source names no engine but read vLLM's (a Prometheus server) is
// vLLM's.
func TestNoEngineIsDown(t *testing.T) {
	s := newServer()
	s.running = 4
	samples, now := run(s, 3, time.Second, finishing(1, chat))
	r := analyzeOne(samples, now, DefaultConfig())
	if r.State == StateDown || r.EngineKind != catalogue.EngineVLLM {
		t.Errorf("a vLLM page without the engine named: %v, %v", r.State, r.EngineKind)
	}
	for i := range samples {
		samples[i].HasVLLM = false
	}
	r = analyzeOne(samples, now, DefaultConfig())
	if r.State != StateDown || !hasReason(r, "no inference-engine metrics on this page") || !strings.Contains(r.Action, catalogue.TRTLLMPath) {
		t.Errorf("no engine: %v %q, action %q", r.State, r.Reasons, r.Action)
	}
}

// TestTGIDerivedTTFT: TGI has no TTFT histogram; its mean is the mean
// queue time plus the mean prefill batch time, marked derived, and its
// quantiles stay n/a. Figures the parser derived are named with how.
func TestTGIDerivedTTFT(t *testing.T) {
	s := newServer()
	s.running = 10
	samples, now := run(s, 10, time.Second, finishing(2, chat))
	samples = asEngine(samples, catalogue.EngineTGI)
	for i := range samples {
		samples[i].Derived.Add(catalogue.ScalarFigure(catalogue.PromptTokens))
	}
	r := analyzeOne(samples, now, DefaultConfig())
	if !sameFloat(r.TTFT.Mean.Float(), chat.queue+chat.prefill) || r.TTFT.P99.Known() {
		t.Errorf("TTFT mean %v (want %v), p99 %v (want n/a)", r.TTFT.Mean, chat.queue+chat.prefill, r.TTFT.P99)
	}
	if !strings.Contains(r.Derived["ttft_seconds"], "mean queue time + mean prefill batch time") {
		t.Errorf("derived %q", r.Derived)
	}
	if !strings.Contains(r.Derived["prompt_tokens_per_second"], "tgi_request_input_length") {
		t.Errorf("derived prompt tokens: %q", r.Derived)
	}
	if r.RequestsPerSecond != 3 {
		t.Errorf("requests/s %v, want 3 from tgi_request_success", r.RequestsPerSecond)
	}
}

// TestRoutersNotCounted: a router's page in front of replicas that are
// scraped too is shown, but its figures are not added to the totals; a
// fleet of the router alone is totalled from it.
func TestRoutersNotCounted(t *testing.T) {
	replica := func(running float64) []catalogue.Sample {
		s := newServer()
		s.running = running
		samples, _ := run(s, 5, time.Second, finishing(2, chat))
		return samples
	}
	a, b, router := replica(10), replica(20), replica(30)
	for i := range router {
		router[i].Router, router[i].Backends = catalogue.RouterProductionStack, []string{"a:8000", "b:8000"}
	}
	now := a[len(a)-1].Time
	rep := Analyze(now, []catalogue.Readings{{Target: "a", Samples: a}, {Target: "b", Samples: b}, {Target: "router", Samples: router}}, DefaultConfig(), nil)
	if rep.Fleet.Running != 30 || rep.Fleet.Routers != 1 || !sameFloat(rep.Fleet.RequestsPerSecond.Float(), 4) {
		t.Errorf("fleet running %v, requests/s %v, routers %d; want 30, 4, 1", rep.Fleet.Running, rep.Fleet.RequestsPerSecond, rep.Fleet.Routers)
	}
	if r := rep.Replicas[2]; !hasReason(r, "production-stack router in front of 2 backends") {
		t.Errorf("router reasons %q", r.Reasons)
	}
	alone := Analyze(now, []catalogue.Readings{{Target: "router", Samples: router}}, DefaultConfig(), nil)
	if alone.Fleet.Running != 30 || alone.Fleet.Routers != 0 {
		t.Errorf("router alone: running %v, routers %d", alone.Fleet.Running, alone.Fleet.Routers)
	}
}

// TestFleetSuccessCountsStops: the fleet's success rate is read off the
// replicas that count their stops; an engine without finish reasons does
// not pass its requests for failures.
func TestFleetSuccessCountsStops(t *testing.T) {
	s := newServer()
	s.running = 10
	vllm, now := run(s, 10, time.Second, finishing(2, chat))
	s = newServer()
	s.running = 10
	tgi, _ := run(s, 10, time.Second, finishing(3, chat))
	tgi = asEngine(tgi, catalogue.EngineTGI)
	rep := Analyze(now, []catalogue.Readings{{Target: "vllm", Samples: vllm}, {Target: "tgi", Samples: tgi}}, DefaultConfig(), nil)
	if rep.Fleet.SuccessRate != 1 || !sameFloat(rep.Fleet.RequestsPerSecond.Float(), 5) {
		t.Errorf("fleet success %v, requests/s %v; want 1 (vLLM's stops) and 5", rep.Fleet.SuccessRate, rep.Fleet.RequestsPerSecond)
	}
}

// TestStaleWhenCountsAtEnd: TGI counts when a request ends, so a few
// seconds in which long requests run and nothing moves are not STALE; a
// whole window of it is.
func TestStaleWhenCountsAtEnd(t *testing.T) {
	still := func(seconds int) ([]catalogue.Sample, time.Time) {
		s := newServer()
		s.running = 18
		s.finish(5, chat) // counters exist, then stand still
		return run(s, seconds, time.Second)
	}
	for _, tt := range []struct {
		engine  catalogue.EngineKind
		seconds int
		want    State
	}{
		// Three seconds are short of the least evidence of health.
		{catalogue.EngineTGI, 3, StateWarming},
		{catalogue.EngineTGI, 30, StateStale},
		{catalogue.EngineVLLM, 3, StateStale},
	} {
		samples, now := still(tt.seconds)
		samples = asEngine(samples, tt.engine)
		for i := range samples {
			samples[i].Total.Scalars[catalogue.FinishedRequests] = 5 // asEngine counts on; these stand still
		}
		if r := analyzeOne(samples, now, DefaultConfig()); r.State != tt.want {
			t.Errorf("%v still for %ds: %v, want %v; reasons %q", tt.engine, tt.seconds, r.State, tt.want, r.Reasons)
		}
	}
}
