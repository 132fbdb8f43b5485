// Package catalogue says what inference engines export and what vtop reads
// of it: the metric families of each vLLM page generation (names, types,
// labels, buckets), the one alias table that maps every name vLLM has used
// to the figure vtop reads, and the readings every source delivers
// (Sample, Series, Buckets). It is a leaf: the page parser, the sources, the
// analysis and the simulator all read it, and nothing else lists metric
// names.
package catalogue

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Scalar names a single-valued metric vtop reads (a gauge or a counter),
// after the alias table of the scraper has resolved version renames and
// engine dialects. The comments name vLLM's family; Reads lists what
// feeds each scalar on the other engines' pages.
type Scalar uint8

// The scalars vtop reads. New ones are appended: a figure's number never
// changes, and IsCounter, not the order, says what kind it is.
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

	// FinishedRequests counts finished requests whatever the reason
	// (counter): the sum of vllm:request_success_total over
	// finished_reason, or an engine's own total where it has no reasons.
	FinishedRequests
	WaitingCapacity           // vllm:num_requests_waiting_by_reason{reason="capacity"} (gauge)
	WaitingDeferred           // vllm:num_requests_waiting_by_reason{reason="deferred"} (gauge)
	SleepLevel                // vllm:engine_sleep_state: 0 awake, 1 weights offloaded, 2 discard all (gauge)
	AdmissionRejections       // vllm:admission_rejections_total, every reason (counter)
	PromptTokensCached        // vllm:prompt_tokens_cached_total, local and external hits (counter)
	PromptTokensRecomputed    // vllm:prompt_tokens_recomputed_total, v0.17–0.19 only (counter)
	PromptTokensLocalCompute  // vllm:prompt_tokens_by_source_total{source="local_compute"} (counter)
	PromptTokensLocalCacheHit // vllm:prompt_tokens_by_source_total{source="local_cache_hit"} (counter)
	PromptTokensExternal      // vllm:prompt_tokens_by_source_total{source="external_kv_transfer"} (counter)
	ExternalPrefixQueries     // vllm:external_prefix_cache_queries_total, in tokens (counter)
	ExternalPrefixHits        // vllm:external_prefix_cache_hits_total, in tokens (counter)
	NIXLFailedTransfers       // vllm:nixl_num_failed_transfers_total (counter)
	KVOffloadLoadBytes        // vllm:kv_offload_load_bytes_total, offload storage to GPU (counter)
	KVOffloadStoreBytes       // vllm:kv_offload_store_bytes_total, GPU to offload storage (counter)

	// The figures of the other engines that vLLM does not export as such
	// (Reads names each engine's family).

	// MaxRunning is the most requests the engine runs at once, as it
	// states it (TensorRT-LLM's max_num_active_requests, Dynamo's
	// model_max_num_seqs): the batch cap (gauge).
	MaxRunning
	// KVBlocks and KVBlockTokens are the KV cache's blocks and the tokens
	// a block holds (gauges): their product is Sample.KVCapacityTokens
	// where the page gives no capacity in tokens (DeriveKVCapacity).
	KVBlocks
	KVBlockTokens
	// Paused are requests the engine holds out of the batch, neither
	// running nor waiting (TensorRT-LLM's paused requests; SGLang's, during
	// a weight update) (gauge).
	Paused
	// RetractedTokens are the prompt and output tokens of retracted
	// (preempted) requests, thrown away to be computed again: SGLang's
	// cost of a preemption (counter).
	RetractedTokens
	// WaitingOutsideQueue are requests held in queues apart from the
	// scheduler's (SGLang's grammar queue, its disaggregated bootstrap,
	// prealloc and transfer queues): not counted in Waiting (gauge).
	WaitingOutsideQueue
	// AwaitingFirstToken are requests that have not had their first token
	// yet, prefill included (Dynamo's queued_requests): not a queue (gauge).
	AwaitingFirstToken
	// TokenBudget is the tokens a batch may hold at most (TGI's
	// max_total_tokens), BatchTokens those the current batch may reach
	// (TGI's current max tokens) (gauges).
	TokenBudget
	BatchTokens
	// PromptSeconds and GenerationSeconds are the seconds spent in prefill
	// and in generating (llama.cpp's prompt_seconds_total and
	// tokens_predicted_seconds_total): over the token counters, the mean
	// time per prompt token and per generated token (counters).
	PromptSeconds
	GenerationSeconds
	NumScalars // the number of scalars; not a metric
)

// scalarIsGauge marks the gauges; every other scalar is a counter.
var scalarIsGauge = [NumScalars]bool{
	Running: true, Waiting: true, KVCacheUsage: true,
	WaitingCapacity: true, WaitingDeferred: true, SleepLevel: true,
	MaxRunning: true, KVBlocks: true, KVBlockTokens: true, Paused: true, WaitingOutsideQueue: true,
	AwaitingFirstToken: true, TokenBudget: true, BatchTokens: true,
}

// IsCounter reports whether the scalar is a counter (read as a rate) rather
// than a gauge (read as is).
func (s Scalar) IsCounter() bool { return s < NumScalars && !scalarIsGauge[s] }

// scalarNames are short names of the scalars, as goldens and JSON spell
// them.
var scalarNames = [NumScalars]string{
	"running", "waiting", "kv_cache_usage", "prompt_tokens", "generation_tokens", "preemptions",
	"prefix_cache_queries", "prefix_cache_hits", "spec_drafts", "spec_draft_tokens", "spec_accepted_tokens",
	"finished_requests", "waiting_capacity", "waiting_deferred", "sleep_level", "admission_rejections",
	"prompt_tokens_cached", "prompt_tokens_recomputed", "prompt_tokens_local_compute",
	"prompt_tokens_local_cache_hit", "prompt_tokens_external", "external_prefix_queries",
	"external_prefix_hits", "nixl_failed_transfers", "kv_offload_load_bytes", "kv_offload_store_bytes",
	"max_running", "kv_blocks", "kv_block_tokens", "paused", "retracted_tokens", "waiting_outside_queue",
	"awaiting_first_token", "token_budget", "batch_tokens", "prompt_seconds", "generation_seconds",
}

// String returns the scalar's short name ("running", "prompt_tokens", …).
func (s Scalar) String() string { return nameOf(scalarNames[:], s, "scalar") }

// Histogram names a histogram family vtop reads.
type Histogram uint8

// The histograms vtop reads. New ones are appended.
const (
	TTFT                  Histogram = iota // vllm:time_to_first_token_seconds
	ITL                                    // vllm:inter_token_latency_seconds (older: time_per_output_token_seconds)
	E2E                                    // vllm:e2e_request_latency_seconds
	QueueTime                              // vllm:request_queue_time_seconds
	PrefillTime                            // vllm:request_prefill_time_seconds
	DecodeTime                             // vllm:request_decode_time_seconds
	PromptLength                           // vllm:request_prompt_tokens
	GenerationLength                       // vllm:request_generation_tokens
	PreemptionsPerRequest                  // vllm:request_num_preemptions
	NIXLTransferTime                       // vllm:nixl_xfer_time_seconds
	NIXLTransferBytes                      // vllm:nixl_bytes_transferred
	NumHistograms                          // the number of histograms; not a metric
)

// histogramNames are short names of the histograms.
var histogramNames = [NumHistograms]string{
	"ttft", "itl", "e2e", "queue_time", "prefill_time", "decode_time", "prompt_length",
	"generation_length", "preemptions_per_request", "nixl_transfer_time", "nixl_transfer_bytes",
}

// String returns the histogram's short name ("ttft", "itl", …).
func (h Histogram) String() string { return nameOf(histogramNames[:], h, "histogram") }

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

// Problem says why the buckets give no quantiles (as Prometheus's
// histogram_quantile gives none): a count below a known one of a lower
// bound, or no +Inf bucket; "" when they are well formed, or hold bounds
// but no buckets (_sum and _count alone). Counts that are NaN (a bucket
// with no sample at this time) are passed over.
func (b Buckets) Problem() string {
	last := -1
	for i, c := range b.Counts {
		if math.IsNaN(c) {
			continue
		}
		if last >= 0 && c < b.Counts[last] {
			return fmt.Sprintf("bucket counts fall (le=%s holds %s < %s of le=%s)",
				formatG(b.Bounds[i]), formatG(c), formatG(b.Counts[last]), formatG(b.Bounds[last]))
		}
		last = i
	}
	if n := len(b.Bounds); n > 0 && !math.IsInf(b.Bounds[n-1], 1) {
		return `no le="+Inf" bucket`
	}
	return ""
}

// formatG writes a number as short as it reads back.
func formatG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Series holds the values of one replica, or of one data-parallel engine of a
// replica, on one page. Absent metrics are NaN (scalars, finish reasons) or a
// zero Buckets (histograms): absence is never written as 0.
type Series struct {
	Scalars    [NumScalars]float64
	Finished   [NumFinishReasons]float64
	Histograms [NumHistograms]Buckets
	// SpecAcceptedPerPos is vllm:spec_decode_num_accepted_tokens_per_pos_total
	// by draft position (counters; NaN for a position the page lacks); nil
	// when the page has none. Acceptance at position i is its rate ÷ the
	// rate of SpecDrafts.
	SpecAcceptedPerPos []float64
	// Rising holds the histograms known not to have reset since the
	// target's previous good sample: MarkRising found every count at
	// least that sample's, with the same bounds and no NaN in either.
	// Absence means unknown, never "reset": the analysis then reads every
	// sample of its window, as it does for a source that leaves it unset.
	Rising HistogramSet
	// RisingScalars, RisingFinished and RisingTotals are Rising's rule for
	// the scalars, the finish counts and each histogram's _sum and _count
	// together: both readings known and this one not below the other. A
	// run over a window marked throughout is its first and last readings.
	RisingScalars  ScalarSet
	RisingFinished FinishSet
	RisingTotals   HistogramSet
	// AbsentScalars, AbsentFinished and AbsentHistograms are what the
	// page lacks, marked with the rest (MarkRising): a NaN scalar or
	// finish count, a histogram without bounds. Unmarked means unknown,
	// never "present": the analysis then reads every sample for it. A
	// metric absent throughout a window is not looked for in it.
	AbsentScalars    ScalarSet
	AbsentFinished   FinishSet
	AbsentHistograms HistogramSet
}

// ScalarSet is a set of scalars.
type ScalarSet uint64

// A ScalarSet has a bit for every scalar.
var _ [64 - NumScalars]struct{}

// Has reports whether k is in the set.
func (s ScalarSet) Has(k Scalar) bool { return s&(1<<k) != 0 }

// FinishSet is a set of finish reasons.
type FinishSet uint8

// A FinishSet has a bit for every finish reason.
var _ [8 - NumFinishReasons]struct{}

// Has reports whether r is in the set.
func (s FinishSet) Has(r FinishReason) bool { return s&(1<<r) != 0 }

// HistogramSet is a set of histograms.
type HistogramSet uint16

// A HistogramSet has a bit for every histogram: this fails to compile
// once there are more histograms than bits.
var _ [16 - NumHistograms]struct{}

// Add puts h in the set.
func (s *HistogramSet) Add(h Histogram) { *s |= 1 << h }

// Has reports whether h is in the set.
func (s HistogramSet) Has(h Histogram) bool { return s&(1<<h) != 0 }

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
	// TimedOut is set when the scrape failed for want of an answer within
	// the scrape timeout: a late answer, which does not prove the target
	// down as a refused connection does (the target may be slow, or the
	// host or network that scrapes it loaded). Set by the source that
	// knows the failure's kind.
	TimedOut bool
	// Waited is how long the scrape waited for the page, sent to read
	// whole; 0 where it was not measured (a store's sample, a recording's).
	// A server that serves HTTP from a fixed pool of workers makes a
	// scrape wait for one (Capability.WorkerPerConnection).
	Waited time.Duration
	// HasVLLM reports whether the page had any vllm: family at all.
	HasVLLM bool
	// EngineKind is the inference engine whose families the page carries
	// (EngineUnknown when none); JSON name engine_kind.
	EngineKind EngineKind
	// Router is set when the page is a router's, describing the Backends
	// behind it rather than one replica: its figures are theirs, summed.
	Router RouterKind
	// Backends are the backends a router page names (its server or
	// model_server_pod label values), sorted, stripped of control
	// characters; nil for a replica's own page.
	Backends []string
	// Role is the prefill/decode role the page states (SGLang's
	// engine_type); RoleUnknown when it says nothing.
	Role Role
	// Derived marks the figures of Total (and Engines) that the page does
	// not export as such but that were computed from what it does export,
	// such as TGI's prompt tokens from its input-length histogram.
	// Catalogue's Capabilities say how each was derived.
	Derived FigureSet
	// Refused marks the figures the page (or the store) sent values of
	// that were not read, being out of their domain (Fold.Refusal: NaN,
	// ±Inf, past 2^53, a negative count): n/a as if absent, but not
	// absent. The analysis tells them apart: a figure the page does not
	// export is a limit of the engine's, a value refused is a page that
	// cannot be judged on it (docs/verdicts.md).
	Refused FigureSet
	// LoRA is vllm:lora_requests_info: the adapters loaded and in use.
	LoRA LoRA
	// Model is the model_name label, stripped of control characters.
	Model string
	// Total is the replica as a whole: its engines summed by Merge's
	// rules.
	Total Series
	// Engines holds each engine's own series when there are two or more;
	// nil for a single-engine server.
	Engines []Engine
	// KVCapacityTokens is num_gpu_blocks × block_size from
	// vllm:cache_config_info, summed over engines (or an engine's own
	// capacity gauge, such as sglang:max_total_num_tokens); NaN when absent.
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
	// Instances is how many scrape targets a source summed into this
	// sample when there were several (a Prometheus source grouping
	// replicas by a label such as job); 0 for a sample of one target.
	Instances int
	// Warnings are problems that did not fail the scrape, such as a
	// cardinality cap that dropped series. Already stripped of control
	// characters.
	Warnings []string
}

// OK reports whether the scrape succeeded.
func (s *Sample) OK() bool { return s.Err == "" }

// HasEngineMetrics reports whether the page carried the families of an
// inference engine or of a router in front of some: a page without them
// is not the server vtop was pointed at.
func (s *Sample) HasEngineMetrics() bool {
	return s.HasVLLM || s.EngineKind != EngineUnknown || s.Router != RouterNone
}

// LoRA is what vllm:lora_requests_info says of the adapters. Its zero
// value means the page does not say (LoRA off, or another engine).
type LoRA struct {
	// Present reports whether the page had the family.
	Present bool
	// MaxLoRAs is max_lora, the adapters that fit at once; NaN when the
	// label is not a number.
	MaxLoRAs float64
	// Running and Waiting are the adapters of running and waiting
	// requests, stripped of control characters.
	Running, Waiting []string
}

// Readings are what a source delivers of one target: its name and its
// samples, oldest first. The analysis picks the ones in the window itself.
type Readings struct {
	Target  string
	Samples []Sample
	// Buckets, when not nil, are the target's histogram buckets over a
	// window as the store evaluated them, for a source that reads the
	// buckets of a large fleet that way rather than raw (the samples
	// then hold each histogram's _sum and _count with no bounds).
	Buckets *WindowBuckets
	// Recorded, when not nil and Samples is empty, is the replica as the
	// store's recording rules of vtop evaluated it: the analysis reports
	// it from them.
	Recorded *Recorded
}

// WindowBuckets are a target's histogram buckets over the window that
// ends At and spans Window, as a store such as Prometheus evaluates them:
// for each bound, the increase() of the bucket's series over the window,
// summed over the target's series. The analysis reads a histogram's
// quantiles off them exactly as off the increases it works out from raw
// samples, and only when it evaluates that very window.
type WindowBuckets struct {
	At     time.Time
	Window time.Duration
	// Histograms holds each histogram's buckets, by bound in any order;
	// nil where the store has none for the target.
	Histograms [NumHistograms][]BucketIncrease
}

// BucketIncrease is one bucket's increase over a window: the observations
// at or below Upper (cumulative, as the le label counts them).
type BucketIncrease struct {
	Upper, Increase float64
}
