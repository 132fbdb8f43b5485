package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// setEach sets figures of each sample: set(i, series) for the i-th.
func setEach(samples []catalogue.Sample, set func(i int, s *catalogue.Series)) []catalogue.Sample {
	for i := range samples {
		set(i, &samples[i].Total)
	}
	return samples
}

// fullBatch is a replica at its max_num_seqs cap with a queue of waiting
// requests that neither grows nor drains, finishing 7.7 requests/s.
func fullBatch(waiting float64) ([]catalogue.Sample, time.Time) {
	s := newServer()
	s.running, s.waiting, s.kv = 256, waiting, 0.6
	return run(s, 10, time.Second, finishing(7.7, chat))
}

// hasReason reports whether a reason contains text.
func hasReason(r ReplicaReport, text string) bool {
	return slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.Contains(s, text) })
}

// TestSignalStates judges replicas on vLLM's newest families: FULL rests
// on the requests waiting for capacity, deferred ones are named apart, a
// sleeping engine is SLEEPING, rejected admissions are FULL, failing NIXL
// transfers and a low speculative acceptance are named whatever the state.
func TestSignalStates(t *testing.T) {
	tests := []struct {
		name     string
		samples  func() ([]catalogue.Sample, time.Time)
		state    State
		reason   string // a reason that must be given
		notAlso  string // a reason that must not be given ("" for none)
		action   string // a part of the action ("" to skip)
		checkFig func(t *testing.T, r ReplicaReport)
	}{
		{"capacity waiting is FULL", func() ([]catalogue.Sample, time.Time) {
			samples, now := fullBatch(40)
			return setEach(samples, func(_ int, s *catalogue.Series) {
				s.Scalars[catalogue.WaitingCapacity], s.Scalars[catalogue.WaitingDeferred] = 40, 0
			}), now
		}, StateFull, "waiting for capacity 40 → 40", "deferred", "add replicas", func(t *testing.T, r ReplicaReport) {
			if r.WaitingCapacity != 40 || r.WaitingDeferred != 0 {
				t.Errorf("waiting by reason %v/%v, want 40/0", r.WaitingCapacity, r.WaitingDeferred)
			}
		}},
		{"deferred waiting is not FULL, and is named", func() ([]catalogue.Sample, time.Time) {
			samples, now := fullBatch(40)
			return setEach(samples, func(_ int, s *catalogue.Series) {
				s.Scalars[catalogue.WaitingCapacity], s.Scalars[catalogue.WaitingDeferred] = 0, 40
			}), now
		}, StateHealthy, "40 waiting are deferred (LoRA budget, KV transfer or blocked), not waiting for capacity", "", "", nil},
		{"a mixed queue is FULL on its capacity part and names the deferred", func() ([]catalogue.Sample, time.Time) {
			samples, now := fullBatch(52)
			return setEach(samples, func(_ int, s *catalogue.Series) {
				s.Scalars[catalogue.WaitingCapacity], s.Scalars[catalogue.WaitingDeferred] = 40, 12
			}), now
		}, StateFull, "12 waiting are deferred", "", "", nil},
		{"sleeping at level 1", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			samples, now := run(s, 10, time.Second)
			return setEach(samples, func(_ int, s *catalogue.Series) { s.Scalars[catalogue.SleepLevel] = 1 }), now
		}, StateSleeping, "engine asleep at level 1 (weights offloaded to CPU memory)", "", "wake it (POST /wake_up), or it is meant to sleep", nil},
		{"sleeping at level 2 with requests waiting", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.waiting = 3
			samples, now := run(s, 10, time.Second)
			return setEach(samples, func(_ int, s *catalogue.Series) { s.Scalars[catalogue.SleepLevel] = 2 }), now
		}, StateSleeping, "weights and KV cache discarded", "", "wake it (POST /wake_up): 3 requests wait", nil},
		{"awake is not sleeping", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			samples, now := run(s, 10, time.Second)
			return setEach(samples, func(_ int, s *catalogue.Series) { s.Scalars[catalogue.SleepLevel] = 0 }), now
		}, StateIdle, "no request finished", "asleep", "", nil},
		{"rejections are FULL without a standing queue", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 200, 0.5
			samples, now := run(s, 10, time.Second, finishing(6, chat))
			return setEach(samples, func(i int, s *catalogue.Series) { s.Scalars[catalogue.AdmissionRejections] = 100 + 5*float64(i) }), now
		}, StateFull, "refused 50 admissions over 10s (5/s, HTTP 503", "", "the server turns work away", func(t *testing.T, r ReplicaReport) {
			if r.AdmissionRejectionsPerSecond != 5 {
				t.Errorf("rejections/s %v, want 5", r.AdmissionRejectionsPerSecond)
			}
		}},
		{"no rejections in the window is not FULL", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 200, 0.5
			samples, now := run(s, 10, time.Second, finishing(6, chat))
			return setEach(samples, func(_ int, s *catalogue.Series) { s.Scalars[catalogue.AdmissionRejections] = 100 }), now
		}, StateHealthy, "running 200", "refused", "", nil},
		{"failing NIXL transfers are named", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 30, 0.2
			samples, now := run(s, 10, time.Second, finishing(3, chat))
			return setEach(samples, func(i int, s *catalogue.Series) { s.Scalars[catalogue.NIXLFailedTransfers] = 2 * float64(i) }), now
		}, StateHealthy, "20 failed NIXL KV transfers over 10s (2/s)", "", "", func(t *testing.T, r ReplicaReport) {
			if r.NIXLFailedPerSecond != 2 {
				t.Errorf("NIXL failures/s %v, want 2", r.NIXLFailedPerSecond)
			}
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "failed NIXL KV transfers") }) {
				t.Errorf("warnings %q lack the failed transfers", r.Warnings)
			}
		}},
		{"low speculative acceptance is named", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 30, 0.2
			s.specDrafts, s.specDraftToks, s.specAccepted = 0, 0, 0
			samples, now := run(s, 10, time.Second, finishing(3, chat), func(s *server, _ int) {
				// 100 drafts of 3 tokens per second, 90 accepted: α 30 %.
				s.specDrafts += 100
				s.specDraftToks += 300
				s.specAccepted += 90
			})
			return setEach(samples, func(i int, s *catalogue.Series) {
				// By position: 60 %, 20 %, 10 % of drafts accepted there.
				s.SpecAcceptedPerPos = []float64{60 * float64(i), 20 * float64(i), 10 * float64(i)}
			}), now
		}, StateHealthy, "speculative decoding accepts 30% of draft tokens (mean acceptance length 1.9), below 50%", "", "", func(t *testing.T, r ReplicaReport) {
			want := []float64{0.6, 0.2, 0.1}
			if len(r.SpecDecodeAcceptanceByPosition) != len(want) {
				t.Fatalf("acceptance by position %v, want %v", r.SpecDecodeAcceptanceByPosition, want)
			}
			for i, w := range want {
				if !sameFloat(r.SpecDecodeAcceptanceByPosition[i].Float(), w) {
					t.Errorf("acceptance at position %d = %v, want %v", i, r.SpecDecodeAcceptanceByPosition[i], w)
				}
			}
		}},
		{"good speculative acceptance is not named", func() ([]catalogue.Sample, time.Time) {
			s := newServer()
			s.running, s.kv = 30, 0.2
			s.specDrafts, s.specDraftToks, s.specAccepted = 0, 0, 0
			return run(s, 10, time.Second, finishing(3, chat), func(s *server, _ int) {
				s.specDrafts += 100
				s.specDraftToks += 300
				s.specAccepted += 210
			})
		}, StateHealthy, "running 30", "speculative decoding", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, now := tt.samples()
			r := analyzeOne(samples, now, DefaultConfig())
			if r.State != tt.state {
				t.Fatalf("state %v, want %v; reasons %q", r.State, tt.state, r.Reasons)
			}
			if !hasReason(r, tt.reason) {
				t.Errorf("reasons %q lack %q", r.Reasons, tt.reason)
			}
			if tt.notAlso != "" && hasReason(r, tt.notAlso) {
				t.Errorf("reasons %q name %q", r.Reasons, tt.notAlso)
			}
			if !strings.Contains(r.Action, tt.action) {
				t.Errorf("action %q lacks %q", r.Action, tt.action)
			}
			if tt.checkFig != nil {
				tt.checkFig(t, r)
			}
		})
	}
}

// TestSleepingShowsAtOnce: the engine says it sleeps, so SLEEPING is shown
// on the first reading and without the hysteresis of judged states.
func TestSleepingShowsAtOnce(t *testing.T) {
	s := newServer()
	s.running, s.kv = 30, 0.2
	samples, _ := run(s, 11, time.Second, finishing(3, chat))
	cfg := DefaultConfig()
	prev := Analyze(samples[10].Time, []catalogue.Readings{{Target: "a", Samples: samples[:11]}}, cfg, nil)
	if prev.Replicas[0].State != StateHealthy {
		t.Fatalf("before sleeping: %v", prev.Replicas[0].State)
	}
	samples[11].Total.Scalars[catalogue.SleepLevel] = 1
	next := Analyze(samples[11].Time, []catalogue.Readings{{Target: "a", Samples: samples}}, cfg, &prev)
	if got := next.Replicas[0].State; got != StateSleeping {
		t.Errorf("after the engine went to sleep: %v, want sleeping at once; reasons %q", got, next.Replicas[0].Reasons)
	}
	one := analyzeOne(samples[11:], samples[11].Time, cfg)
	if one.State != StateSleeping {
		t.Errorf("one reading of a sleeping engine: %v, want sleeping (not warming)", one.State)
	}
}

// TestPreemptionSignals: PREEMPTING gives preemptions per request from
// vllm:request_num_preemptions, and the recomputed tokens the page counts
// replace the estimate.
func TestPreemptionSignals(t *testing.T) {
	bounds := withInf(catalogue.PreemptionsBuckets)
	s := newServer()
	s.running, s.kv = 200, 0.99
	samples, now := run(s, 10, time.Second, finishing(5, chat), preempting(2))
	samples = setEach(samples, func(i int, tot *catalogue.Series) {
		// Every second 5 requests finish: 3 never preempted, 2 once.
		counts := make([]float64, len(bounds))
		for j, b := range bounds {
			if b >= 0 {
				counts[j] += 3 * float64(i)
			}
			if b >= 1 {
				counts[j] += 2 * float64(i)
			}
		}
		tot.Histograms[catalogue.PreemptionsPerRequest] = catalogue.Buckets{Bounds: bounds, Counts: counts, Sum: 2 * float64(i), Count: 5 * float64(i)}
		tot.Scalars[catalogue.PromptTokensRecomputed] = 1000 * float64(i)
	})
	r := analyzeOne(samples, now, DefaultConfig())
	if r.State != StatePreempting {
		t.Fatalf("state %v; reasons %q", r.State, r.Reasons)
	}
	// Per second 3 requests were never preempted and 2 once: both in the
	// first bucket, (0, 1], which is all the histogram proves.
	if !hasReason(r, "preemptions per finished request: p50 ≤1, p99 ≤1, mean 0.4") {
		t.Errorf("reasons %q lack preemptions per request", r.Reasons)
	}
	if !r.RecomputedMeasured || r.RecomputedTokensPerSecond != 1000 || !hasReason(r, "recomputing 1,000 prompt tokens/s (vllm:prompt_tokens_recomputed)") {
		t.Errorf("recomputed %v (measured %v); reasons %q", r.RecomputedTokensPerSecond, r.RecomputedMeasured, r.Reasons)
	}

	// Without the counter the figure is the estimate, and says so.
	s = newServer()
	s.running, s.kv = 200, 0.99
	samples, now = run(s, 10, time.Second, finishing(5, chat), preempting(2))
	r = analyzeOne(samples, now, DefaultConfig())
	if r.RecomputedMeasured || !hasReason(r, "recomputing about") || r.PreemptionsPerRequest.P50.Known() {
		t.Errorf("estimate: measured %v, per request %v; reasons %q", r.RecomputedMeasured, r.PreemptionsPerRequest.P50, r.Reasons)
	}
}

// TestPromptSources: the share of prompt tokens not computed here, from
// vllm:prompt_tokens_by_source, and the external prefix cache hit rate.
func TestPromptSources(t *testing.T) {
	s := newServer()
	s.running = 10
	samples, now := run(s, 10, time.Second, finishing(2, chat))
	samples = setEach(samples, func(i int, tot *catalogue.Series) {
		n := float64(i)
		tot.Scalars[catalogue.PromptTokensLocalCompute] = 600 * n
		tot.Scalars[catalogue.PromptTokensLocalCacheHit] = 300 * n
		tot.Scalars[catalogue.PromptTokensExternal] = 100 * n
		tot.Scalars[catalogue.ExternalPrefixQueries], tot.Scalars[catalogue.ExternalPrefixHits] = 400*n, 100*n
		tot.Scalars[catalogue.KVOffloadLoadBytes], tot.Scalars[catalogue.KVOffloadStoreBytes] = 2e9*n, 1e9*n
	})
	r := analyzeOne(samples, now, DefaultConfig())
	for _, c := range []struct {
		name      string
		got, want Num
	}{
		{"cached share", r.PromptCachedShare, 0.4},
		{"external prefix hit rate", r.ExternalPrefixCacheHitRate, 0.25},
		{"offload load B/s", r.KVOffloadLoadBytesPerSecond, 2e9},
		{"offload store B/s", r.KVOffloadStoreBytesPerSecond, 1e9},
		{"NIXL bytes/s (absent)", r.NIXLBytesPerSecond, NA},
	} {
		if c.got.Known() != c.want.Known() || (c.want.Known() && !sameFloat(c.got.Float(), c.want.Float())) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestSignalsAbsentAreNA: a page without the newest families gives n/a
// for every signal, never 0.
func TestSignalsAbsentAreNA(t *testing.T) {
	samples, now := fullBatch(40)
	r := analyzeOne(samples, now, DefaultConfig())
	for name, n := range map[string]Num{
		"waiting capacity": r.WaitingCapacity, "waiting deferred": r.WaitingDeferred, "sleep level": r.SleepLevel,
		"rejections/s": r.AdmissionRejectionsPerSecond, "cached share": r.PromptCachedShare,
		"NIXL failures/s": r.NIXLFailedPerSecond, "NIXL p99": r.NIXLTransfer.P99, "offload load": r.KVOffloadLoadBytesPerSecond,
		"external prefix hit rate": r.ExternalPrefixCacheHitRate, "preemptions per request p50": r.PreemptionsPerRequest.P50,
	} {
		if n.Known() {
			t.Errorf("%s = %v on a page without it, want n/a", name, n)
		}
	}
	if r.SpecDecodeAcceptanceByPosition != nil || math.IsNaN(r.Running.Float()) {
		t.Errorf("by position %v, running %v", r.SpecDecodeAcceptanceByPosition, r.Running)
	}
}

// TestRejectionsInAdvice: refused admissions are demand the fleet must
// serve: the advice counts them in the arrivals and says how many were
// refused.
func TestRejectionsInAdvice(t *testing.T) {
	s := newServer()
	s.running, s.kv = 200, 0.5
	samples, now := run(s, 10, time.Second, finishing(6, chat))
	samples = setEach(samples, func(i int, s *catalogue.Series) { s.Scalars[catalogue.AdmissionRejections] = 4 * float64(i) })
	rep := Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, DefaultConfig(), nil)
	a := rep.Fleet.Advice
	if a.RejectionsPerSecond != 4 || !sameFloat(a.ArrivalsPerSecond.Float(), 10) {
		t.Errorf("rejections/s %v, arrivals %v; want 4 and 6 finished + 4 refused", a.RejectionsPerSecond, a.ArrivalsPerSecond)
	}
	if !slices.ContainsFunc(a.Summary, func(s string) bool { return strings.Contains(s, "plus 4 req/s refused") }) {
		t.Errorf("summary %q", a.Summary)
	}
}

// TestCountBucket writes a quantile of whole numbers as its bucket proves
// it, never as an interpolated fraction.
func TestCountBucket(t *testing.T) {
	for _, tt := range []struct {
		lower, upper float64
		v            Num
		want         string
	}{
		{0, 1, 0.5, "≤1"},
		{1, 2, 1.5, "2"},
		{5, 10, 7.5, "6–10"},
		{20, math.Inf(1), 20, ">20"},
		{math.NaN(), math.NaN(), NA, "n/a"},
	} {
		if got := (QuantileBucket{Lower: Num(tt.lower), Upper: Num(tt.upper)}).Count(tt.v); got != tt.want {
			t.Errorf("(%v, %v] quantile %v: %q, want %q", tt.lower, tt.upper, tt.v, got, tt.want)
		}
	}
}
