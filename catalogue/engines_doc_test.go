package catalogue

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the engine table of docs/engines.md")

const enginesDoc = "../docs/engines.md"

// keyFigures are the figures the engine table says each engine gives or
// lacks: those the verdicts are judged by.
var keyFigures = []Figure{
	ScalarFigure(Running), ScalarFigure(Waiting), ScalarFigure(KVCacheUsage), ScalarFigure(MaxRunning),
	ScalarFigure(PromptTokens), ScalarFigure(GenerationTokens), ScalarFigure(FinishedRequests),
	ScalarFigure(Preemptions), ScalarFigure(AdmissionRejections),
	HistogramFigure(TTFT), HistogramFigure(ITL), HistogramFigure(E2E), HistogramFigure(QueueTime),
}

// exportsKVCapacity reports whether pages of kind k give the KV cache's
// capacity in tokens (a Sample figure, not a Series one).
func exportsKVCapacity(k EngineKind) bool {
	for _, r := range Reads {
		if r.Engine == k && (r.Kind == ReadKVCapacity || r.Kind == ReadCacheConfig || r.FigureSet().Has(ScalarFigure(KVBlocks))) {
			return true
		}
	}
	return false
}

// enginesTable is the engine table: per engine, every catalogued family
// with its versions, its upstream file and what vtop does with it; then
// per engine kind, the figures read, derived and missing.
func enginesTable() string {
	var b strings.Builder
	var engines []string
	for _, s := range Sources {
		if !slices.Contains(engines, s.Engine) {
			engines = append(engines, s.Engine)
		}
	}
	for _, e := range engines {
		fmt.Fprintf(&b, "### %s\n\n| family | type | versions | upstream file | vtop |\n| --- | --- | --- | --- | --- |\n", e)
		for _, s := range Sources {
			if s.Engine != e {
				continue
			}
			versions := s.Versions
			if s.Unverified != "" {
				versions += " — unverified: " + s.Unverified
			}
			for _, f := range s.Families {
				fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", f.Name, typeNames[f.Type], versions, s.File, FamilyUse(f.Name))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("### What each engine gives\n\n| engine | read | derived | missing |\n| --- | --- | --- | --- |\n")
	for k := EngineVLLM; k < NumEngineKinds; k++ {
		var read, derived, missing []string
		for _, f := range keyFigures {
			how, isDerived := k.DerivedBy(f)
			switch {
			case readsAsIs(k, f) && isDerived:
				read = append(read, f.String()+" ("+derivedAlso(k, f)+how+")")
			case readsAsIs(k, f):
				read = append(read, f.String())
			case isDerived:
				derived = append(derived, f.String()+" ("+how+")")
			default:
				missing = append(missing, f.String())
			}
		}
		if exportsKVCapacity(k) {
			read = append(read, "kv_capacity")
		} else {
			missing = append(missing, "kv_capacity")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k, strings.Join(read, ", "), strings.Join(derived, "; "), strings.Join(missing, ", "))
	}
	return b.String()
}

// readsAsIs reports whether a family of kind k's pages is figure f as
// vLLM means it: a row that feeds it and stands in for nothing else, or
// for the finished requests, a count by reason that sums to them.
func readsAsIs(k EngineKind, f Figure) bool {
	for _, r := range Reads {
		if r.Engine != k || r.Derived {
			continue
		}
		if r.FigureSet().Has(f) || f == ScalarFigure(FinishedRequests) && r.Kind == ReadFinished {
			return true
		}
	}
	return false
}

// derivedAlso says how a derivation of a figure the page also has
// applies: a Derivation only where the figure is absent (an older page),
// one of finished requests by adding to it, a note as it says.
func derivedAlso(k EngineKind, f Figure) string {
	for _, d := range Derivations {
		if d.Engine == k && ScalarFigure(d.Scalar) == f {
			if d.Op == DeriveAddFinished {
				return "with "
			}
			return "where absent, "
		}
	}
	return ""
}

var typeNames = map[Type]string{TypeGauge: "gauge", TypeCounter: "counter", TypeHistogram: "histogram", TypeSummary: "summary"}

// TestEnginesDocument holds docs/engines.md's engine table to the
// catalogue; -update-doc rewrites it.
func TestEnginesDocument(t *testing.T) {
	doc, err := os.ReadFile(enginesDoc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- engines:begin -->\n", "<!-- engines:end -->"
	text := string(doc)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no engine table between %q and %q", enginesDoc, begin, end)
	}
	want := text[:i+len(begin)] + enginesTable() + text[j:]
	if *updateDoc {
		if err := os.WriteFile(enginesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if text != want {
		t.Errorf("%s's engine table differs from the catalogue (go test ./catalogue -run TestEnginesDocument -update-doc rewrites it)", enginesDoc)
	}
}

// Every catalogued family is in a Source, and says what vtop does with
// it: read (as what), or not read and why; a family vtop reads has no
// reason not to be read.
func TestEveryFamilyAccountedFor(t *testing.T) {
	inSource := map[string]bool{}
	for _, s := range Sources {
		if s.Versions == "" || s.File == "" {
			t.Errorf("%s: a source without its versions or file", s.Engine)
		}
		for _, f := range s.Families {
			inSource[f.Name] = true
			if FamilyUse(f.Name) == "" {
				t.Errorf("%s (%s): neither read nor said why not", f.Name, s.Engine)
			}
		}
	}
	for k, list := range EnginePages {
		for _, f := range list {
			if !inSource[f.Name] {
				t.Errorf("%s (%v): catalogued but in no Source", f.Name, EngineKind(k))
			}
		}
	}
	for name := range Unread {
		if _, read := readIndex[name]; read {
			t.Errorf("%s is read and said not to be", name)
		}
		if !inSource[name] {
			t.Errorf("%s: a reason not to read a family no Source lists", name)
		}
	}
}

// The families the engines' current sources define (the reference of
// 2026-12 names each, with its file and line) are all in the catalogue,
// and each is read, read where no newer name is, or not read with a
// reason.
func TestCurrentSourcesAccountedFor(t *testing.T) {
	drift := []string{
		// SGLang
		"sglang:num_retracted_requests_total", "sglang:num_retracted_input_tokens_total", "sglang:num_retracted_output_tokens_total",
		"sglang:num_retracted_reqs", "sglang:spec_accept_length", "sglang:spec_accept_rate", "sglang:spec_num_draft_tokens",
		"sglang:spec_num_steps", "sglang:spec_verify_calls_total", "sglang:num_grammar_queue_reqs",
		"sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_prefill_inflight_queue_reqs", "sglang:num_decode_prealloc_queue_reqs",
		"sglang:num_decode_transfer_queue_reqs", "sglang:num_paused_reqs", "sglang:max_running_requests_under_SLO",
		"sglang:cached_tokens_total", "sglang:queue_time_seconds",
		// endpoint picker
		"inference_model_running_requests", "inference_objective_running_requests", "llm_d_epp_request_running",
		"inference_pool_average_kv_cache_utilization", "llm_d_epp_average_kv_cache_utilization",
		"inference_pool_per_pod_queue_size", "llm_d_epp_per_endpoint_queue_size", "inference_pool_ready_pods",
		"llm_d_epp_ready_endpoints", "llm_d_epp_request_total",
		// TensorRT-LLM
		"trtllm_prompt_tokens_total", "trtllm_generation_tokens_total", "trtllm_max_num_active_requests",
		"trtllm_max_batch_size_runtime", "trtllm_max_batch_size_static", "trtllm_max_num_tokens_runtime",
		"trtllm_kv_cache_max_blocks", "trtllm_kv_cache_tokens_per_block", "trtllm_kv_cache_used_blocks", "trtllm_kv_cache_free_blocks",
		"trtllm_kv_cache_utilization", "trtllm_num_paused_requests", "trtllm_spec_decode_num_draft_tokens_total",
		"trtllm_spec_decode_num_accepted_tokens_total", "trtllm_spec_decode_acceptance_length",
		"trtllm_spec_decode_drafted_tokens_total", "trtllm_spec_decode_accepted_tokens_total",
		"trtllm_request_prefill_time_seconds", "trtllm_request_decode_time_seconds", "trtllm_request_inference_time_seconds",
		"trtllm_prompt_cached_tokens_total", "trtllm_kv_cache_hit_rate", "trtllm_request_error_total",
		"nv_trt_llm_request_metrics", "nv_trt_llm_kv_cache_block_metrics", "nv_trt_llm_inflight_batcher_metrics",
		// Dynamo
		"dynamo_frontend_inflight_requests", "dynamo_frontend_active_requests", "dynamo_frontend_queued_requests",
		"dynamo_frontend_model_max_num_seqs", "dynamo_frontend_model_max_num_batched_tokens", "dynamo_frontend_model_total_kv_blocks",
		"dynamo_frontend_model_kv_cache_block_size", "dynamo_frontend_worker_active_decode_blocks",
		"dynamo_frontend_model_rejection_total", "dynamo_frontend_model_cancellation_total", "dynamo_frontend_requests_total",
		"dynamo_frontend_router_queue_pending_requests",
		// TGI
		"tgi_batch_max_total_tokens", "tgi_batch_current_max_tokens", "tgi_request_failure", "tgi_request_skipped_tokens",
		// llama.cpp, both versions
		"llamacpp:prompt_tokens_total", "llamacpp:prompt_seconds_total", "llamacpp:tokens_predicted_total",
		"llamacpp:tokens_predicted_seconds_total", "llamacpp:n_decode_total", "llamacpp:n_busy_slots_per_decode",
		"llamacpp:prompt_tokens_seconds", "llamacpp:predicted_tokens_seconds", "llamacpp:kv_cache_usage_ratio",
		"llamacpp:kv_cache_tokens", "llamacpp:requests_processing", "llamacpp:requests_deferred", "llamacpp:n_tokens_max",
		// vLLM's two families no released source defines
		"vllm:request_num_preemptions", "vllm:admission_rejections_total",
	}
	var all []Family
	for _, s := range Sources {
		all = append(all, s.Families...)
	}
	for _, name := range drift {
		if _, ok := FindFamily(all, name); !ok {
			t.Errorf("%s: not catalogued", name)
		} else if FamilyUse(name) == "" {
			t.Errorf("%s: neither read nor said why not", name)
		}
	}
}

// A family in no released source is marked so in the engine table.
func TestUnverifiedFamiliesMarked(t *testing.T) {
	for _, s := range Sources {
		if _, ok := FindFamily(s.Families, "vllm:admission_rejections_total"); ok && s.Unverified == "" {
			t.Errorf("vllm:admission_rejections_total: in no vLLM source read, yet not marked unverified")
		}
	}
}

// Unread says, of each catalogued family vtop does not read, why not.
var Unread = map[string]string{
	// vLLM
	"vllm:iteration_tokens_total":                "tokens per engine step: the token counters give the throughput",
	"vllm:estimated_flops_per_gpu_total":         "an estimate of the model's work, not of the server's load",
	"vllm:estimated_read_bytes_per_gpu_total":    "an estimate of the model's work, not of the server's load",
	"vllm:estimated_write_bytes_per_gpu_total":   "an estimate of the model's work, not of the server's load",
	"vllm:mm_cache_hits_total":                   "the multimodal input cache: no verdict reads it",
	"vllm:mm_cache_queries_total":                "the multimodal input cache: no verdict reads it",
	"vllm:request_inference_time_seconds":        "prefill + decode time, read apart",
	"vllm:request_max_num_generation_tokens":     "a request's parameter, not its service",
	"vllm:request_params_max_tokens":             "a request's parameter, not its service",
	"vllm:request_params_n":                      "a request's parameter, not its service",
	"vllm:request_prefill_kv_computed_tokens":    "the prompt tokens by source give it",
	"vllm:request_time_per_output_token_seconds": "a per-request mean; the inter-token latency is read",
	"vllm:nixl_num_descriptors":                  "the transfer's bookkeeping; its time and bytes are read",
	"vllm:nixl_post_time_seconds":                "the transfer's bookkeeping; its time and bytes are read",
	"vllm:nixl_num_failed_notifications_total":   "failed transfers are read; notifications follow them",
	"vllm:nixl_num_kv_expired_reqs_total":        "failed transfers are read",
	"vllm:kv_offload_load_time_total":            "the bytes moved are read",
	"vllm:kv_offload_store_time_total":           "the bytes moved are read",
	"process_cpu_seconds_total":                  "the API server's CPU; the engine's work is in its own families",
	// SGLang
	"sglang:cache_hit_rate":                  "a gauge reset by every decode report: the rate of cached_tokens_total ÷ prompt_tokens_total is read",
	"sglang:gen_throughput":                  "a gauge of the last logging interval: the token counter's rate is read",
	"sglang:num_used_tokens":                 "token_usage, its fraction of the pool, is read",
	"sglang:num_retracted_reqs":              "the retractions of the last interval: num_retracted_requests_total counts them all",
	"sglang:num_prefill_inflight_queue_reqs": "prefill done, its KV cache being sent: not waiting",
	"sglang:max_running_requests_under_SLO":  "a cap only when configured, on the requests within the SLO: not the batch cap",
	"sglang:spec_accept_length":              "a mean of the last interval, and SGLang counts no accepted tokens: acceptance stays n/a",
	"sglang:spec_accept_rate":                "a mean of the last interval, and SGLang counts no accepted tokens: acceptance stays n/a",
	"sglang:spec_num_draft_tokens":           "the adaptive tier's setting, not a count",
	"sglang:spec_num_steps":                  "the adaptive tier's setting, not a count",
	// TensorRT-LLM and Triton
	"trtllm_max_batch_size_static":             "the engine's build limit; max_num_active_requests caps the running requests",
	"trtllm_max_batch_size_runtime":            "the tuner's step limit; max_num_active_requests caps the running requests",
	"trtllm_max_num_tokens_runtime":            "a per-step token limit, not a cap of requests",
	"trtllm_kv_cache_used_blocks":              "kv_cache_utilization is used ÷ max blocks, read",
	"trtllm_kv_cache_free_blocks":              "max − used blocks",
	"trtllm_kv_cache_hit_rate":                 "a gauge: the cached prompt tokens' counter is read",
	"trtllm_spec_decode_acceptance_length":     "the draft and accepted token counters give it",
	"trtllm_spec_decode_drafted_tokens_total":  "by token_position: no count of drafts to divide the positions by, so no acceptance by position; the totals are read",
	"trtllm_spec_decode_accepted_tokens_total": "by token_position: no count of drafts to divide the positions by, so no acceptance by position; the totals are read",
	"trtllm_request_inference_time_seconds":    "prefill + decode time, read apart",
	// TGI
	"tgi_request_count":              "arrivals: the finished requests and the queue are read",
	"tgi_request_inference_duration": "per-batch time read by method (prefill) instead",
	"tgi_request_skipped_tokens":     "speculative tokens skipped; no figure of vtop's holds it",
	// llama.cpp
	"llamacpp:kv_cache_tokens":          "the tokens held: kv_cache_usage_ratio, their fraction, is read; no capacity is exported",
	"llamacpp:n_decode_total":           "decode calls: no figure of vtop's holds them",
	"llamacpp:n_busy_slots_per_decode":  "a running mean typed counter: no rate can be taken of it",
	"llamacpp:n_tokens_max":             "the largest batch seen in tokens, typed counter: not a capacity",
	"llamacpp:prompt_tokens_seconds":    "b4747 resets it on every read, by anyone: rates come from the counters",
	"llamacpp:predicted_tokens_seconds": "b4747 resets it on every read, by anyone: rates come from the counters",
	// Dynamo
	"dynamo_frontend_model_max_num_batched_tokens": "a per-step token limit, not a cap of requests",
	"dynamo_frontend_model_context_length":         "a request's limit, not the server's load",
	"dynamo_frontend_model_cancellation_total":     "cancellations are in requests_total, read",
	"dynamo_frontend_worker_active_decode_blocks":  "per worker, and the frontend says not how many workers share the model's blocks",
	// Endpoint picker
	"inference_model_request_total":     "arrivals at the picker: its backends' own pages count them",
	"inference_objective_request_total": "arrivals at the picker: its backends' own pages count them",
	"llm_d_epp_request_total":           "arrivals at the picker: its backends' own pages count them",
	"inference_pool_average_queue_size": "the per-backend queues are read and summed",
	"llm_d_epp_average_queue_size":      "the per-backend queues are read and summed",
	"inference_pool_ready_pods":         "the backends are counted from the queues' labels",
	"llm_d_epp_ready_endpoints":         "the backends are counted from the queues' labels",
}

// FamilyUse says what vtop does with a catalogued family: the figures it
// feeds (and under which label values), whether only where a newer name is
// absent, what is derived from it; or why it is not read. "" when the
// catalogue does not say, which a test forbids.
func FamilyUse(name string) string {
	i, ok := readIndex[name]
	if !ok {
		if why := Unread[name]; why != "" {
			return "not read: " + why
		}
		return ""
	}
	r := &Reads[i]
	var b strings.Builder
	b.WriteString("read: " + r.feeds())
	if r.Legacy {
		b.WriteString(", where no newer name is on the page")
	}
	if r.Derived {
		b.WriteString(" (standing in, with another meaning)")
	}
	if d := r.derives(); d != "" {
		b.WriteString("; derives " + d)
	}
	return b.String()
}

// feeds names the figures the row's series go to.
func (r *Read) feeds() string {
	switch r.Kind {
	case ReadScalar:
		return r.Scalar.String()
	case ReadHistogram:
		return r.Histogram.String()
	case ReadSleep:
		return SleepLevel.String()
	case ReadFinishedAs:
		s := "finished requests (" + FinishReasonNames[r.Finish] + ")"
		if parts := r.splitFeeds(); len(parts) > 0 {
			s += ", but " + strings.Join(parts, ", ")
		}
		return s
	}
	if name, ok := fixedFeeds[r.Kind]; ok {
		return name
	}
	return strings.Join(r.splitFeeds(), ", ") + "; other values not read"
}

// fixedFeeds names what the rows of a kind feed, whatever the row.
var fixedFeeds = map[ReadKind]string{
	ReadFinished:     "finished requests by finished_reason",
	ReadCacheConfig:  "KV capacity in tokens",
	ReadKVCapacity:   "KV capacity in tokens",
	ReadSpecPerPos:   "accepted tokens by draft position",
	ReadLoRA:         "LoRA adapters",
	ReadProcessStart: "process start (restarts)",
	ReadRSS:          "resident memory",
	ReadGC:           "GC collections",
	ReadHTTP:         "HTTP requests",
}

// splitFeeds names the figure each value of the row's split label goes to.
func (r *Read) splitFeeds() []string {
	var parts []string
	for _, sp := range r.Split {
		fig := sp.Scalar.String()
		if r.Kind == ReadSplitHistogram {
			fig = sp.Histogram.String()
		}
		parts = append(parts, fmt.Sprintf("%s=%q → %s", r.Label, sp.Value, fig))
	}
	return parts
}

// derives names what is derived from the row's figure on its engine's
// pages.
func (r *Read) derives() string {
	var out []string
	for _, d := range Derivations {
		if d.Engine != r.Engine {
			continue
		}
		var src FigureSet
		switch d.Op {
		case DeriveHistogramSum:
			src.Add(HistogramFigure(d.Histogram))
		case DeriveCopy:
			src.Add(ScalarFigure(d.From))
		case DeriveRatio:
			src.Add(ScalarFigure(d.From))
			src.Add(ScalarFigure(d.Over))
		case DeriveAddFinished:
			if r.Kind == ReadFinishedAs && r.Finish == d.Finish {
				out = append(out, d.Scalar.String())
			}
			continue
		}
		if r.FigureSet()&src != 0 {
			out = append(out, d.Scalar.String())
		}
	}
	if r.FigureSet()&(1<<ScalarFigure(KVBlocks)|1<<ScalarFigure(KVBlockTokens)) != 0 {
		out = append(out, "KV capacity in tokens (blocks × tokens per block)")
	}
	return strings.Join(out, ", ")
}
