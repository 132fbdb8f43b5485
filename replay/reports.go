package replay

import (
	"errors"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
)

// ErrNoReports is returned for a recording that holds no evaluation: no
// frame was ever written.
var ErrNoReports = errors.New("the recording holds no scrape to replay")

// Config is the analysis configuration a replay uses by default: the one
// live mode used, as the header keeps it, with no window of its own (each
// report gets the window it had live).
func Config(rec *record.Recording) analysis.Config {
	cfg := rec.Header.Config
	if cfg.Hysteresis == 0 && cfg.SLOTTFT == 0 {
		cfg = analysis.DefaultConfig()
	}
	cfg.Window = 0
	return cfg
}

// Reports computes every report of the recording in order, as live mode
// computed them (each tick's window unless cfg.Window is set), and hands
// each to out: the non-interactive replay. An error from out stops it.
func Reports(rec *record.Recording, cfg analysis.Config, out func(analysis.Report) error) error {
	ticks := rec.Ticks()
	if len(ticks) == 0 {
		return ErrNoReports
	}
	rd := newReader(rec)
	defer rd.close()
	var prev *analysis.Report
	for _, t := range ticks {
		r := rd.analyze(t, cfg, prev)
		prev = &r
		if err := out(r); err != nil {
			return err
		}
	}
	return nil
}

// Last returns the recording's last report: --once.
func Last(rec *record.Recording, cfg analysis.Config) (analysis.Report, error) {
	var last analysis.Report
	err := Reports(rec, cfg, func(r analysis.Report) error { last = r; return nil })
	return last, err
}
