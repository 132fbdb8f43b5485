package analysis

import "time"

// Point is one evaluation of one replica, kept for the sparklines and the
// time-series charts of the detail view. It is small on purpose (float32,
// NaN for unknown) because the history holds one per replica per interval
// for many minutes.
type Point struct {
	Time  time.Time
	State State

	Running, Waiting, KVCacheUsage float32
	RequestsPerSecond              float32
	PromptTokensPerSecond          float32
	GenerationTokensPerSecond      float32
	PreemptionsPerSecond           float32
	TTFTP50, TTFTP90, TTFTP99      float32
	ITLP50, ITLP90, ITLP99         float32
	E2EP50, E2EP90, E2EP99         float32

	// PromptLengthBounds are the upper bounds of vllm:request_prompt_tokens
	// (shared, never modified) and PromptLengthDeltas the requests that
	// finished in each bucket (not cumulative) since the previous sample:
	// one column of the prompt-length heatmap. Nil when not exported.
	PromptLengthBounds []float64
	PromptLengthDeltas []float32
}

// Event is a state change or threshold crossing, kept in the event log after
// the condition clears so that a transient spike stays visible.
type Event struct {
	Time   time.Time `json:"time"`
	Target string    `json:"target"`
	State  State     `json:"state"`
	// Text is the event with its numbers, e.g.
	// "FULL: waiting 41 → 95, running 256 flat".
	Text string `json:"text"`
}
