package monitor

import (
	"context"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// Evaluation is one report with what it was computed from: a recorder
// notes which readings each report saw, so that a replay can compute the
// same report again.
type Evaluation struct {
	Now    time.Time
	Config analysis.Config
	// Readings are the readings the report was computed from; only valid
	// during the call.
	Readings []catalogue.Readings
	Report   *analysis.Report
}

// Tap makes f see every evaluation, on the monitor's goroutine, just
// before the output gets its report. Call it before Run.
func (m *Monitor) Tap(f func(Evaluation)) { m.tap = f }

// observe hands one evaluation to the tap, if any.
func (m *Monitor) observe(now time.Time, cfg analysis.Config, readings []catalogue.Readings, r *analysis.Report) {
	if m.tap != nil {
		m.tap(Evaluation{Now: now, Config: cfg, Readings: readings, Report: r})
	}
}

// Paced is a Source that sets the pace of the reports itself: a replay,
// whose reports fall at the recorded evaluation times whatever the speed.
// A monitor of a Paced source evaluates once per Step, never on its own
// ticker.
type Paced interface {
	Source
	// Steps delivers one Step per report to make.
	Steps() <-chan Step
}

// Step asks the monitor of a Paced source for one report. It carries its
// time and readings, so that the source can move on at once.
type Step struct {
	Now      time.Time
	Readings []catalogue.Readings
	// Window, when positive, is the window of this report: the one live
	// mode used when it was recorded. A window set with SetWindow wins.
	Window time.Duration
	// Restart makes Prev the previous report (hysteresis and events)
	// instead of the monitor's last one: the source jumped.
	Restart bool
	Prev    *analysis.Report
}

// runPaced is Run's loop for a Paced source.
func (m *Monitor) runPaced(ctx context.Context, src Paced) error {
	var prev *analysis.Report
	steps := src.Steps()
	for {
		var step Step
		select {
		case <-ctx.Done():
			return nil
		case step = <-steps:
		}
		m.mu.Lock()
		cfg := m.cfg
		if step.Window > 0 && !m.windowSet {
			cfg.Window = step.Window
		}
		m.mu.Unlock()
		if step.Restart {
			prev = step.Prev
		}
		r := analysis.Analyze(step.Now, step.Readings, cfg, prev)
		r.SetSource(sourceStatus(m.source))
		prev = &r
		m.observe(step.Now, cfg, step.Readings, &r)
		if err := m.output(r); err != nil {
			return err
		}
	}
}
