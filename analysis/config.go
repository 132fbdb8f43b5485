package analysis

import (
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// Config holds the thresholds and windows of the analysis.
type Config struct {
	// Window is how far back rates and quantiles look.
	Window time.Duration
	// SLOTTFT and SLOITL are the p99 latencies above which a replica that is
	// not full is SLOW.
	SLOTTFT, SLOITL time.Duration
	// SLOE2E is the e2e latency used for goodput; zero leaves goodput on
	// TTFT alone.
	SLOE2E time.Duration
	// TargetQueueTime is the acceptable queue time the scaling advice aims
	// for (Little's law: waiting target = arrivals per replica × this).
	TargetQueueTime time.Duration
	// Hysteresis is how many consecutive evaluations a new state must hold
	// before it is shown (DOWN is shown at once). 1 disables it.
	Hysteresis int
	// SLOExitMargin is the hysteresis on the SLO thresholds: a replica
	// leaves SLOW only when the p99 is below SLO × (1 − SLOExitMargin), so
	// that a p99 that wanders around the SLO does not flip the state. 0
	// disables it.
	SLOExitMargin float64
	// MinObservations is how many observations a latency histogram must
	// hold in the window before its p99 may make a replica SLOW: the p99
	// of a handful of requests is their maximum. 0 disables it.
	MinObservations int
}

// DefaultConfig returns the documented defaults: the one home of the
// flags' defaults and of docs/flags.md's.
func DefaultConfig() Config {
	return Config{
		Window:          30 * time.Second,
		SLOTTFT:         time.Second,
		SLOITL:          100 * time.Millisecond,
		TargetQueueTime: time.Second,
		Hysteresis:      2,
		SLOExitMargin:   0.1,
		MinObservations: 20,
	}
}

// JudgedHistograms are the histograms whose buckets the states, their
// reasons or actions read under cfg: TTFT and ITL against their SLOs, the
// prefill's p99 (is a slow TTFT's queue gone), the NIXL transfer's p99,
// e2e only for the goodput under an e2e SLO. The others' quantiles are
// shown, never judged: a source may spare a large fleet their buckets.
func JudgedHistograms(cfg Config) []catalogue.Histogram {
	judged := []catalogue.Histogram{catalogue.TTFT, catalogue.ITL, catalogue.PrefillTime, catalogue.NIXLTransferTime}
	if cfg.SLOE2E > 0 {
		judged = append(judged, catalogue.E2E)
	}
	return judged
}
