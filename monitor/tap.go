package monitor

import (
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
