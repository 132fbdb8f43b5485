package analysis_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// quantilesOf are a replica's latency summaries by histogram.
func quantilesOf(f *analysis.Figures) map[catalogue.Histogram]analysis.Quantiles {
	return map[catalogue.Histogram]analysis.Quantiles{
		catalogue.TTFT: f.TTFT, catalogue.ITL: f.ITL, catalogue.E2E: f.E2E, catalogue.QueueTime: f.Queue,
		catalogue.PrefillTime: f.Prefill, catalogue.DecodeTime: f.Decode,
		catalogue.PreemptionsPerRequest: f.PreemptionsPerRequest, catalogue.NIXLTransferTime: f.NIXLTransfer,
	}
}

// sameNum: both unknown, or equal.
func sameNum(a, b analysis.Num) bool { return a.Known() == b.Known() && (!a.Known() || a == b) }

// TestJudgedHistograms: simulated replicas judged with every histogram's
// buckets and judged again with only JudgedHistograms' buckets (the
// others' bounds stripped, their _sum and _count kept) have the same
// states, reasons and actions at every evaluation, the hysteresis carried
// on each side; the judged histograms' figures are the same, the others'
// quantiles n/a with their means still known.
func TestJudgedHistograms(t *testing.T) {
	testutil.SkipShort(t, "four fleets of 12 replicas through three simulated minutes, each second analysed twice")
	tests := []struct {
		name     string
		scenario sim.Scenario
		engines  int
		sloE2E   time.Duration
	}{
		{"mixed, two engines each", sim.Mixed, 2, 0},
		{"spike", sim.Spike, 1, 0},
		{"preempting", sim.Preempting, 1, 0},
		{"mixed, with an e2e SLO", sim.Mixed, 1, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := analysis.DefaultConfig()
			cfg.SLOE2E = tt.sloE2E
			judged := analysis.JudgedHistograms(cfg)
			if slices.Contains(judged, catalogue.E2E) != (tt.sloE2E > 0) {
				t.Fatalf("judged %v with an e2e SLO of %s", judged, tt.sloE2E)
			}
			fleet, err := sim.NewFleet(sim.Options{Replicas: 12, Scenario: tt.scenario, Seed: 5,
				Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = tt.engines }})
			if err != nil {
				t.Fatal(err)
			}
			reps := fleet.Replicas()
			ingesters := make([]*page.Ingester, len(reps))
			for i := range ingesters {
				ingesters[i] = page.NewIngester()
			}
			history := make([][]catalogue.Sample, len(reps))
			start := time.Unix(1_800_000_000, 0)
			var prevAll, prevJudged *analysis.Report
			states := map[analysis.State]int{}
			judgedKnown := map[catalogue.Histogram]bool{}
			for step := range 180 {
				fleet.Advance(time.Second)
				at := start.Add(time.Duration(step+1) * time.Second)
				all := make([]catalogue.Readings, len(reps))
				lean := make([]catalogue.Readings, len(reps))
				for i, r := range reps {
					body, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
					if err != nil {
						t.Fatal(err)
					}
					s, err := ingesters[i].Ingest(body, "text/plain; version=0.0.4")
					if err != nil {
						t.Fatalf("replica %d at %s: %v", i, at, err)
					}
					s.Time = at
					history[i] = append(history[i], s)
					if n := len(history[i]); n > 45 {
						history[i] = history[i][n-45:]
					}
					name := "replica-" + string(rune('a'+i))
					all[i] = catalogue.Readings{Target: name, Samples: history[i]}
					lean[i] = catalogue.Readings{Target: name, Samples: analysis.WithBucketsOnly(history[i], judged...)}
				}
				allRep := analysis.Analyze(at, all, cfg, prevAll)
				leanRep := analysis.Analyze(at, lean, cfg, prevJudged)
				for i := range allRep.Replicas {
					a, l := &allRep.Replicas[i], &leanRep.Replicas[i]
					states[a.State]++
					if a.State != l.State || a.Action != l.Action || strings.Join(a.Reasons, "\n") != strings.Join(l.Reasons, "\n") {
						t.Fatalf("%s at %s: every bucket %s %q %q; judged buckets only %s %q %q",
							a.Target, at, a.State, a.Reasons, a.Action, l.State, l.Reasons, l.Action)
					}
					lq := quantilesOf(&l.Figures)
					for h, aq := range quantilesOf(&a.Figures) {
						if !sameNum(aq.Mean, lq[h].Mean) || !sameNum(aq.Observations, lq[h].Observations) {
							t.Errorf("%s at %s: %s mean %v of %v observations, %v of %v with judged buckets only",
								a.Target, at, h, aq.Mean, aq.Observations, lq[h].Mean, lq[h].Observations)
						}
						if slices.Contains(judged, h) {
							if !sameNum(aq.P50, lq[h].P50) || !sameNum(aq.P99, lq[h].P99) {
								t.Errorf("%s at %s: judged %s p50/p99 %v/%v, %v/%v with judged buckets only", a.Target, at, h, aq.P50, aq.P99, lq[h].P50, lq[h].P99)
							}
							judgedKnown[h] = judgedKnown[h] || aq.P99.Known()
						} else if lq[h].P50.Known() || lq[h].P99.Known() {
							t.Errorf("%s at %s: %s is not judged, yet its p50/p99 are %v/%v without its buckets", a.Target, at, h, lq[h].P50, lq[h].P99)
						}
					}
					if !sameNum(a.Figures.Goodput, l.Figures.Goodput) {
						t.Errorf("%s at %s: goodput %v, %v with judged buckets only", a.Target, at, a.Figures.Goodput, l.Figures.Goodput)
					}
				}
				prevAll, prevJudged = &allRep, &leanRep
			}
			t.Logf("states judged: %v; judged histograms with a p99: %v", states, judgedKnown)
			if !judgedKnown[catalogue.TTFT] || !judgedKnown[catalogue.ITL] || len(states) < 2 {
				t.Errorf("states %v, judged p99s known %v: want two states or more and TTFT and ITL p99s", states, judgedKnown)
			}
		})
	}
}
