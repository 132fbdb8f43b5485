package analysis

import (
	"fmt"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// recordedNote opens the reasons of a replica the store's rules judged.
const recordedNote = "judged by the store's recording rules of vtop"

// recordedReplica reports a replica from what vtop's recording rules in
// the store recorded for it: its rates the increases over the window
// divided by it, its state the highest whose alert fires; what the rules
// do not record is n/a. The rules hold their own hysteresis.
func recordedReplica(now time.Time, target string, rec *catalogue.Recorded, cfg Config) ReplicaReport {
	rep := naReport(target)
	rep.Recorded, rep.LastGood = true, rec.At
	if rec.Up {
		recordedFigures(&rep.Figures, rec)
		rep.CoveredSeconds = rec.Window.Seconds()
		for _, name := range rec.Firing {
			var s State
			if s.UnmarshalText([]byte(name)) == nil && s > rep.State {
				rep.State = s
			}
		}
		rep.Reasons = []string{fmt.Sprintf("%s at %s", recordedNote, rec.At.UTC().Format(human.Clock))}
	} else {
		rep.State = StateDown
		rep.Error = "the store's scrapes of it fail (up is 0)"
		rep.Reasons = []string{recordedNote + ": " + rep.Error}
	}
	rep.Pending = rep.State
	rep.Action = FirstAction(rep.State, rep.EngineKind, cfg)
	rep.Severity = SeverityOf(&rep, cfg)
	rep.Point = point(now, &rep, nil) // a gap while down: its figures are n/a
	return rep
}

// recordedFigures fills f from the recorded series.
func recordedFigures(f *Figures, rec *catalogue.Recorded) {
	perSecond := func(increase float64) Num { return Num(increase / rec.Window.Seconds()) }
	f.Running, f.Waiting = Num(rec.Running), Num(rec.Waiting)
	f.RequestsPerSecond = perSecond(rec.Requests)
	f.PromptTokensPerSecond, f.GenerationTokensPerSecond = perSecond(rec.PromptTokens), perSecond(rec.GenerationTokens)
	f.IORatio = ratio(f.PromptTokensPerSecond, f.GenerationTokensPerSecond)
	f.PreemptionsPerSecond, f.RecomputedTokensPerSecond = perSecond(rec.Preemptions), perSecond(rec.RecomputedTokens)
	for _, l := range []struct {
		q   *Quantiles
		rec catalogue.RecordedLatency
	}{{&f.TTFT, rec.TTFT}, {&f.ITL, rec.ITL}} {
		l.q.P99, l.q.P50, l.q.Observations = Num(l.rec.P99), Num(l.rec.P50), Num(l.rec.Observations)
	}
}
