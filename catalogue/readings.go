// Package catalogue says what inference engines export and what vtop reads
// of it: the metric families of each vLLM page generation (names, types,
// labels, buckets), the one alias table that maps every name vLLM has used
// to the figure vtop reads, and the readings every source delivers
// (Sample, Series, Buckets). It is a leaf: the page parser, the sources, the
// analysis and the simulator all read it, and nothing else lists metric
// names.
package catalogue

import (
	"math"
	"time"
)

// Scalar names a single-valued metric vtop reads (a gauge or a counter),
// after the alias table of the scraper has resolved version renames.
type Scalar uint8

// The scalars vtop reads. Gauges first, then counters.
const (
	Running            Scalar = iota // vllm:num_requests_running (gauge)
	Waiting                          // vllm:num_requests_waiting (gauge)
	KVCacheUsage                     // vllm:kv_cache_usage_perc, a 0–1 fraction (gauge)
	PromptTokens                     // vllm:prompt_tokens_total (counter)
	GenerationTokens                 // vllm:generation_tokens_total (counter)
	Preemptions                      // vllm:num_preemptions_total (counter)
	PrefixCacheQueries               // vllm:prefix_cache_queries_total, in tokens (counter)
	PrefixCacheHits                  // vllm:prefix_cache_hits_total, in tokens (counter)
	SpecDrafts                       // vllm:spec_decode_num_drafts_total (counter)
	SpecDraftTokens                  // vllm:spec_decode_num_draft_tokens_total (counter)
	SpecAcceptedTokens               // vllm:spec_decode_num_accepted_tokens_total (counter)
	NumScalars                       // the number of scalars; not a metric
)

// IsCounter reports whether the scalar is a counter (read as a rate) rather
// than a gauge (read as is).
func (s Scalar) IsCounter() bool { return s >= PromptTokens && s < NumScalars }

// Histogram names a histogram family vtop reads.
type Histogram uint8

// The histograms vtop reads.
const (
	TTFT             Histogram = iota // vllm:time_to_first_token_seconds
	ITL                               // vllm:inter_token_latency_seconds (older: time_per_output_token_seconds)
	E2E                               // vllm:e2e_request_latency_seconds
	QueueTime                         // vllm:request_queue_time_seconds
	PrefillTime                       // vllm:request_prefill_time_seconds
	DecodeTime                        // vllm:request_decode_time_seconds
	PromptLength                      // vllm:request_prompt_tokens
	GenerationLength                  // vllm:request_generation_tokens
	NumHistograms                     // the number of histograms; not a metric
)

// FinishReason is a value of the finished_reason label of
// vllm:request_success_total.
type FinishReason uint8

// The finish reasons vLLM reports.
const (
	FinishStop FinishReason = iota
	FinishLength
	FinishAbort
	FinishError
	FinishRepetition
	NumFinishReasons // the number of reasons; not a reason
)

// FinishReasonNames are the label values of each FinishReason, in order.
var FinishReasonNames = [NumFinishReasons]string{"stop", "length", "abort", "error", "repetition"}

// Buckets is one histogram as read from one page: cumulative counts per upper
// bound, the +Inf bucket included when the page had it. A zero Buckets (nil
// Bounds) means the server does not export the histogram.
type Buckets struct {
	// Bounds are the upper bounds in ascending order. The scraper interns
	// them, so samples of one target share one slice: never modify it.
	Bounds []float64
	// Counts are the cumulative counts, one per bound.
	Counts []float64
	// Sum and Count are the _sum and _count series (NaN when absent).
	Sum, Count float64
}

// Present reports whether the server exported this histogram.
func (b Buckets) Present() bool { return b.Bounds != nil }

// Series holds the values of one replica, or of one data-parallel engine of a
// replica, on one page. Absent metrics are NaN (scalars, finish reasons) or a
// zero Buckets (histograms): absence is never written as 0.
type Series struct {
	Scalars    [NumScalars]float64
	Finished   [NumFinishReasons]float64
	Histograms [NumHistograms]Buckets
}

// NewSeries returns a Series in which every metric is absent.
func NewSeries() Series {
	var s Series
	for i := range s.Scalars {
		s.Scalars[i] = math.NaN()
	}
	for i := range s.Finished {
		s.Finished[i] = math.NaN()
	}
	return s
}

// Engine is the series of one data-parallel engine (the engine label).
type Engine struct {
	Name string
	Series
}

// Sample is one scrape of one target, reduced to what analysis reads. The
// scraper never keeps whole pages: this is all that survives of one.
type Sample struct {
	// Time is when the scrape was taken (the scraper's clock, passed in).
	Time time.Time
	// Err is why the scrape failed; empty on success. A failed sample carries
	// no figures.
	Err string
	// HasVLLM reports whether the page had any vllm: family at all.
	HasVLLM bool
	// Model is the model_name label, stripped of control characters.
	Model string
	// Total is the replica as a whole: counts and buckets summed over
	// engines, gauges summed (KVCacheUsage averaged).
	Total Series
	// Engines holds each engine's own series when there are two or more;
	// nil for a single-engine server.
	Engines []Engine
	// KVCapacityTokens is num_gpu_blocks × block_size from
	// vllm:cache_config_info, summed over engines; NaN when absent.
	KVCapacityTokens float64
	// ProcessStartTime is process_start_time_seconds; NaN when absent. A change
	// means the server restarted.
	ProcessStartTime float64
	// ProcessRSSBytes is process_resident_memory_bytes; NaN when absent.
	ProcessRSSBytes float64
	// GCCollections is python_gc_collections_total summed over generations;
	// NaN when absent.
	GCCollections float64
	// HTTPRequests is http_requests_total summed over its labels; NaN when
	// absent. It tells "the engine metrics are all zero under load" apart
	// from "there is no load".
	HTTPRequests float64
	// Warnings are problems that did not fail the scrape, such as a
	// cardinality cap that dropped series. Already stripped of control
	// characters.
	Warnings []string
}

// OK reports whether the scrape succeeded.
func (s *Sample) OK() bool { return s.Err == "" }

// Readings are what a source delivers of one target: its name and its
// samples, oldest first. The analysis picks the ones in the window itself.
type Readings struct {
	Target  string
	Samples []Sample
}
