package verdicts

import (
	"math"
	"slices"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// advance runs r for seconds of virtual time.
func advance(r *Replica, seconds float64) {
	for range int(math.Round(seconds / StepSeconds)) {
		r.Advance(StepSeconds)
	}
}

// TestModelQueue: the queue grows at about arrivals − capacity when the
// arrivals exceed what the cap finishes, and stays near empty below it;
// at the cap the replica finishes about its Capacity.
func TestModelQueue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		load      float64 // arrivals ÷ capacity
		wantQueue bool
	}{
		{"half", 0.5, false},
		{"below", 0.8, false},
		{"above", 1.3, true},
		{"far above", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := steady(base(), tc.load)
			r := NewReplica(c, 7)
			advance(r, 60)
			finishedBefore, waitingBefore := r.Finished, r.Steps[len(r.Steps)-1].Waiting
			advance(r, 120)
			last := r.Steps[len(r.Steps)-1]
			growth := float64(last.Waiting-waitingBefore) / 120
			rate := float64(r.Finished-finishedBefore) / 120
			if !tc.wantQueue {
				if last.Waiting > 5 || growth > 0.05 {
					t.Errorf("load %.1f: waiting %d (growing %.2f/s), want no queue", tc.load, last.Waiting, growth)
				}
				if math.Abs(rate-c.Arrivals(0)) > 0.1*c.Arrivals(0) {
					t.Errorf("load %.1f: finished %.2f/s, want the arrivals %.2f/s", tc.load, rate, c.Arrivals(0))
				}
				return
			}
			wantGrowth := c.Arrivals(0) - c.Capacity()
			if math.Abs(growth-wantGrowth) > 0.15*wantGrowth {
				t.Errorf("load %.1f: queue grows %.2f/s, want about %.2f/s", tc.load, growth, wantGrowth)
			}
			if math.Abs(rate-c.Capacity()) > 0.05*c.Capacity() {
				t.Errorf("load %.1f: finished %.2f/s at the cap, want Capacity %.2f/s", tc.load, rate, c.Capacity())
			}
			if last.Running != c.MaxNumSeqs {
				t.Errorf("load %.1f: running %d with a queue, want the cap %d", tc.load, last.Running, c.MaxNumSeqs)
			}
		})
	}
}

// TestModelPreemption: preemptions happen only when the KV cache cannot
// hold the batch the arrivals make.
func TestModelPreemption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		blocks  int
		load    float64
		preempt bool
	}{
		{"ample KV, full batch", 27000, 1.5, false},
		{"ample KV, light load", 27000, 0.6, false},
		{"KV holds the light batch", 2500, 0.4, false},
		{"KV short of the batch", 2000, 0.8, true},
		{"KV far short", 1200, 0.8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := steady(shortKV(base(), tc.blocks), tc.load)
			r := NewReplica(c, 3)
			advance(r, 120)
			preemptions, maxUsed := 0, 0
			for _, s := range r.Steps {
				preemptions += s.Preemptions
				maxUsed = max(maxUsed, s.KVBlocksUsed)
			}
			if (preemptions > 0) != tc.preempt {
				t.Errorf("%d preemptions with %d blocks at load %.1f, want any: %v", preemptions, tc.blocks, tc.load, tc.preempt)
			}
			if maxUsed > tc.blocks {
				t.Errorf("the batch held %d blocks of %d after preemption", maxUsed, tc.blocks)
			}
		})
	}
}

// TestModelTruth: each scenario's replicas are truly in the state the
// scenario is named for, most of the time after its first half minute,
// and never in the states it cannot make.
func TestModelTruth(t *testing.T) {
	b := base()
	restart := steady(b, 0.6)
	restart.Outages = []Outage{{At: 60, For: 8}}
	for _, tc := range []struct {
		name  string
		cfg   Config
		want  analysis.State
		share float64 // of the seconds from 30 s on
		never []analysis.State
	}{
		{"healthy", steady(b, 0.6), analysis.StateHealthy, 0.99, []analysis.State{analysis.StateFull, analysis.StatePreempting, analysis.StateSlow}},
		{"full", steady(b, 1.5), analysis.StateFull, 0.99, []analysis.State{analysis.StatePreempting, analysis.StateIdle}},
		{"preempting", steady(shortKV(b, 2000), 0.8), analysis.StatePreempting, 0.95, []analysis.State{analysis.StateIdle}},
		{"slow", perSecond(longPrompts(b, 14000), 2), analysis.StateSlow, 0.99, []analysis.State{analysis.StateFull, analysis.StatePreempting}},
		{"just under", perSecond(longPrompts(b, 7200), 3), analysis.StateHealthy, 0.99, []analysis.State{analysis.StateSlow, analysis.StateFull}},
		{"just over", perSecond(longPrompts(b, 9200), 3), analysis.StateSlow, 0.99, []analysis.State{analysis.StateFull, analysis.StateHealthy}},
		{"idle", perSecond(b, 0), analysis.StateIdle, 1, []analysis.State{analysis.StateHealthy}},
		{"restart", restart, analysis.StateHealthy, 0.85, []analysis.State{analysis.StateFull, analysis.StateSlow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReplica(tc.cfg, 11)
			count := map[analysis.State]int{}
			for sec := 1; sec <= 120; sec++ {
				advance(r, 1)
				truth := r.Truth(float64(sec), StepSeconds)
				if sec >= 30 {
					count[truth]++
				}
				if sec >= 30 && slices.Contains(tc.never, truth) {
					t.Errorf("second %d: truth %s", sec, truth)
				}
				down := sec > 60 && sec <= 68 && len(tc.cfg.Outages) > 0
				if (truth == analysis.StateDown) != down {
					t.Errorf("second %d: truth %s, down %v", sec, truth, down)
				}
			}
			if got := float64(count[tc.want]) / 91; got < tc.share {
				t.Errorf("truth %s in %.0f%% of the seconds, want ≥ %.0f%%: %v", tc.want, 100*got, 100*tc.share, count)
			}
		})
	}
}

// TestScenariosDecodeUnderITLSLO: the decode step of a full batch stays
// under the ITL objective in every scenario, so SLOW is judged on TTFT.
func TestScenariosDecodeUnderITLSLO(t *testing.T) {
	for _, sc := range Scenarios() {
		for i, c := range sc.Replicas {
			if step := c.Step(c.MaxNumSeqs); !(step < ITLSLO) {
				t.Errorf("%s, replica %d: decode step %.3fs at the cap, not under %.3fs", sc.Name, i+1, step, ITLSLO)
			}
		}
	}
}

// TestPage: the page the model exports reads back, through vtop's
// parser, as the model's state: the gauges, the KV capacity, the
// counters and vLLM's TTFT buckets; a restart sets the counters back.
func TestPage(t *testing.T) {
	c := steady(base(), 1.2)
	c.Outages = []Outage{{At: 40, For: 3}}
	r := NewReplica(c, 5)
	in := page.NewIngester()
	read := func() catalogue.Sample {
		t.Helper()
		body, err := r.Exporter.Page()
		if err != nil {
			t.Fatal(err)
		}
		s, err := in.Ingest(body, ContentType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	advance(r, 30)
	s := read()
	last := r.Steps[len(r.Steps)-1]
	if got := s.Total.Scalars[catalogue.Running]; got != float64(last.Running) {
		t.Errorf("running %v, want %d", got, last.Running)
	}
	if got := s.Total.Scalars[catalogue.Waiting]; got != float64(last.Waiting) {
		t.Errorf("waiting %v, want %d", got, last.Waiting)
	}
	if got, want := s.Total.Scalars[catalogue.KVCacheUsage], float64(last.KVBlocksUsed)/float64(c.KVBlocks); math.Abs(got-want) > 1e-9 {
		t.Errorf("KV usage %v, want %v", got, want)
	}
	if got, want := s.KVCapacityTokens, float64(c.KVBlocks*c.BlockSize); got != want {
		t.Errorf("KV capacity %v tokens, want %v", got, want)
	}
	if got := s.Total.Scalars[catalogue.FinishedRequests]; got != float64(r.Finished) {
		t.Errorf("finished %v, want %d", got, r.Finished)
	}
	ttft := s.Total.Histograms[catalogue.TTFT]
	if !slices.Equal(ttft.Bounds[:len(catalogue.TTFTBuckets)], catalogue.TTFTBuckets) {
		t.Errorf("TTFT bounds %v, want vLLM's %v", ttft.Bounds, catalogue.TTFTBuckets)
	}
	if ttft.Count != float64(len(r.FirstTokens)) {
		t.Errorf("TTFT count %v, want the %d first tokens", ttft.Count, len(r.FirstTokens))
	}
	before := s.Total.Scalars[catalogue.FinishedRequests]
	advance(r, 15) // through the outage and 2 s after it
	after := read()
	if !(after.Total.Scalars[catalogue.FinishedRequests] < before) {
		t.Errorf("finished %v after the restart, want below %v", after.Total.Scalars[catalogue.FinishedRequests], before)
	}
	if !(after.ProcessStartTime > s.ProcessStartTime) {
		t.Errorf("process start %v after the restart, was %v", after.ProcessStartTime, s.ProcessStartTime)
	}
}

// TestScore: the scorer on a hand-made timeline, against figures worked
// out by hand.
func TestScore(t *testing.T) {
	H, F, S := analysis.StateHealthy, analysis.StateFull, analysis.StateSlow
	repeat := func(s analysis.State, n int) []analysis.State { return slices.Repeat([]analysis.State{s}, n) }
	// Truth: 30 s healthy, 40 s full, 30 s healthy. Shown: healthy until
	// 34 s, slow (with prompt advice) to 39 s, full to 84 s, then healthy;
	// one stray slow second at 95 s.
	truth := slices.Concat(repeat(H, 30), repeat(F, 40), repeat(H, 30))
	shown := slices.Concat(repeat(H, 34), repeat(S, 5), repeat(F, 45), repeat(H, 10), repeat(S, 1), repeat(H, 5))
	action := make([]string, 100)
	for i := 34; i < 39; i++ {
		action[i] = "long prompts (mean 9,000 tokens): shorten them"
	}
	// vtop's own window figure over its SLO at seconds 6 (before the
	// least evidence), 20 and 90–92 (shown HEALTHY) and 51 (shown FULL).
	over := make([]bool, 100)
	for _, i := range []int{5, 19, 50, 89, 90, 91} {
		over[i] = true
	}
	tl := Timeline{Target: "a", Truth: truth, Shown: shown, Action: action, Reason: make([]string, 100),
		Running: make([]int, 100), Waiting: make([]int, 100), OverSLO: over}
	right := slices.Repeat([]float64{1}, 100)
	advice := slices.Concat(slices.Repeat([]float64{1}, 50), slices.Repeat([]float64{3}, 50))
	tally := NewTally()
	queued := slices.Concat(make([]bool, 30), slices.Repeat([]bool{true}, 70))
	tally.Add(Run{Scenario: "hand", Replicas: []Timeline{tl}, Advice: advice, Right: right, Queued: queued})

	// Seconds 11–100 count (90: the first LeastEvidence are not scored);
	// graces are seconds 31–40 and 71–80.
	if tally.ReplicaSeconds != 90 || tally.Grace != 20 || tally.Scored != 70 {
		t.Errorf("replica-s %d, grace %d, scored %d; want 90, 20, 70", tally.ReplicaSeconds, tally.Grace, tally.Scored)
	}
	// Wrong scored seconds: 81–84 (full shown, healthy truth) and 95.
	if tally.Right != 65 {
		t.Errorf("right %d, want 65", tally.Right)
	}
	// Shown healthy while full: 31–34, all in the grace.
	if tally.FalseHealthy != 0 || tally.FalseHealthyGrace != 4 {
		t.Errorf("false-HEALTHY %d (grace %d), want 0 (4)", tally.FalseHealthy, tally.FalseHealthyGrace)
	}
	if tally.SlowWhileFull != 5 || tally.SlowPromptWhileFull != 5 {
		t.Errorf("SLOW while FULL %d (prompt %d), want 5 (5)", tally.SlowWhileFull, tally.SlowPromptWhileFull)
	}
	// FULL shown 9 s after it began; HEALTHY 14 s after.
	if d := tally.Delays[F]; !slices.Equal(d, []int{9}) {
		t.Errorf("delays into FULL %v, want [9]", d)
	}
	if d := tally.Delays[H]; !slices.Equal(d, []int{14}) {
		t.Errorf("delays into HEALTHY %v, want [14]", d)
	}
	// Flaps: to SLOW at 35 (truth full since 31), to SLOW at 95, back
	// to HEALTHY at 96 is the truth's; to FULL at 40 and HEALTHY at 85
	// are the truth's states.
	if tally.Flaps != 2 {
		t.Errorf("flaps %d, want 2", tally.Flaps)
	}
	// Advice: seconds 11–100 scored, right in 11–50.
	if tally.AdviceScored != 90 || tally.AdviceWithin != 40 {
		t.Errorf("advice %d of %d within, want 40 of 90", tally.AdviceWithin, tally.AdviceScored)
	}
	// Overshoot: from the first queued second (31) on, 70 reports; 3 for
	// a right count of 1 is two replicas over, in 51–100.
	if tally.AfterFull != 70 || tally.Overshoot != 50 {
		t.Errorf("overshoot %d of %d, want 50 of 70", tally.Overshoot, tally.AfterFull)
	}
	// The advice changed once (1 → 3 at 51) over the 90 seconds counted.
	if tally.AdviceChanges != 1 || tally.AdviceSeconds != 90 {
		t.Errorf("advice changes %d over %d s, want 1 over 90", tally.AdviceChanges, tally.AdviceSeconds)
	}
	// One replica over is a ceil's edge, not an overshoot; the 10 s after
	// the right count fell are not counted.
	two := NewTally()
	fell := slices.Concat(slices.Repeat([]float64{4}, 60), slices.Repeat([]float64{2}, 40))
	said := slices.Concat(slices.Repeat([]float64{5}, 60), slices.Repeat([]float64{4}, 10), slices.Repeat([]float64{2}, 30))
	two.Add(Run{Scenario: "hand", Replicas: []Timeline{tl}, Advice: said, Right: fell, Queued: queued})
	if two.AfterFull != 60 || two.Overshoot != 0 {
		t.Errorf("overshoot %d of %d, want 0 of 60", two.Overshoot, two.AfterFull)
	}
	// HEALTHY beside its own figure over the SLO: seconds 20 and 90–92,
	// grace or not; the healthy seconds while truly FULL are in a grace.
	if tally.HealthyWrong != 4 {
		t.Errorf("HEALTHY over SLO or not healthy %d, want 4", tally.HealthyWrong)
	}

	// Truly RECOVERING from 21 s, shown HEALTHY throughout: every scored
	// second of it (31–60) is false-HEALTHY and HEALTHY while not healthy.
	R := analysis.StateRecovering
	recovering := Timeline{Target: "b", Truth: slices.Concat(repeat(H, 20), repeat(R, 40)), Shown: repeat(H, 60),
		Action: make([]string, 60), Reason: make([]string, 60), Running: make([]int, 60), Waiting: make([]int, 60), OverSLO: make([]bool, 60)}
	tally = NewTally()
	tally.Add(Run{Scenario: "hand", Replicas: []Timeline{recovering}, Advice: right[:60], Right: right[:60]})
	if tally.FalseHealthy != 30 || tally.HealthyWrong != 30 {
		t.Errorf("shown HEALTHY while truly RECOVERING: false-HEALTHY %d, HEALTHY while not healthy %d; want 30, 30", tally.FalseHealthy, tally.HealthyWrong)
	}
}

// TestTruthPricesPreemption: the truth is PREEMPTING when preemption's
// cost over the last PreemptingPriced seconds is material (its recomputed
// tokens against the tokens generated, or the share of requests finished
// that it preempted) and a preemption is recent; a rarer preemption
// leaves the replica in its other state, and a preemption is itself proof
// that the batch is at the KV cache's capacity.
func TestTruthPricesPreemption(t *testing.T) {
	type preemption struct{ at, recomputed int } // step index, tokens
	for _, tc := range []struct {
		name        string
		preemptions []preemption
		waiting     int
		want        analysis.State
	}{
		// 2,000 tokens/s generated, 9 requests/s finished over 30 s:
		// 60,000 tokens and 270 requests.
		{"one preemption in 30 s: 2 % recomputed, 1 in 270 requests", []preemption{{295, 1100}}, 0, analysis.StateHealthy},
		{"one preemption at a full batch stays FULL", []preemption{{285, 1100}}, 20, analysis.StateFull},
		{"six in 30 s: 11 % recomputed", []preemption{{50, 1100}, {100, 1100}, {150, 1100}, {200, 1100}, {250, 1100}, {295, 1100}}, 0, analysis.StatePreempting},
		{"14 short ones: 2 % recomputed, 5 % of requests", func() []preemption {
			var p []preemption
			for i := range 14 {
				p = append(p, preemption{20 + 20*i, 90})
			}
			return p
		}(), 0, analysis.StatePreempting},
		{"material, but none in the last 10 s", []preemption{{50, 4000}, {100, 4000}, {150, 4000}}, 0, analysis.StateHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			r := &Replica{cfg: c}
			for k := range 300 {
				// A queue stands at the cap, or none below it.
				s := StepRecord{End: float64(k+1) * StepSeconds, Up: true, Running: 60, Waiting: tc.waiting, Generated: 200, Finished: 1, Arrivals: 1}
				if tc.waiting > 0 {
					s.Running = c.MaxNumSeqs
				}
				if k%10 == 9 {
					s.Finished = 0 // 9 a second
				}
				for _, p := range tc.preemptions {
					if p.at == k {
						// The preempted request leaves the batch below the cap.
						s.Preemptions, s.Recomputed, s.Running = 1, p.recomputed, s.Running-1
					}
				}
				r.Steps = append(r.Steps, s)
			}
			if got := r.Truth(30, StepSeconds); got != tc.want {
				t.Errorf("truth %s, want %s", got, tc.want)
			}
		})
	}
}

// TestModelStall: through a stall the process stays up and scraped, no
// token is generated and no request admitted or finished, the batch
// stands and the arrivals join the queue; the truth is STALLED from
// StalledAfter into it to its end, and after it the backlog makes the
// replica FULL.
func TestModelStall(t *testing.T) {
	c := steady(base(), 0.6)
	c.Stalls = []Outage{{At: 100, For: 60}}
	r := NewReplica(c, 3)
	advance(r, 100)
	before := r.Steps[len(r.Steps)-1]
	finished, page0 := r.Finished, mustPage(t, r)
	advance(r, 30)
	during := r.Steps[len(r.Steps)-1]
	if !during.Up || during.Generated != 0 || r.Finished != finished || during.Running != before.Running || !(during.Waiting > before.Waiting+100) {
		t.Errorf("30 s into the stall: up %v, tokens %d, finished %d → %d, running %d → %d, waiting %d → %d",
			during.Up, during.Generated, finished, r.Finished, before.Running, during.Running, before.Waiting, during.Waiting)
	}
	if page1 := mustPage(t, r); tokensOf(t, page1) != tokensOf(t, page0) {
		t.Errorf("the page's generation tokens moved under the stall: %v → %v", tokensOf(t, page0), tokensOf(t, page1))
	}
	for _, tc := range []struct {
		at   float64
		want analysis.State
	}{
		{99, analysis.StateHealthy},
		{100 + StalledAfter - 1, analysis.StateHealthy},
		{100 + StalledAfter, analysis.StateStalled},
		{130, analysis.StateStalled},
	} {
		if got := r.Truth(tc.at, StepSeconds); got != tc.want {
			t.Errorf("truth at %v s: %v, want %v", tc.at, got, tc.want)
		}
	}
	advance(r, 40)
	if got := r.Truth(170, StepSeconds); got != analysis.StateFull {
		t.Errorf("truth 10 s after the stall: %v, want FULL (its backlog at the cap)", got)
	}
	if r.Finished == finished {
		t.Error("nothing finished after the stall")
	}
}

// mustPage is the replica's page read by vtop's parser.
func mustPage(t *testing.T, r *Replica) catalogue.Sample {
	t.Helper()
	body, err := r.Exporter.Page()
	if err != nil {
		t.Fatal(err)
	}
	s, err := page.NewIngester().Ingest(body, ContentType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokensOf is a page's generation token counter.
func tokensOf(t *testing.T, s catalogue.Sample) float64 {
	t.Helper()
	return s.Total.Scalars[catalogue.GenerationTokens]
}

// TestModelAborts: clients that give up after AbortAfter seconds in the
// queue keep it bounded; the batch still runs at its cap, finishing its
// Capacity successfully, and the rest of the arrivals are counted on the
// page as finished with reason abort.
func TestModelAborts(t *testing.T) {
	c := steady(base(), 1.6)
	c.AbortAfter = 5
	r := NewReplica(c, 11)
	advance(r, 60)
	finishedBefore, abortedBefore := r.Finished, r.Aborted
	advance(r, 120)
	ok := float64((r.Finished-r.Aborted)-(finishedBefore-abortedBefore)) / 120
	aborted := float64(r.Aborted-abortedBefore) / 120
	if math.Abs(ok-c.Capacity()) > 0.05*c.Capacity() {
		t.Errorf("successful %.2f/s at the cap, want Capacity %.2f/s", ok, c.Capacity())
	}
	if want := c.Arrivals(0) - c.Capacity(); math.Abs(aborted-want) > 0.15*want {
		t.Errorf("aborted %.2f/s, want about the arrivals beyond the capacity, %.2f/s", aborted, want)
	}
	if max := c.Arrivals(0) * c.AbortAfter * 1.2; float64(r.Steps[len(r.Steps)-1].Waiting) > max {
		t.Errorf("waiting %d, want at most about %.0f: the clients give up", r.Steps[len(r.Steps)-1].Waiting, max)
	}
	body, err := r.Exporter.Page()
	if err != nil {
		t.Fatal(err)
	}
	s, err := page.NewIngester().Ingest(body, ContentType)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Total.Finished[catalogue.FinishAbort]; got != float64(r.Aborted) {
		t.Errorf("the page counts %v aborted, want %d", got, r.Aborted)
	}
}
