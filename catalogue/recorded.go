package catalogue

import "time"

// Recorded is a replica as the store's recording rules of vtop (`vtop
// rules`) evaluated it At, over Window: the figures a fleet's view reads
// and the states whose alerts fire, for a source that reads them in place
// of the raw series (the Prometheus source's fast path). Every value is
// NaN where the rules recorded none for the replica.
type Recorded struct {
	At     time.Time
	Window time.Duration
	// Up is false when the replica's scrapes fail at the store (up is 0).
	Up bool
	// Running and Waiting are the gauges at At, summed over the replica's
	// series.
	Running, Waiting float64
	// The increases over the window: requests finished, prompt and
	// generated tokens, preemptions and the prompt tokens they recompute.
	Requests, PromptTokens, GenerationTokens, Preemptions, RecomputedTokens float64
	// TTFT and ITL are the quantiles of the latencies over the window, and
	// their observations.
	TTFT, ITL RecordedLatency
	// Firing are the states whose alerts fire for the replica, by their
	// names as the analysis writes them (full, slow, …).
	Firing []string
}

// RecordedLatency is a latency's p99 and median over the window, in
// seconds, and the observations they are read from.
type RecordedLatency struct {
	P99, P50, Observations float64
}
