package scrape

import "github.com/vtop-dev/vtop/analysis"

// familyKind says what a wanted family feeds in a Sample.
type familyKind uint8

const (
	kindScalar       familyKind = iota // one of analysis.Scalar
	kindHistogram                      // one of analysis.Histogram
	kindFinished                       // vllm:request_success_total by finished_reason
	kindCacheConfig                    // vllm:cache_config_info labels
	kindProcessStart                   // process_start_time_seconds
	kindRSS                            // process_resident_memory_bytes
	kindGC                             // python_gc_collections_total
	kindHTTP                           // http_requests_total
)

// family is one row of the alias table.
type family struct {
	name   string // as exposed on the page (counters with _total)
	kind   familyKind
	scalar analysis.Scalar
	hist   analysis.Histogram
	// legacy marks an old name: it is read only when the page does not
	// also carry the current name for the same figure.
	legacy bool
}

// families is THE alias table: every family vtop reads, under every name
// vLLM has exposed it. Anything not listed here is dropped before parsing.
var families = []family{
	{name: "vllm:num_requests_running", kind: kindScalar, scalar: analysis.Running},
	{name: "vllm:num_requests_waiting", kind: kindScalar, scalar: analysis.Waiting},
	{name: "vllm:kv_cache_usage_perc", kind: kindScalar, scalar: analysis.KVCacheUsage},
	{name: "vllm:gpu_cache_usage_perc", kind: kindScalar, scalar: analysis.KVCacheUsage, legacy: true},
	{name: "vllm:prompt_tokens_total", kind: kindScalar, scalar: analysis.PromptTokens},
	{name: "vllm:generation_tokens_total", kind: kindScalar, scalar: analysis.GenerationTokens},
	{name: "vllm:num_preemptions_total", kind: kindScalar, scalar: analysis.Preemptions},
	{name: "vllm:prefix_cache_queries_total", kind: kindScalar, scalar: analysis.PrefixCacheQueries},
	{name: "vllm:gpu_prefix_cache_queries_total", kind: kindScalar, scalar: analysis.PrefixCacheQueries, legacy: true},
	{name: "vllm:prefix_cache_hits_total", kind: kindScalar, scalar: analysis.PrefixCacheHits},
	{name: "vllm:gpu_prefix_cache_hits_total", kind: kindScalar, scalar: analysis.PrefixCacheHits, legacy: true},
	{name: "vllm:spec_decode_num_drafts_total", kind: kindScalar, scalar: analysis.SpecDrafts},
	{name: "vllm:spec_decode_num_draft_tokens_total", kind: kindScalar, scalar: analysis.SpecDraftTokens},
	{name: "vllm:spec_decode_num_accepted_tokens_total", kind: kindScalar, scalar: analysis.SpecAcceptedTokens},

	{name: "vllm:time_to_first_token_seconds", kind: kindHistogram, hist: analysis.TTFT},
	{name: "vllm:inter_token_latency_seconds", kind: kindHistogram, hist: analysis.ITL},
	{name: "vllm:time_per_output_token_seconds", kind: kindHistogram, hist: analysis.ITL, legacy: true},
	{name: "vllm:e2e_request_latency_seconds", kind: kindHistogram, hist: analysis.E2E},
	{name: "vllm:request_queue_time_seconds", kind: kindHistogram, hist: analysis.QueueTime},
	{name: "vllm:request_prefill_time_seconds", kind: kindHistogram, hist: analysis.PrefillTime},
	{name: "vllm:request_decode_time_seconds", kind: kindHistogram, hist: analysis.DecodeTime},
	{name: "vllm:request_prompt_tokens", kind: kindHistogram, hist: analysis.PromptLength},
	{name: "vllm:request_generation_tokens", kind: kindHistogram, hist: analysis.GenerationLength},

	{name: "vllm:request_success_total", kind: kindFinished},
	{name: "vllm:cache_config_info", kind: kindCacheConfig},
	{name: "process_start_time_seconds", kind: kindProcessStart},
	{name: "process_resident_memory_bytes", kind: kindRSS},
	{name: "python_gc_collections_total", kind: kindGC},
	{name: "http_requests_total", kind: kindHTTP},
}

// familyIndex maps an exposed family name to its row in families.
var familyIndex = func() map[string]int {
	m := make(map[string]int, len(families))
	for i, f := range families {
		m[f.name] = i
	}
	return m
}()

// histogramSuffixes are the sample suffixes of a histogram family.
var histogramSuffixes = [...]string{"_bucket", "_sum", "_count"}

// lookupSample returns the row of the family a sample name belongs to, and
// whether it is wanted. A histogram's _bucket/_sum/_count samples belong to
// the histogram family; the table, not the suffix, says it is a histogram.
func lookupSample(name []byte) (int, bool) {
	// m[string(b)] does not allocate: this runs for every line of a page.
	if i, ok := familyIndex[string(name)]; ok {
		return i, true
	}
	for _, suf := range histogramSuffixes {
		if len(name) > len(suf) && string(name[len(name)-len(suf):]) == suf {
			if i, ok := familyIndex[string(name[:len(name)-len(suf)])]; ok && families[i].kind == kindHistogram {
				return i, true
			}
		}
	}
	return 0, false
}

// finishReason maps a finished_reason label value to its index.
func finishReason(v string) (analysis.FinishReason, bool) {
	for i, name := range analysis.FinishReasonNames {
		if name == v {
			return analysis.FinishReason(i), true
		}
	}
	return 0, false
}
