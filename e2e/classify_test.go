// Package e2e proves vtop's pipeline end to end, in tests only: a
// simulated vLLM fleet served over real HTTP, the real scrape client or
// poller, the page parser, the monitor and the analysis, together; and the
// built binary, driven in a real terminal (tmux), against this host's
// servers, through recordings and through a real Prometheus. The soak
// test (build tag soak) runs the same pipeline for minutes.
package e2e

import (
	"context"
	"math"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// These tests prove vtop's classification end to end: a simulated vLLM
// fleet plays in virtual time, each replica serves its real /metrics page
// over real HTTP on loopback, the real scrape client fetches it, the real
// ingester reduces it to a Sample and the real analysis classifies it, one
// evaluation per virtual second with the previous report carried over (so
// hysteresis applies). Virtual time makes minutes of traffic cost
// milliseconds; only the hang test waits on a real timeout.

// simEpoch is the wall time of virtual time 0: samples are stamped with it
// plus the fleet's virtual clock.
var simEpoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	// warmUp is the virtual time played before the first scrape, so that
	// queues and caches reach the scenario's steady state.
	warmUp = 3 * time.Minute
	// scrapeSteps is how many one-second scrapes follow the warm-up: one
	// more than the 30 s window, so the last evaluations see a full window.
	scrapeSteps = 35
	// scrapeTimeout is the per-scrape timeout of a replica given a hang or
	// slow fault, which it turns into a timely error; the others get
	// healthyTimeout, so that a loaded machine does not fail them.
	scrapeTimeout  = 250 * time.Millisecond
	healthyTimeout = 5 * time.Second
)

// fleetRun watches a simulated fleet the way vtop does, one virtual
// second at a time.
type fleetRun struct {
	t         *testing.T
	fleet     *sim.Fleet
	client    *scrape.Client
	targets   []scrape.Target
	ingesters []*page.Ingester
	bodies    [][]byte
	timeouts  []time.Duration
	inputs    []catalogue.Readings
	cfg       analysis.Config
	prev      *analysis.Report
	// truth holds, per replica, the simulator's own accounting at each
	// scrape: what the analysis must agree with.
	truth [][]sim.Stats
}

// newFleetRun builds the fleet of opts in virtual mode and serves each
// replica's handler on its own loopback server.
func newFleetRun(t *testing.T, opts sim.Options) *fleetRun {
	t.Helper()
	opts.Epoch = simEpoch
	fleet, err := sim.NewFleet(opts)
	if err != nil {
		t.Fatalf("sim.NewFleet: %v", err)
	}
	client, err := scrape.NewClient(scrape.ClientOptions{})
	if err != nil {
		t.Fatalf("scrape.NewClient: %v", err)
	}
	r := &fleetRun{t: t, fleet: fleet, client: client, cfg: analysis.DefaultConfig()}
	for _, rep := range fleet.Replicas() {
		srv := httptest.NewServer(rep.Handler())
		t.Cleanup(srv.Close)
		// A hanging handler only ends when the fault changes or the client
		// leaves; clear faults first so Close does not wait on it.
		t.Cleanup(func() { _ = rep.SetFault(sim.FaultNone) })
		target, err := scrape.ParseTarget(srv.URL + rep.MetricsPath())
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", srv.URL, err)
		}
		r.targets = append(r.targets, target)
		r.ingesters = append(r.ingesters, page.NewIngester())
		r.bodies = append(r.bodies, nil)
		r.timeouts = append(r.timeouts, healthyTimeout)
		r.inputs = append(r.inputs, catalogue.Readings{Target: target.Name})
		r.truth = append(r.truth, nil)
	}
	return r
}

// now is the fleet's virtual time as a wall time.
func (r *fleetRun) now() time.Time { return simEpoch.Add(r.fleet.Replicas()[0].Now()) }

// step advances the fleet by d, scrapes every replica once and evaluates.
func (r *fleetRun) step(d time.Duration) analysis.Report {
	r.t.Helper()
	r.fleet.Advance(d)
	now := r.now()
	for i := range r.targets {
		r.truth[i] = append(r.truth[i], r.fleet.Replicas()[i].Stats())
		r.inputs[i].Samples = r.keepRecent(append(r.inputs[i].Samples, r.take(i, now)), now)
	}
	rep := analysis.Analyze(now, r.inputs, r.cfg, r.prev)
	r.prev = &rep
	return rep
}

// steps plays n one-second steps and returns every report.
func (r *fleetRun) steps(n int) []analysis.Report {
	r.t.Helper()
	out := make([]analysis.Report, 0, n)
	for range n {
		out = append(out, r.step(time.Second))
	}
	return out
}

// take scrapes replica i as the poller does: fetch, ingest, stamp.
func (r *fleetRun) take(i int, now time.Time) catalogue.Sample {
	body, contentType, err := r.client.Fetch(r.t.Context(), r.targets[i], r.timeouts[i], r.bodies[i])
	r.bodies[i] = body
	var s catalogue.Sample
	if err == nil {
		s, err = r.ingesters[i].Ingest(body, contentType)
	}
	if err != nil {
		s = catalogue.Sample{Err: err.Error()}
		if se, ok := err.(*scrape.Error); ok {
			s.Err, s.TimedOut = se.Problem, se.TimedOut
		}
	}
	s.Time = now
	return s
}

// keepRecent drops samples older than two windows, as a bounded ring would.
func (r *fleetRun) keepRecent(samples []catalogue.Sample, now time.Time) []catalogue.Sample {
	cut := now.Add(-2 * r.cfg.Window)
	i := 0
	for i < len(samples) && samples[i].Time.Before(cut) {
		i++
	}
	return samples[i:]
}

// replica returns the report of target i.
func (r *fleetRun) replica(rep analysis.Report, i int) analysis.ReplicaReport {
	r.t.Helper()
	for _, rr := range rep.Replicas {
		if rr.Target == r.targets[i].Name {
			return rr
		}
	}
	r.t.Fatalf("no report for %s", r.targets[i].Name)
	return analysis.ReplicaReport{}
}

// digits finds a number in a reason.
var digits = regexp.MustCompile(`[0-9]`)

// checkVerdict checks that a replica shows want with evidence: reasons
// with numbers in them, none of them a pending note, and a first action
// exactly when the state calls for one.
func checkVerdict(t *testing.T, rr analysis.ReplicaReport, want analysis.State) {
	t.Helper()
	if rr.State != want {
		t.Fatalf("%s: state %s, want %s; reasons %q", rr.Target, rr.State, want, rr.Reasons)
	}
	if len(rr.Reasons) == 0 {
		t.Errorf("%s: %s without reasons", rr.Target, rr.State)
	}
	for _, reason := range rr.Reasons {
		if !digits.MatchString(reason) {
			t.Errorf("%s: reason %q carries no number", rr.Target, reason)
		}
		if strings.HasPrefix(reason, "pending: ") {
			t.Errorf("%s: still pending another state: %q", rr.Target, reason)
		}
	}
	needsAction := want != analysis.StateHealthy && want != analysis.StateIdle
	if needsAction && rr.Action == "" {
		t.Errorf("%s: %s without a first action", rr.Target, rr.State)
	}
	if !needsAction && rr.Action != "" {
		t.Errorf("%s: %s with action %q, want none", rr.Target, rr.State, rr.Action)
	}
}

// figureChecks prove, beyond the label, that the numbers behind it are
// those of the state.
var figureChecks = map[analysis.State]func(*testing.T, analysis.Figures){
	analysis.StateHealthy: func(t *testing.T, f analysis.Figures) {
		if !(f.RequestsPerSecond > 1) || !(f.TTFT.P99 < 1) || f.PreemptionsPerSecond != 0 {
			t.Errorf("healthy figures: %.2f req/s, p99 TTFT %.2fs, %.2f preemptions/s", f.RequestsPerSecond, f.TTFT.P99, f.PreemptionsPerSecond)
		}
	},
	analysis.StateFull: func(t *testing.T, f analysis.Figures) {
		// The queue grows: fewer finish than arrive.
		if !(f.Running >= 240) || !(f.Waiting > 100) || !(f.Efficiency < 1) {
			t.Errorf("full figures: running %v, waiting %v, efficiency %.2f", f.Running, f.Waiting, f.Efficiency)
		}
	},
	analysis.StateSlow: func(t *testing.T, f analysis.Figures) {
		if !(f.TTFT.P99 > 1) || !(f.MeanPromptTokens > 2000) {
			t.Errorf("slow figures: p99 TTFT %.2fs, mean prompt %.0f tokens", f.TTFT.P99, f.MeanPromptTokens)
		}
	},
	analysis.StatePreempting: func(t *testing.T, f analysis.Figures) {
		if !(f.PreemptionsPerSecond > 0) || !(f.RecomputedTokensPerSecond > 0) || !(f.KVCacheUsage > 0.9) {
			t.Errorf("preempting figures: %.2f preemptions/s, %.0f recomputed tokens/s, KV %.2f", f.PreemptionsPerSecond, f.RecomputedTokensPerSecond, f.KVCacheUsage)
		}
	},
	analysis.StateIdle: func(t *testing.T, f analysis.Figures) {
		// A V1 server pre-creates its finish-reason series, so the rate is
		// a true 0; a V0 server has none before its first request: n/a.
		if (f.RequestsPerSecond.Known() && f.RequestsPerSecond != 0) || f.Running != 0 || f.Waiting != 0 {
			t.Errorf("idle figures: %v req/s, running %v, waiting %v", f.RequestsPerSecond, f.Running, f.Waiting)
		}
	},
}

// stableSteps is how many of the last evaluations must all show the
// scenario's state: a label that flickers is not a classification.
const stableSteps = 5

func TestScenarioClassification(t *testing.T) {
	tests := []struct {
		scenario sim.Scenario
		version  string
		want     analysis.State
	}{
		{sim.Healthy, sim.V1, analysis.StateHealthy},
		{sim.Full, sim.V1, analysis.StateFull},
		{sim.Slow, sim.V1, analysis.StateSlow},
		{sim.Preempting, sim.V1, analysis.StatePreempting},
		{sim.Idle, sim.V1, analysis.StateIdle},
		// V0-era pages: old names, read through the scraper's alias table.
		{sim.Healthy, sim.V0, analysis.StateHealthy},
		{sim.Full, sim.V0, analysis.StateFull},
		{sim.Slow, sim.V0, analysis.StateSlow},
		{sim.Preempting, sim.V0, analysis.StatePreempting},
		{sim.Idle, sim.V0, analysis.StateIdle},
	}
	for _, tt := range tests {
		t.Run(string(tt.scenario)+"/"+tt.version, func(t *testing.T) {
			r := newFleetRun(t, sim.Options{Replicas: 1, Scenario: tt.scenario, Seed: 1, VLLMVersion: tt.version})
			r.fleet.Advance(warmUp)
			reports := r.steps(scrapeSteps)
			for _, rep := range reports[len(reports)-stableSteps:] {
				if got := rep.Replicas[0].State; got != tt.want {
					t.Errorf("%s: state %s, want %s (reasons %q)", rep.Time.Format("15:04:05"), got, tt.want, rep.Replicas[0].Reasons)
				}
			}
			last := reports[len(reports)-1].Replicas[0]
			checkVerdict(t, last, tt.want)
			if last.WarmingUp || last.Error != "" || last.Restarted {
				t.Errorf("warming up %v, error %q, restarted %v", last.WarmingUp, last.Error, last.Restarted)
			}
			figureChecks[tt.want](t, last.Figures)
			r.checkRequestRate(t, 0, last)
		})
	}
}

// checkRequestRate compares vtop's requests/s of replica i with the
// simulator's own count of finished requests. The window holds exactly the
// last window-seconds of one-second scrapes, its first and last on its
// edges, so Prometheus' rate() has nothing to extrapolate and both agree
// to rounding.
func (r *fleetRun) checkRequestRate(t *testing.T, i int, rr analysis.ReplicaReport) {
	t.Helper()
	truth := r.truth[i]
	span := int(r.cfg.Window / time.Second)
	if len(truth) <= span {
		t.Fatalf("%d scrapes, need more than %d", len(truth), span)
	}
	want := (truth[len(truth)-1].Finished - truth[len(truth)-1-span].Finished) / float64(span)
	if got := rr.RequestsPerSecond.Float(); math.Abs(got-want) > 1e-9*max(1, want) {
		t.Errorf("requests/s %v, the simulator finished %v/s over the window", got, want)
	}
}

// mixedStates is the state of replica i of the mixed scenario, as the
// simulator defines it (sim's mixedOrder): i%4 = 0 healthy (replica 0 with
// two data-parallel engines), 1 full (replica 1 with prefix caching and
// speculative decoding), 2 slow, 3 preempting.
var mixedStates = [...]analysis.State{analysis.StateHealthy, analysis.StateFull, analysis.StateSlow, analysis.StatePreempting}

func TestMixedFleet(t *testing.T) {
	const replicas = len(mixedStates)
	r := newFleetRun(t, sim.Options{Replicas: replicas, Scenario: sim.Mixed, Seed: 1})
	r.fleet.Advance(warmUp)
	reports := r.steps(scrapeSteps)
	last := reports[len(reports)-1]
	for i := range replicas {
		want := mixedStates[i%len(mixedStates)]
		rr := r.replica(last, i)
		t.Run(want.String(), func(t *testing.T) {
			checkVerdict(t, rr, want)
			figureChecks[want](t, rr.Figures)
			r.checkRequestRate(t, i, rr)
		})
	}
	t.Run("two engines", func(t *testing.T) {
		rr := r.replica(last, 0)
		if len(rr.Engines) != 2 {
			t.Fatalf("%d engine reports, want 2", len(rr.Engines))
		}
		sum := rr.Engines[0].RequestsPerSecond + rr.Engines[1].RequestsPerSecond
		if math.Abs(float64(sum-rr.RequestsPerSecond)) > 1e-9 {
			t.Errorf("engines finish %v + %v req/s, the replica %v", rr.Engines[0].RequestsPerSecond, rr.Engines[1].RequestsPerSecond, rr.RequestsPerSecond)
		}
	})
	t.Run("prefix cache and speculative decoding", func(t *testing.T) {
		f := r.replica(last, 1).Figures
		// The simulator draws a hit share of 0.4 × U(0.5, 1.5) per prompt
		// and accepts each draft token with probability 0.7.
		if !(f.PrefixCacheHitRate > 0.2 && f.PrefixCacheHitRate < 0.6) {
			t.Errorf("prefix cache hit rate %v, want about 0.4", f.PrefixCacheHitRate)
		}
		if !(f.SpecDecodeAcceptanceRate > 0.3 && f.SpecDecodeAcceptanceRate < 0.9) {
			t.Errorf("speculative decoding acceptance %v, want between 0.3 and 0.9", f.SpecDecodeAcceptanceRate)
		}
	})
	if got := last.Fleet.States; got["healthy"] != 1 || got["full"] != 1 || got["slow"] != 1 || got["preempting"] != 1 {
		t.Errorf("fleet state counts %v", got)
	}
}

// TestRestartKeepsRatesSane restarts one replica in the middle of a steady
// run: its counters drop to zero and its process start time changes. The
// rates must read the reset as Prometheus does (no negative rate, no spike
// of the whole counter) and the report must say Restarted while the
// restart is inside the window, and only then.
func TestRestartKeepsRatesSane(t *testing.T) {
	r := newFleetRun(t, sim.Options{Replicas: 2, Scenario: sim.Healthy, Seed: 3})
	r.fleet.Advance(warmUp)
	before := r.replica(r.steps(scrapeSteps)[scrapeSteps-1], 0)
	if before.Restarted || !(before.RequestsPerSecond > 1) || !(before.GenerationTokensPerSecond > 100) {
		t.Fatalf("before the restart: restarted %v, %v req/s, %v tokens/s", before.Restarted, before.RequestsPerSecond, before.GenerationTokensPerSecond)
	}
	lastOld := r.now() // the newest sample of the old process
	if err := r.fleet.Replicas()[0].SetFault(sim.FaultRestart); err != nil {
		t.Fatal(err)
	}
	for range 2 * int(r.cfg.Window/time.Second) {
		rep := r.step(time.Second)
		rr := r.replica(rep, 0)
		inWindow := !lastOld.Before(rep.Time.Add(-r.cfg.Window))
		if rr.Restarted != inWindow {
			t.Errorf("%s: restarted %v, want %v (last sample of the old process at %s)", rep.Time.Format("15:04:05"), rr.Restarted, inWindow, lastOld.Format("15:04:05"))
		}
		for name, pair := range map[string][2]analysis.Num{
			"requests/s":          {rr.RequestsPerSecond, before.RequestsPerSecond},
			"generation tokens/s": {rr.GenerationTokensPerSecond, before.GenerationTokensPerSecond},
			"prompt tokens/s":     {rr.PromptTokensPerSecond, before.PromptTokensPerSecond},
		} {
			if got, was := pair[0], pair[1]; !(got >= 0) || got >= 2*was {
				t.Errorf("%s: %s %v after the restart, %v before", rep.Time.Format("15:04:05"), name, got, was)
			}
		}
		if rr.State == analysis.StateDown || rr.Error != "" {
			t.Errorf("%s: a restart is not an outage: %s %q", rep.Time.Format("15:04:05"), rr.State, rr.Error)
		}
		if other := r.replica(rep, 1); other.Restarted {
			t.Errorf("%s: the other replica reports a restart", rep.Time.Format("15:04:05"))
		}
	}
}

// TestFailingScrapeIsolated switches one replica of three into each fault
// that fails a scrape: it must be DOWN at once (DOWN skips hysteresis)
// with a clear error free of control characters, while the others keep
// their state and figures. A scrape with no answer within the timeout is
// late, not DOWN, until it repeats 3 times: the replica keeps its
// verdict, marked late, and counts up.
func TestFailingScrapeIsolated(t *testing.T) {
	tests := []struct {
		fault   sim.Fault
		wantErr string
	}{
		{sim.FaultHTTP500, "HTTP 500"},
		{sim.FaultTruncated, "connection closed by the server"},
		{sim.FaultGarbage, "parse error at line"},
		{sim.FaultHang, "no answer within " + scrapeTimeout.String()},
		{sim.FaultSlow, "no answer within " + scrapeTimeout.String()},
		// Handler mode cannot refuse a connection; it drops it unanswered
		// (TestDownRefusesConnections covers a closed listener).
		{sim.FaultDown, "connection closed by the server"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			r := newFleetRun(t, sim.Options{Replicas: 3, Scenario: sim.Healthy, Seed: 1})
			r.fleet.Advance(warmUp)
			r.steps(scrapeSteps)
			r.timeouts[1] = scrapeTimeout
			if err := r.fleet.Replicas()[1].SetFault(tt.fault); err != nil {
				t.Fatal(err)
			}
			timesOut := strings.HasPrefix(tt.wantErr, "no answer within")
			for k := range 3 {
				rep := r.step(time.Second)
				sick := r.replica(rep, 1)
				if !strings.Contains(sick.Error, tt.wantErr) {
					t.Errorf("error %q, want it to contain %q", sick.Error, tt.wantErr)
				}
				checkPrintable(t, append([]string{sick.Error, sick.Action}, sick.Reasons...))
				wantDown := 1
				if timesOut && k < 2 {
					// Late, not yet proven down: the verdict before it.
					checkVerdict(t, sick, analysis.StateHealthy)
					wantNote := []string{"(1 in a row)", "(2 in a row)"}[k]
					if !sick.Late || !strings.Contains(analysis.LateNote(&sick), wantNote) {
						t.Errorf("late %v, note %q; want late with %q", sick.Late, analysis.LateNote(&sick), wantNote)
					}
					wantDown = 0
				} else {
					checkVerdict(t, sick, analysis.StateDown)
					wantFailed := []string{"1 failed in a row", "2 failed in a row", "3 failed in a row"}[k]
					if !strings.Contains(strings.Join(sick.Reasons, " "), wantFailed) {
						t.Errorf("reasons %q, want %q", sick.Reasons, wantFailed)
					}
				}
				for _, i := range []int{0, 2} {
					rr := r.replica(rep, i)
					checkVerdict(t, rr, analysis.StateHealthy)
					r.checkRequestRate(t, i, rr)
				}
				if rep.Fleet.Down != wantDown || rep.Fleet.Up != 3-wantDown {
					t.Errorf("fleet: %d down, %d up; want %d and %d", rep.Fleet.Down, rep.Fleet.Up, wantDown, 3-wantDown)
				}
			}
		})
	}
}

// checkPrintable fails on any text meant for the terminal that is not safe
// to draw (the garbage fault serves escape sequences).
func checkPrintable(t *testing.T, texts []string) {
	t.Helper()
	if s, ok := firstUnsafe(texts...); ok {
		t.Errorf("text not safe to draw: %q", s)
	}
}

// TestDownRefusesConnections serves the fleet on real listeners (the sim's
// own servers, real-time mode on a clock the test moves) and scrapes it
// with the real Poller: a replica whose listener is closed is DOWN with
// "connection refused" while the others keep their figures, and it is
// back as soon as it listens again.
func TestDownRefusesConnections(t *testing.T) {
	clock := testutil.NewClock(simEpoch)
	fleet, err := sim.NewFleet(sim.Options{Replicas: 3, Scenario: sim.Healthy, Seed: 1, Epoch: simEpoch, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(warmUp)
	clock.Add(warmUp)
	targets := parseTargets(t, testutil.ServeFleet(t.Context(), t, fleet))
	// A long interval: only ScrapeNow scrapes, once per virtual second.
	poller, err := scrape.NewPoller(targets, scrape.Options{
		// ScrapeNow drives the scrapes, one a virtual second: the interval
		// never fires, so the rings are sized for the window here.
		Interval: time.Hour, Timeout: 2 * time.Second, History: scrapeSteps + 2, Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = poller.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	cfg := analysis.DefaultConfig()
	var inputs []catalogue.Readings
	var prev *analysis.Report
	step := func() analysis.Report {
		clock.Add(time.Second)
		<-poller.Refresh()
		inputs = poller.Readings(inputs)
		rep := analysis.Analyze(clock.Now(), inputs, cfg, prev)
		prev = &rep
		return rep
	}
	name := func(i int) string { return targets[i].Name }
	find := func(rep analysis.Report, i int) analysis.ReplicaReport {
		for _, rr := range rep.Replicas {
			if rr.Target == name(i) {
				return rr
			}
		}
		t.Fatalf("no report for %s", name(i))
		return analysis.ReplicaReport{}
	}
	for range scrapeSteps {
		step()
	}
	if err := fleet.Replicas()[1].SetFault(sim.FaultDown); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rep := step()
		down := find(rep, 1)
		checkVerdict(t, down, analysis.StateDown)
		if down.Error != "connection refused" {
			t.Errorf("error %q, want %q", down.Error, "connection refused")
		}
		for _, i := range []int{0, 2} {
			rr := find(rep, i)
			checkVerdict(t, rr, analysis.StateHealthy)
			if !(rr.RequestsPerSecond > 1) {
				t.Errorf("%s: %v req/s while another replica is down", rr.Target, rr.RequestsPerSecond)
			}
		}
	}
	if err := fleet.Replicas()[1].SetFault(sim.FaultNone); err != nil {
		t.Fatal(err)
	}
	back := find(step(), 1)
	if back.State == analysis.StateDown || back.Error != "" {
		t.Errorf("listening again, still %s %q", back.State, back.Error)
	}
}

// spikePhases are the states a spike replica must pass through, in order,
// within one 6-minute cycle; SLOW (latency while the queue drains) may come
// between them.
var spikePhases = []analysis.State{analysis.StateHealthy, analysis.StateFull, analysis.StatePreempting, analysis.StateHealthy}

// TestSpikeWalksThroughStates plays one cycle of the spike scenario and
// checks the states shown follow healthy → full → preempting → healthy.
func TestSpikeWalksThroughStates(t *testing.T) {
	const cycle = 6 * 60 // seconds
	for _, seed := range []uint64{1, 2} {
		r := newFleetRun(t, sim.Options{Replicas: 1, Scenario: sim.Spike, Seed: seed})
		var seen []analysis.State
		var preemptions float64
		for range cycle {
			rr := r.step(time.Second).Replicas[0]
			if len(seen) == 0 || seen[len(seen)-1] != rr.State {
				seen = append(seen, rr.State)
			}
			if rr.State == analysis.StatePreempting {
				// Mid-walk a next state may be pending (hysteresis), so
				// check the evidence, not the absence of a pending note.
				if rr.Action == "" || len(rr.Reasons) == 0 || !digits.MatchString(rr.Reasons[0]) {
					t.Errorf("preempting without numbers or action: %q %q", rr.Reasons, rr.Action)
				}
				preemptions = max(preemptions, rr.PreemptionsPerSecond.Float())
			}
		}
		next := 0
		for _, s := range seen {
			if next < len(spikePhases) && s == spikePhases[next] {
				next++
			}
		}
		if next < len(spikePhases) {
			t.Errorf("seed %d: states %v, want %v in this order", seed, seen, spikePhases)
		}
		if seen[len(seen)-1] != analysis.StateHealthy {
			t.Errorf("seed %d: ends the cycle %s, want healthy again", seed, seen[len(seen)-1])
		}
		t.Logf("seed %d: %v, peak %.2f preemptions/s", seed, seen, preemptions)
	}
}
