package verdicts

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/page"
)

// StepSeconds is the model's step in virtual time.
const StepSeconds = 0.1

// scrapeTimeout is the scrape timeout a late scrape ran past (vtop's
// default at a 1 s interval).
const scrapeTimeout = 800 * time.Millisecond

// epoch is virtual time 0 as the scrapes' clock reads it.
var epoch = time.Unix(startEpoch, 0).UTC()

// Timeline is one replica over one run: per second (index 0 is second 1)
// the truth and what vtop showed.
type Timeline struct {
	// Target is the replica's name in the readings.
	Target string
	// Truth is the model's true state, Shown the state vtop reported.
	Truth, Shown []analysis.State
	// Action and Reason are vtop's first action and first reason.
	Action, Reason []string
	// Running and Waiting are the model's gauges at each second.
	Running, Waiting []int
	// OverSLO is set at the seconds at which a window figure of vtop's
	// own report is over its SLO: p99 TTFT, p99 ITL, and p99 e2e under an
	// e2e SLO.
	OverSLO []bool
}

// Run is one scenario with one seed.
type Run struct {
	// Scenario names the scenario, Seed the seed it ran with; Steady is
	// the scenario's.
	Scenario string
	Seed     uint64
	Steady   bool
	// Replicas are the replicas' timelines, in the scenario's order.
	Replicas []Timeline
	// Advice is the fleet advice's recommended replicas per second (NaN
	// when n/a); Right is the count that carries the demand (NaN when no
	// replica is up).
	Advice, Right []float64
	// AdviceText is the advice's sentence per second, for the trace;
	// AdviceAction its action.
	AdviceText, AdviceAction []string
	// Worst is the fleet's worst replica per second (the header's, the
	// first pane's), by its index in Replicas; -1 when none.
	Worst []int
	// Queued is set at every second from the first at which a replica's
	// queue persisted (truly FULL, or PREEMPTING with a standing queue)
	// on: the seconds the advice's overshoot is scored over.
	Queued []bool
}

// RunScenario runs sc with seed: every virtual second it steps each
// replica's model, scrapes its page through vtop's page parser and
// evaluates the fleet with analysis.Analyze as the live monitor does
// (the previous report carried, a window of samples kept).
func RunScenario(sc Scenario, seed uint64) (Run, error) {
	cfg := analysis.DefaultConfig()
	keep := cfg.Window + 2*time.Second // what the monitor asks its source to keep
	n := len(sc.Replicas)
	reps := make([]*Replica, n)
	ingesters := make([]*page.Ingester, n)
	readings := make([]catalogue.Readings, n)
	run := Run{Scenario: sc.Name, Seed: seed, Steady: sc.Steady, Replicas: make([]Timeline, n)}
	for i, c := range sc.Replicas {
		reps[i] = NewReplica(c, seed*1000+uint64(i))
		ingesters[i] = page.NewIngester()
		target := fmt.Sprintf("replica-%d:8000", i+1)
		readings[i].Target = target
		run.Replicas[i].Target = target
	}
	steps := int(math.Round(1 / StepSeconds))
	var prev *analysis.Report
	for sec := 1; sec <= sc.Seconds; sec++ {
		now := epoch.Add(time.Duration(sec) * time.Second)
		for i, r := range reps {
			for range steps {
				r.Advance(StepSeconds)
			}
			s, err := scrape(r, ingesters[i], sec)
			if err != nil {
				return Run{}, fmt.Errorf("%s, seed %d, %s at %ds: %w", sc.Name, seed, readings[i].Target, sec, err)
			}
			s.Time = now
			s.MarkRising(lastGood(readings[i].Samples))
			readings[i].Samples = append(dropBefore(readings[i].Samples, now.Add(-keep)), s)
		}
		report := analysis.Analyze(now, readings, cfg, prev)
		prev = &report
		run.record(sec, reps, &report, readings, cfg)
	}
	return run, nil
}

// record adds second sec to the run: each replica's truth beside what
// the report showed, and the fleet's advice beside the right count.
func (run *Run) record(sec int, reps []*Replica, report *analysis.Report, readings []catalogue.Readings, cfg analysis.Config) {
	up, load, queued := 0, 0.0, false
	for i, r := range reps {
		truth := r.Truth(float64(sec), StepSeconds)
		run.Replicas[i].record(truth, r.Steps[len(r.Steps)-1], &report.Replicas[i], cfg)
		if truth != analysis.StateDown {
			up++
			load += r.cfg.Arrivals(float64(sec)) / r.cfg.HeldCapacity()
			queued = queued || truth == analysis.StateFull ||
				truth == analysis.StatePreempting && r.QueuePersists(float64(sec), StepSeconds)
		}
	}
	run.Advice = append(run.Advice, report.Fleet.Advice.RecommendedReplicas.Float())
	run.AdviceText = append(run.AdviceText, report.Fleet.Advice.Recommendation)
	run.Worst = append(run.Worst, slices.IndexFunc(readings, func(r catalogue.Readings) bool { return r.Target == report.Fleet.Worst }))
	run.AdviceAction = append(run.AdviceAction, report.Fleet.Advice.Action)
	run.Right = append(run.Right, RightCount(up, load, queued))
	run.Queued = append(run.Queued, queued || len(run.Queued) > 0 && run.Queued[len(run.Queued)-1])
}

// record adds a second to the timeline: the true state, the model's last
// step, and what vtop's report showed.
func (tl *Timeline) record(truth analysis.State, last StepRecord, rr *analysis.ReplicaReport, cfg analysis.Config) {
	tl.Truth = append(tl.Truth, truth)
	tl.Shown = append(tl.Shown, rr.State)
	tl.Action = append(tl.Action, rr.Action)
	tl.Reason = append(tl.Reason, firstReason(rr.Reasons))
	tl.Running = append(tl.Running, last.Running)
	tl.Waiting = append(tl.Waiting, last.Waiting)
	tl.OverSLO = append(tl.OverSLO, overSLO(rr, cfg))
}

// overSLO reports whether a window figure of the report is over its SLO,
// as the report gives both: the figure a dashboard shows beside the state.
func overSLO(r *analysis.ReplicaReport, cfg analysis.Config) bool {
	over := func(q analysis.Quantiles, slo time.Duration) bool { return slo > 0 && q.P99.Float() > slo.Seconds() }
	return over(r.TTFT, cfg.SLOTTFT) || over(r.ITL, cfg.SLOITL) || over(r.E2E, cfg.SLOE2E)
}

// RightCount is the replica count that carries the demand: the replicas
// up, or, while a queue persists on any of them (truly FULL, or
// PREEMPTING with a queue through FullAfter), the demand in replica
// capacities rounded up — load is the sum over the replicas up of
// arrivals ÷ capacity at the cap (HeldCapacity: at the batch the KV cache
// holds) — and never fewer than are up while a queue persists. NaN when
// no replica is up.
func RightCount(up int, load float64, queued bool) float64 {
	if up == 0 {
		return math.NaN()
	}
	if !queued {
		return float64(up)
	}
	return math.Max(float64(up), math.Ceil(load-1e-9))
}

// scrape reads the replica's page at virtual second sec as the scraper
// would: a failed sample while the process is away, a timed-out one at
// its late scrapes, else the page through vtop's parser.
func scrape(r *Replica, in *page.Ingester, sec int) (catalogue.Sample, error) {
	if !r.Steps[len(r.Steps)-1].Up {
		return catalogue.Sample{Err: "connection refused"}, nil
	}
	if slices.Contains(r.cfg.LateScrapes, sec) {
		return catalogue.Sample{Err: httperr.NoAnswer(scrapeTimeout), TimedOut: true}, nil
	}
	body, err := r.Exporter.Page()
	if err != nil {
		return catalogue.Sample{}, err
	}
	return in.Ingest(body, ContentType)
}

// lastGood is the newest good sample, nil when there is none.
func lastGood(samples []catalogue.Sample) *catalogue.Sample {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].OK() {
			return &samples[i]
		}
	}
	return nil
}

// dropBefore drops the samples older than t.
func dropBefore(samples []catalogue.Sample, t time.Time) []catalogue.Sample {
	i := 0
	for i < len(samples) && samples[i].Time.Before(t) {
		i++
	}
	if i == 0 {
		return samples
	}
	return append(samples[:0:0], samples[i:]...)
}

// firstReason is the first reason, or "".
func firstReason(reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	return reasons[0]
}
