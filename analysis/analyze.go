package analysis

import "time"

// Analyze evaluates every target over the window that ends at now and
// returns the report. prev is the previous evaluation (nil for the first, or
// for one-shot reports); it carries hysteresis and the basis of events.
//
// TODO(analysis): placeholder signature; the real implementation replaces it.
func Analyze(now time.Time, targets []TargetInput, cfg Config, prev *Report) Report {
	r := Report{Time: now, WindowSeconds: cfg.Window.Seconds()}
	for _, t := range targets {
		r.Replicas = append(r.Replicas, ReplicaReport{Target: t.Target})
	}
	return r
}
