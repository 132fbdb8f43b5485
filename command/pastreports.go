package command

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promsource"
)

// printPast is --jsonl or --once over a stretch of the past: the reports
// computed as the samples arrive, with no recording between. They are
// the reports a replay of `vtop record --prometheus` over the same
// stretch gives (the end-to-end test holds them equal, line for line),
// without writing and parsing a page per scrape.
func (w *Watch) printPast(ctx context.Context, env *Env, src *promsource.Source, p pastStretch, cfg analysis.Config) error {
	var last *analysis.Report
	out := func(r analysis.Report) error {
		if w.JSONL {
			if err := writeJSON(env.Stdout, r, false); err != nil {
				return fmt.Errorf("--jsonl: writing a report: %w", err)
			}
		}
		last = &r
		return nil
	}
	n, err := untilDone(ctx, func() (int, error) { return pastReports(ctx, env, src, p, cfg, out) })
	switch {
	case err != nil:
		return err
	case n == 0 && ctx.Err() == nil:
		return p.noData(src)
	case w.Once && last != nil:
		return printReport(env.Stdout, *last, w.JSON)
	}
	return nil
}

// pastReports reads the stretch and hands out each report in order; it
// returns how many it made.
func pastReports(ctx context.Context, env *Env, src *promsource.Source, p pastStretch, cfg analysis.Config, out func(analysis.Report) error) (int, error) {
	past, err := openStretch(ctx, env, src, p)
	if err != nil {
		return 0, err
	}
	cfg.Window = p.window
	a := &pastAnalyzer{p: p, cfg: cfg, out: out, samples: make([][]catalogue.Sample, len(past.Targets))}
	for _, t := range past.Targets {
		a.names = append(a.names, t.Name)
	}
	err = pastReadError(ctx, past.ReadSamples(ctx, a.chunk))
	if err == nil {
		err = a.reportsThrough(p.end())
	}
	return a.made, err
}

// pastAnalyzer evaluates the reports of a stretch as its samples arrive,
// each over the samples a replay's tick would hold (see cutAt).
type pastAnalyzer struct {
	p       pastStretch
	cfg     analysis.Config
	out     func(analysis.Report) error
	names   []string
	samples [][]catalogue.Sample // per target: the recent samples, oldest first
	next    int                  // the next report to make
	made    int
	prev    *analysis.Report
}

// chunk takes one chunk's samples and makes the reports it completes.
func (a *pastAnalyzer) chunk(samples []promsource.PastSample) error {
	if len(samples) == 0 {
		return nil
	}
	for _, s := range samples {
		a.samples[s.Target] = append(a.samples[s.Target], s.Sample)
	}
	return a.reportsThrough(samples[len(samples)-1].Sample.Time)
}

// reportsThrough makes the reports at or before t, and forgets the
// samples no later report needs. Reports before the first sample of any
// target are not made: Prometheus held nothing yet.
func (a *pastAnalyzer) reportsThrough(t time.Time) error {
	keep := a.p.keep()
	for ; a.next < len(a.p.reports) && !a.p.reports[a.next].After(t); a.next++ {
		at := a.p.reports[a.next]
		readings := make([]catalogue.Readings, len(a.names))
		seen := a.made > 0
		for i, ss := range a.samples {
			readings[i] = catalogue.Readings{Target: a.names[i], Samples: samplesAt(ss, at, keep)}
			seen = seen || len(readings[i].Samples) > 0
		}
		if !seen {
			continue
		}
		r := analysis.Analyze(at, readings, a.cfg, a.prev)
		a.prev = &r
		a.made++
		if err := a.out(r); err != nil {
			return err
		}
	}
	if a.next < len(a.p.reports) {
		from := a.p.reports[a.next].Add(-keep)
		for i, ss := range a.samples {
			a.samples[i] = neededFrom(ss, sampleTime, from)
		}
	}
	return nil
}

// samplesAt is what a report at at holds of a target's samples (heldAt,
// as cutAt takes frames), in a new slice.
func samplesAt(ss []catalogue.Sample, at time.Time, keep time.Duration) []catalogue.Sample {
	lo, hi := heldAt(ss, sampleTime, at, keep)
	if hi == 0 {
		return nil
	}
	return slices.Clone(ss[lo:hi])
}

func sampleTime(s catalogue.Sample) time.Time { return s.Time }
