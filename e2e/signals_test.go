package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// TestNewestSignalsClassification classifies simulated servers of vLLM's
// newest version over real HTTP, each in a case only its newest families
// show: requests waiting for capacity against requests deferred for a KV
// transfer, a sleeping engine, refused admissions, failing NIXL transfers
// and speculative decoding that does not pay.
func TestNewestSignalsClassification(t *testing.T) {
	tests := []struct {
		name      string
		scenario  sim.Scenario
		replicas  int
		configure func(i int, c *sim.ReplicaConfig)
		replica   int // the replica judged
		want      analysis.State
		reason    string // a reason it must give
		notReason string // a reason it must not give ("" for none)
		action    string // a part of the first action ("" to skip)
	}{
		{name: "capacity waiting is full", scenario: sim.Full, replicas: 1,
			want: analysis.StateFull, reason: "waiting for capacity", notReason: "deferred"},
		{name: "deferred waiting is its own cause", scenario: sim.Disaggregated, replicas: 2, replica: 1,
			configure: func(i int, c *sim.ReplicaConfig) {
				if c.Role == sim.RoleDecode {
					c.KVTransferBandwidth = 2e8 // a slow link: prompts wait for their KV
				}
			},
			want: analysis.StateSlow, reason: "deferred (LoRA budget, KV transfer or blocked), not waiting for capacity",
			action: "requests wait for their KV transfer or a LoRA slot, not a batch slot"},
		{name: "sleeping", scenario: sim.Healthy, replicas: 1,
			configure: func(_ int, c *sim.ReplicaConfig) { c.SleepLevel = 1 },
			want:      analysis.StateSleeping, reason: "engine asleep at level 1"},
		{name: "rejections are full", scenario: sim.Full, replicas: 1,
			configure: func(_ int, c *sim.ReplicaConfig) { c.MaxQueuedRequests = 20 },
			want:      analysis.StateFull, reason: "HTTP 503: the queue is at --max-num-queued-reqs"},
		{name: "failing NIXL transfers", scenario: sim.Disaggregated, replicas: 2, replica: 1,
			configure: func(_ int, c *sim.ReplicaConfig) { c.KVTransferFailure = 0.2 },
			want:      analysis.StateHealthy, reason: "failed NIXL KV transfers over"},
		{name: "low speculative acceptance", scenario: sim.Healthy, replicas: 1,
			configure: func(_ int, c *sim.ReplicaConfig) { c.SpecTokens, c.SpecAcceptance = 4, 0.3 },
			want:      analysis.StateHealthy, reason: "drafting costs more than it saves"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFleetRun(t, sim.Options{Replicas: tt.replicas, Scenario: tt.scenario, Seed: 1,
				VLLMVersion: sim.Latest, Configure: tt.configure})
			r.fleet.Advance(warmUp)
			reports := r.steps(scrapeSteps)
			for _, rep := range reports[len(reports)-stableSteps:] {
				rr := r.replica(rep, tt.replica)
				if rr.State != tt.want {
					t.Errorf("%s: state %s, want %s (reasons %q)", rep.Time.Format("15:04:05"), rr.State, tt.want, rr.Reasons)
				}
			}
			rr := r.replica(reports[len(reports)-1], tt.replica)
			checkVerdict(t, rr, tt.want)
			has := func(text string) bool {
				return slices.ContainsFunc(rr.Reasons, func(s string) bool { return strings.Contains(s, text) })
			}
			if !has(tt.reason) {
				t.Errorf("reasons %q lack %q", rr.Reasons, tt.reason)
			}
			if tt.notReason != "" && has(tt.notReason) {
				t.Errorf("reasons %q give %q", rr.Reasons, tt.notReason)
			}
			if !strings.Contains(rr.Action, tt.action) {
				t.Errorf("action %q lacks %q", rr.Action, tt.action)
			}
		})
	}
}

// TestEnginesFleetClassification watches a fleet whose replicas are each
// served as another engine's page (the mixed scenario's states, engine by
// engine), over real HTTP: each is judged under its engine's name on the
// evidence its page gives, and says what it cannot judge. The TGI replica
// plays the preempting replica: TGI exports no preemption counter, so it
// cannot be PREEMPTING, and says so.
func TestEnginesFleetClassification(t *testing.T) {
	tests := []struct {
		engine catalogue.EngineKind
		want   []analysis.State
		reason string
	}{
		{catalogue.EngineVLLM, []analysis.State{analysis.StateHealthy}, "running "},
		{catalogue.EngineSGLang, []analysis.State{analysis.StateFull}, "(the most seen)"},
		// The slow replica's p99 TTFT hovers about the 1 s SLO on this
		// page: SLOW, or HEALTHY while the hysteresis holds it.
		{catalogue.EngineTRTLLM, []analysis.State{analysis.StateSlow, analysis.StateHealthy}, "TensorRT-LLM exports no preemption counter: PREEMPTING cannot be judged"},
		{catalogue.EngineTGI, []analysis.State{analysis.StateFull}, "TGI exports no preemption counter: PREEMPTING cannot be judged"},
		{catalogue.EngineLlamaCpp, []analysis.State{analysis.StateUnjudged}, "llama.cpp exports no latency histograms: SLOW cannot be judged"},
	}
	r := newFleetRun(t, sim.Options{Replicas: len(tests), Scenario: sim.MixedEngines, Seed: 1})
	r.fleet.Advance(warmUp)
	reports := r.steps(scrapeSteps)
	for i, tt := range tests {
		t.Run(tt.engine.String(), func(t *testing.T) {
			for _, rep := range reports[len(reports)-stableSteps:] {
				if rr := r.replica(rep, i); !slices.Contains(tt.want, rr.State) || rr.EngineKind != tt.engine {
					t.Errorf("%s: %v %s, want %v %s (reasons %q)", rep.Time.Format("15:04:05"), rr.EngineKind, rr.State, tt.engine, tt.want, rr.Reasons)
				}
			}
			rr := r.replica(reports[len(reports)-1], i)
			if !slices.ContainsFunc(rr.Reasons, func(s string) bool { return strings.Contains(s, tt.reason) }) {
				t.Errorf("reasons %q lack %q", rr.Reasons, tt.reason)
			}
			if !rr.Running.Known() || rr.Error != "" {
				t.Errorf("running %v, error %q: the engine's own gauges, read", rr.Running, rr.Error)
			}
		})
	}
}

// TestRouterBesideItsReplicasOverHTTP serves a real endpoint-picker page
// (an llm-d / Gateway API Inference Extension capture) beside two
// simulated vLLM replicas: the router is read as a router with its two
// backends, not DOWN, and the fleet's totals are the replicas' alone.
func TestRouterBesideItsReplicasOverHTTP(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("..", "page", "testdata", "real", "repo-yalmashad_Inference-gwapi-282f0d73-gie_epp-chart_v1.0.1-EXCERPT.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	for _, line := range strings.SplitAfter(string(capture), "\n") {
		if strings.TrimSpace(line) != "..." { // the excerpt's elisions are no exposition lines
			body = append(body, line...)
		}
	}
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(body)
	}))
	t.Cleanup(router.Close)

	r := newFleetRun(t, sim.Options{Replicas: 2, Scenario: sim.Healthy, Seed: 1})
	r.fleet.Advance(warmUp)
	reports := r.steps(5)
	target, err := scrape.ParseTarget(router.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	ingester := page.NewIngester()
	var samples []catalogue.Sample
	for _, rep := range reports {
		got, contentType, err := r.client.Fetch(t.Context(), target, healthyTimeout, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ingester.Ingest(got, contentType)
		if err != nil {
			t.Fatal(err)
		}
		s.Time = rep.Time
		samples = append(samples, s)
	}
	inputs := append(slices.Clone(r.inputs), catalogue.Readings{Target: target.Name, Samples: samples})
	rep := analysis.Analyze(reports[len(reports)-1].Time, inputs, r.cfg, nil)
	rr := rep.Replicas[2]
	if rr.State == analysis.StateDown || rr.Router != catalogue.RouterEndpointPicker || len(rr.Backends) != 2 {
		t.Fatalf("router: %v, %q, backends %v; reasons %q", rr.State, rr.Router, rr.Backends, rr.Reasons)
	}
	if !slices.ContainsFunc(rr.Reasons, func(s string) bool { return strings.Contains(s, "endpoint-picker router in front of 2 backends") }) {
		t.Errorf("router reasons %q", rr.Reasons)
	}
	want := rep.Replicas[0].Running + rep.Replicas[1].Running
	if rep.Fleet.Routers != 1 || rep.Fleet.Running != want {
		t.Errorf("fleet: routers %d, running %v; want 1 and the replicas' %v", rep.Fleet.Routers, rep.Fleet.Running, want)
	}
}
