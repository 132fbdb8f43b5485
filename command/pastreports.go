package command

import (
	"context"
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
	line := jsonLines(env.Stdout)
	out := func(r analysis.Report) error {
		last = &r
		if w.JSONL {
			return line(r)
		}
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
	var prev *analysis.Report
	g := newPastGrid(p, len(past.Targets), sampleTime, func(at time.Time, held [][]catalogue.Sample) error {
		readings := make([]catalogue.Readings, len(held))
		for i, ss := range held {
			readings[i] = catalogue.Readings{Target: past.Targets[i].Name}
			if len(ss) > 0 {
				readings[i].Samples = slices.Clone(ss)
			}
		}
		r := analysis.Analyze(at, readings, cfg, prev)
		prev = &r
		return out(r)
	})
	err = pastReadError(ctx, past.ReadSamples(ctx, func(samples []promsource.PastSample) error {
		if len(samples) == 0 {
			return nil
		}
		for _, s := range samples {
			g.items[s.Target] = append(g.items[s.Target], s.Sample)
		}
		return g.through(samples[len(samples)-1].Sample.Time)
	}))
	if err == nil {
		err = g.through(p.end())
	}
	return g.made, err
}

func sampleTime(s catalogue.Sample) time.Time { return s.Time }
