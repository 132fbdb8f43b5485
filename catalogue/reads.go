package catalogue

// ReadKind says what a family vtop reads feeds in a Sample.
type ReadKind uint8

// The kinds of family vtop reads.
const (
	ReadScalar       ReadKind = iota // one of Scalar
	ReadHistogram                    // one of Histogram
	ReadFinished                     // vllm:request_success_total by finished_reason
	ReadCacheConfig                  // vllm:cache_config_info labels
	ReadProcessStart                 // process_start_time_seconds
	ReadRSS                          // process_resident_memory_bytes
	ReadGC                           // python_gc_collections_total
	ReadHTTP                         // http_requests_total
)

// Read is one row of the alias table: a family vtop reads, under one of the
// names it has been exposed as.
type Read struct {
	// Name is the family as exposed on a page (counters with _total).
	Name string
	// Kind says what the family feeds.
	Kind ReadKind
	// Scalar is the figure fed, when Kind is ReadScalar.
	Scalar Scalar
	// Histogram is the figure fed, when Kind is ReadHistogram.
	Histogram Histogram
	// Legacy marks an old name: it is read only when the page does not
	// also carry the current name for the same figure.
	Legacy bool
}

// Reads is THE alias table: every family vtop reads, under every name
// vLLM has exposed it. Anything not listed here is dropped before parsing.
var Reads = []Read{
	{Name: "vllm:num_requests_running", Kind: ReadScalar, Scalar: Running},
	{Name: "vllm:num_requests_waiting", Kind: ReadScalar, Scalar: Waiting},
	{Name: "vllm:kv_cache_usage_perc", Kind: ReadScalar, Scalar: KVCacheUsage},
	{Name: "vllm:gpu_cache_usage_perc", Kind: ReadScalar, Scalar: KVCacheUsage, Legacy: true},
	{Name: "vllm:prompt_tokens_total", Kind: ReadScalar, Scalar: PromptTokens},
	{Name: "vllm:generation_tokens_total", Kind: ReadScalar, Scalar: GenerationTokens},
	{Name: "vllm:num_preemptions_total", Kind: ReadScalar, Scalar: Preemptions},
	{Name: "vllm:prefix_cache_queries_total", Kind: ReadScalar, Scalar: PrefixCacheQueries},
	{Name: "vllm:gpu_prefix_cache_queries_total", Kind: ReadScalar, Scalar: PrefixCacheQueries, Legacy: true},
	{Name: "vllm:prefix_cache_hits_total", Kind: ReadScalar, Scalar: PrefixCacheHits},
	{Name: "vllm:gpu_prefix_cache_hits_total", Kind: ReadScalar, Scalar: PrefixCacheHits, Legacy: true},
	{Name: "vllm:spec_decode_num_drafts_total", Kind: ReadScalar, Scalar: SpecDrafts},
	{Name: "vllm:spec_decode_num_draft_tokens_total", Kind: ReadScalar, Scalar: SpecDraftTokens},
	{Name: "vllm:spec_decode_num_accepted_tokens_total", Kind: ReadScalar, Scalar: SpecAcceptedTokens},

	{Name: "vllm:time_to_first_token_seconds", Kind: ReadHistogram, Histogram: TTFT},
	{Name: "vllm:inter_token_latency_seconds", Kind: ReadHistogram, Histogram: ITL},
	{Name: "vllm:time_per_output_token_seconds", Kind: ReadHistogram, Histogram: ITL, Legacy: true},
	{Name: "vllm:e2e_request_latency_seconds", Kind: ReadHistogram, Histogram: E2E},
	{Name: "vllm:request_queue_time_seconds", Kind: ReadHistogram, Histogram: QueueTime},
	{Name: "vllm:request_prefill_time_seconds", Kind: ReadHistogram, Histogram: PrefillTime},
	{Name: "vllm:request_decode_time_seconds", Kind: ReadHistogram, Histogram: DecodeTime},
	{Name: "vllm:request_prompt_tokens", Kind: ReadHistogram, Histogram: PromptLength},
	{Name: "vllm:request_generation_tokens", Kind: ReadHistogram, Histogram: GenerationLength},

	{Name: "vllm:request_success_total", Kind: ReadFinished},
	{Name: "vllm:cache_config_info", Kind: ReadCacheConfig},
	{Name: "process_start_time_seconds", Kind: ReadProcessStart},
	{Name: "process_resident_memory_bytes", Kind: ReadRSS},
	{Name: "python_gc_collections_total", Kind: ReadGC},
	{Name: "http_requests_total", Kind: ReadHTTP},
}

// readIndex maps an exposed family name to its row in Reads.
var readIndex = func() map[string]int {
	m := make(map[string]int, len(Reads))
	for i, f := range Reads {
		m[f.Name] = i
	}
	return m
}()

// histogramSuffixes are the sample suffixes of a histogram family.
var histogramSuffixes = [...]string{"_bucket", "_sum", "_count"}

// LookupSample returns the row of Reads a sample name belongs to, and
// whether vtop reads it. A histogram's _bucket/_sum/_count samples belong to
// the histogram family; the table, not the suffix, says it is a histogram.
func LookupSample(name []byte) (int, bool) {
	// m[string(b)] does not allocate: this runs for every line of a page.
	if i, ok := readIndex[string(name)]; ok {
		return i, true
	}
	for _, suf := range histogramSuffixes {
		if len(name) > len(suf) && string(name[len(name)-len(suf):]) == suf {
			if i, ok := readIndex[string(name[:len(name)-len(suf)])]; ok && Reads[i].Kind == ReadHistogram {
				return i, true
			}
		}
	}
	return 0, false
}

// FinishReasonOf maps a finished_reason label value to its FinishReason.
func FinishReasonOf(v string) (FinishReason, bool) {
	for i, name := range FinishReasonNames {
		if name == v {
			return FinishReason(i), true
		}
	}
	return 0, false
}

// HistogramName returns the current exposed name of a histogram.
func HistogramName(h Histogram) string {
	for _, f := range Reads {
		if f.Kind == ReadHistogram && f.Histogram == h && !f.Legacy {
			return f.Name
		}
	}
	return "histogram"
}

// Label names vtop reads on vLLM pages.
const (
	LabelModel          = "model_name"
	LabelEngine         = "engine"
	LabelFinishedReason = "finished_reason"
)

// LookupFamily returns the row of Reads for an exposed family name (as a
// # TYPE line names it), and whether vtop reads it.
func LookupFamily(name string) (int, bool) {
	i, ok := readIndex[name]
	return i, ok
}

// Prefixes are the spellings of vLLM's "vllm:" prefix in the wild: vLLM's
// own, KServe's rewrite ("kserve_vllm:"), Ray Serve's ("ray_vllm_", the
// colon made an underscore) and NVIDIA NIM's, which drops the prefix. A
// reader of someone else's storage (a Prometheus server) meets them all; a
// page of vLLM itself only the first.
var Prefixes = []string{"vllm:", "kserve_vllm:", "ray_vllm_", ""}

// Canonical returns the name a sample has under vLLM's own prefix when it
// is a vLLM sample vtop reads under a rewritten prefix (or none), and the
// name unchanged otherwise: "kserve_vllm:num_requests_running" and
// "num_requests_running" both give "vllm:num_requests_running", while
// "process_start_time_seconds" stays itself. LookupSample of the result
// then finds the family.
func Canonical(name string) string {
	const own = "vllm:"
	for _, p := range Prefixes {
		if p == own || len(name) <= len(p) || name[:len(p)] != p {
			continue
		}
		c := own + name[len(p):]
		if i, ok := LookupSample([]byte(c)); ok && Reads[i].Name[:len(own)] == own {
			return c
		}
	}
	return name
}
