package sim

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	vtoppage "github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/testutil"
)

// gather returns a replica's families by name.
func gather(t *testing.T, r *Replica) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf
	}
	return got
}

// Each engine's page carries its catalogued families with their types,
// labels and buckets, and no vllm: family.
func TestEnginePagesMatchCatalogue(t *testing.T) {
	tgiLengths := catalogue.TGILengthBuckets(DefaultConfig().MaxModelLen)
	// Families a page has only once something happened (TGI creates its
	// failure counter on the first failure) or with a draft model.
	lazy := map[string]bool{"tgi_request_failure": true}
	var spec []string
	for _, f := range catalogue.VLLMV1 {
		if strings.HasPrefix(f.Name, "vllm:spec_decode_") {
			spec = append(spec, f.Name)
		}
	}
	tests := []struct {
		engine  string
		version string
		role    Scenario
		want    []catalogue.Family
		skip    []string
	}{
		// Current SGLang's retraction counters replace the capture's
		// num_retractions (TestSGLangPageCountsRetractionsAsTheyHappen).
		{EngineSGLang, V1, Healthy, catalogue.SGLang, []string{"sglang:num_retractions"}},
		{EngineTRTLLM, V1, Healthy, catalogue.TRTLLM, nil},
		{EngineTGI, V1, Healthy, catalogue.TGI, nil},
		{EngineLlamaCpp, V1, Healthy, catalogue.LlamaCpp, nil},
		// Replica 1 of the mixed scenario has a draft model.
		{EngineVLLM, Latest, Mixed, slices.Concat(catalogue.VLLMV1, catalogue.VLLMLatest, catalogue.Frontend), nil},
		{EngineVLLM, Latest, Disaggregated, slices.Concat(catalogue.VLLMV1, catalogue.VLLMLatest, catalogue.VLLMNIXL), spec},
	}
	for _, tt := range tests {
		t.Run(tt.engine+"-"+tt.version+"-"+string(tt.role), func(t *testing.T) {
			f, err := NewFleet(Options{Replicas: 2, Scenario: tt.role, Seed: 4, Engine: tt.engine, VLLMVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			f.Advance(30 * time.Second)
			got := gather(t, f.Replicas()[1])
			for _, want := range tt.want {
				if lazy[want.Name] && got[want.Name] == nil || slices.Contains(tt.skip, want.Name) {
					continue
				}
				if want.Type == catalogue.TypeHistogram && want.Buckets == nil {
					want.Buckets = tgiLengths
				}
				checkFamily(t, got[want.Name], want)
			}
			for name := range got {
				if tt.engine != EngineVLLM && strings.HasPrefix(name, "vllm:") {
					t.Errorf("%s on a %s page", name, tt.engine)
				}
			}
		})
	}
}

// figure is one expected reading of a simulated page; nil want means n/a.
type figure struct {
	what string
	got  func(s *catalogue.Sample) float64
	want func(st Stats) float64
}

func total(sc catalogue.Scalar) func(s *catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 { return s.Total.Scalars[sc] }
}

func count(h catalogue.Histogram) func(s *catalogue.Sample) float64 {
	return func(s *catalogue.Sample) float64 {
		if !s.Total.Histograms[h].Present() {
			return math.NaN()
		}
		return s.Total.Histograms[h].Count
	}
}

func statRunning(st Stats) float64  { return float64(st.Running) }
func statWaiting(st Stats) float64  { return float64(st.Waiting) }
func statFinished(st Stats) float64 { return st.Finished }

// Each engine's simulated page, scraped over real HTTP at its own path,
// reads back through the parser as that engine with the model's figures,
// and n/a where the engine exports nothing.
func TestEnginePagesRoundTrip(t *testing.T) {
	tests := []struct {
		engine string
		kind   catalogue.EngineKind
		path   string
		want   []figure
	}{
		{EngineSGLang, catalogue.EngineSGLang, "/metrics", []figure{
			{"running", total(catalogue.Running), statRunning},
			{"waiting", total(catalogue.Waiting), statWaiting},
			{"finished", total(catalogue.FinishedRequests), statFinished},
			{"preemptions (retractions as they happen)", total(catalogue.Preemptions), func(st Stats) float64 { return st.Preemptions }},
			{"prefill time n/a", count(catalogue.PrefillTime), nil},
		}},
		{EngineTRTLLM, catalogue.EngineTRTLLM, catalogue.TRTLLMPath, []figure{
			{"running", total(catalogue.Running), statRunning},
			{"waiting", total(catalogue.Waiting), statWaiting},
			{"finished", total(catalogue.FinishedRequests), statFinished},
			{"preemptions n/a", total(catalogue.Preemptions), nil},
		}},
		{EngineTGI, catalogue.EngineTGI, "/metrics", []figure{
			{"running", total(catalogue.Running), statRunning},
			{"waiting", total(catalogue.Waiting), statWaiting},
			{"ttft n/a", count(catalogue.TTFT), nil},
			{"kv usage n/a", total(catalogue.KVCacheUsage), nil},
		}},
		{EngineLlamaCpp, catalogue.EngineLlamaCpp, "/metrics", []figure{
			{"running", total(catalogue.Running), statRunning},
			{"waiting", total(catalogue.Waiting), statWaiting},
			{"finished n/a", total(catalogue.FinishedRequests), nil},
			{"ttft n/a", count(catalogue.TTFT), nil},
			{"e2e n/a", count(catalogue.E2E), nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			f, err := NewFleet(Options{Replicas: 1, Scenario: Full, Seed: 5, Engine: tt.engine, Clock: clock.Now, MaxCatchUp: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			urls, err := f.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = f.Close() })
			if !strings.HasSuffix(urls[0], tt.path) {
				t.Errorf("URL %s, want the path %s", urls[0], tt.path)
			}
			clock.Add(2 * time.Minute)
			status, body, err := get(urls[0], 2*time.Second)
			if err != nil || status != 200 {
				t.Fatalf("status %d, err %v", status, err)
			}
			s, err := vtoppage.NewIngester().Ingest(body, "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			if s.EngineKind != tt.kind || s.HasVLLM || !s.HasEngineMetrics() {
				t.Errorf("EngineKind %v, HasVLLM %v, HasEngineMetrics %v", s.EngineKind, s.HasVLLM, s.HasEngineMetrics())
			}
			st := f.Replicas()[0].Stats()
			if st.Finished == 0 || st.Waiting == 0 {
				t.Fatalf("the full scenario finished %v and queued %d: no test", st.Finished, st.Waiting)
			}
			for _, w := range tt.want {
				got := w.got(&s)
				switch {
				case w.want == nil && w.what[len(w.what)-3:] == "n/a" && !math.IsNaN(got):
					t.Errorf("%s = %v, want n/a", w.what, got)
				case w.want != nil && got != w.want(st):
					t.Errorf("%s = %v, want %v", w.what, got, w.want(st))
				case w.want == nil && w.what[len(w.what)-3:] != "n/a" && math.IsNaN(got):
					t.Errorf("%s is n/a", w.what)
				}
			}
		})
	}
}

// ingest reads a replica's page through the parser, in memory.
func ingest(t *testing.T, r *Replica) catalogue.Sample {
	t.Helper()
	body, err := r.Render(textFormat)
	if err != nil {
		t.Fatal(err)
	}
	s, err := vtoppage.NewIngester().Ingest(body, "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The knobs of the newest page produce the signals they stand for, read
// back through the parser.
func TestNewestSignalKnobs(t *testing.T) {
	tests := []struct {
		name     string
		scenario Scenario
		replica  int
		set      func(c *ReplicaConfig)
		check    func(t *testing.T, s catalogue.Sample, st Stats)
	}{
		{"deferred waiting behind a slow KV link", Disaggregated, 1,
			func(c *ReplicaConfig) { c.KVTransferBandwidth = 1e8 },
			func(t *testing.T, s catalogue.Sample, st Stats) {
				tot := s.Total.Scalars
				if tot[catalogue.WaitingDeferred] == 0 || tot[catalogue.Waiting] != tot[catalogue.WaitingCapacity]+tot[catalogue.WaitingDeferred] {
					t.Errorf("waiting %v = capacity %v + deferred %v, want deferred > 0",
						tot[catalogue.Waiting], tot[catalogue.WaitingCapacity], tot[catalogue.WaitingDeferred])
				}
				if tot[catalogue.PromptTokensExternal] == 0 || s.Total.Histograms[catalogue.NIXLTransferTime].Count == 0 {
					t.Errorf("transferred tokens %v, NIXL transfers %v", tot[catalogue.PromptTokensExternal], s.Total.Histograms[catalogue.NIXLTransferTime].Count)
				}
			}},
		{"failing NIXL transfers", Disaggregated, 1,
			func(c *ReplicaConfig) { c.KVTransferFailure = 0.5 },
			func(t *testing.T, s catalogue.Sample, _ Stats) {
				failed, xfers := s.Total.Scalars[catalogue.NIXLFailedTransfers], s.Total.Histograms[catalogue.NIXLTransferTime].Count
				if share := failed / xfers; !(share > 0.35 && share < 0.65) {
					t.Errorf("%v of %v transfers failed, want about half", failed, xfers)
				}
			}},
		{"a sleeping engine", Healthy, 0,
			func(c *ReplicaConfig) { c.SleepLevel = 1 },
			func(t *testing.T, s catalogue.Sample, _ Stats) {
				if got := s.Total.Scalars[catalogue.SleepLevel]; got != 1 || s.Total.Scalars[catalogue.FinishedRequests] != 0 {
					t.Errorf("sleep level %v, finished %v; want 1 and nothing served", got, s.Total.Scalars[catalogue.FinishedRequests])
				}
			}},
		{"admission rejections", Full, 0,
			func(c *ReplicaConfig) { c.MaxQueuedRequests = 20 },
			func(t *testing.T, s catalogue.Sample, _ Stats) {
				if s.Total.Scalars[catalogue.AdmissionRejections] == 0 || s.Total.Scalars[catalogue.Waiting] > 20 {
					t.Errorf("rejections %v, waiting %v (cap 20)", s.Total.Scalars[catalogue.AdmissionRejections], s.Total.Scalars[catalogue.Waiting])
				}
			}},
		{"low speculative acceptance", Healthy, 0,
			func(c *ReplicaConfig) { c.SpecTokens, c.SpecAcceptance = 3, 0.2 },
			func(t *testing.T, s catalogue.Sample, _ Stats) {
				drafts, pos := s.Total.Scalars[catalogue.SpecDrafts], s.Total.SpecAcceptedPerPos
				if len(pos) != 3 || !(pos[0]/drafts > 0.17 && pos[0]/drafts < 0.23) || !(pos[1] < pos[0] && pos[2] < pos[1]) {
					t.Errorf("accepted per position %v over %v drafts, want ≈ 0.2, 0.04, 0.008 of them", pos, drafts)
				}
			}},
		{"preemptions per request", Preempting, 0, func(*ReplicaConfig) {},
			func(t *testing.T, s catalogue.Sample, st Stats) {
				h := s.Total.Histograms[catalogue.PreemptionsPerRequest]
				if h.Count == 0 || h.Sum == 0 || h.Sum > st.Preemptions {
					t.Errorf("per request: %v requests, %v preemptions; %v in all", h.Count, h.Sum, st.Preemptions)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFleet(Options{Replicas: 2, Scenario: tt.scenario, Seed: 6, VLLMVersion: Latest,
				Configure: func(i int, c *ReplicaConfig) {
					if i == tt.replica {
						tt.set(c)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			f.Advance(3 * time.Minute)
			r := f.Replicas()[tt.replica]
			tt.check(t, ingest(t, r), r.Stats())
		})
	}
}

// The mixed-engine scenario gives each replica its engine's page.
func TestMixedEngines(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 5, Scenario: MixedEngines, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Minute)
	want := []catalogue.EngineKind{catalogue.EngineVLLM, catalogue.EngineSGLang, catalogue.EngineTRTLLM, catalogue.EngineTGI, catalogue.EngineLlamaCpp}
	for i, r := range f.Replicas() {
		if s := ingest(t, r); s.EngineKind != want[i] {
			t.Errorf("replica %d: %v, want %v", i, s.EngineKind, want[i])
		}
	}
}

func TestBadEngineOptions(t *testing.T) {
	for _, o := range []Options{
		{Engine: "triton"},
		{VLLMVersion: "v2"},
		{Configure: func(_ int, c *ReplicaConfig) { c.Role = RoleDecode }}, // no link
		{Configure: func(_ int, c *ReplicaConfig) { c.SleepLevel = 3 }},
	} {
		if _, err := NewFleet(o); err == nil {
			t.Errorf("NewFleet(%+v) accepted", o)
		}
	}
}

// The SGLang page is current SGLang's (from 2026-05): retractions counted
// as they happen (sglang:num_retracted_requests_total, read as the
// preemptions, not derived), with the prompt and output tokens they throw
// away, and no sglang:num_retractions, which that version removed.
func TestSGLangPageCountsRetractionsAsTheyHappen(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Preempting, Seed: 4, Engine: EngineSGLang})
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(2 * time.Minute)
	r := f.Replicas()[0]
	st := r.Stats()
	if st.Preemptions == 0 {
		t.Fatal("the preempting scenario retracted nothing: no test")
	}
	got := gather(t, r)
	for _, want := range catalogue.SGLangCurrent {
		switch want.Name {
		case "sglang:num_retracted_requests_total", "sglang:num_retracted_input_tokens_total", "sglang:num_retracted_output_tokens_total":
			checkFamily(t, got[want.Name], want)
		}
	}
	if got["sglang:num_retractions"] != nil {
		t.Error("sglang:num_retractions on a current SGLang page")
	}
	s := ingest(t, r)
	if p := s.Total.Scalars[catalogue.Preemptions]; p != st.Preemptions || s.Derived.Has(catalogue.ScalarFigure(catalogue.Preemptions)) {
		t.Errorf("preemptions %v (derived %v), want %v read from the counter", p, s.Derived.Has(catalogue.ScalarFigure(catalogue.Preemptions)), st.Preemptions)
	}
	if tok := s.Total.Scalars[catalogue.RetractedTokens]; !(tok > st.Preemptions) {
		t.Errorf("retracted tokens %v for %v retractions", tok, st.Preemptions)
	}
	// Read each second, the replica is PREEMPTING on the whole evidence.
	readings := []catalogue.Readings{{Target: "r0"}}
	var prev *analysis.Report
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	preempting := false
	for i := range 40 {
		f.Advance(time.Second)
		s := ingest(t, r)
		s.Time = at.Add(time.Duration(i) * time.Second)
		readings[0].Samples = append(readings[0].Samples, s)
		rep := analysis.Analyze(s.Time, readings, analysis.DefaultConfig(), prev)
		prev = &rep
		if rep.Replicas[0].State == analysis.StatePreempting {
			preempting = true
			if reasons := strings.Join(rep.Replicas[0].Reasons, "; "); strings.Contains(reasons, "partial evidence") {
				t.Errorf("PREEMPTING on partial evidence from the retraction counter: %s", reasons)
			}
		}
	}
	if !preempting {
		t.Errorf("never PREEMPTING: %s %q", prev.Replicas[0].State, prev.Replicas[0].Reasons)
	}
}
