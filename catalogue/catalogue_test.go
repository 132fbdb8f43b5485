package catalogue

import (
	"math"
	"slices"
	"testing"
)

// EnginePages lists each kind's catalogued families: where a family the
// alias table reads must be found.
var EnginePages = [NumEngineKinds][]Family{
	EngineVLLM:     slices.Concat(VLLMV1, VLLMV0, VLLMLatest, VLLMNIXL, VLLMOffload, VLLMLoRA, VLLMRetired),
	EngineSGLang:   slices.Concat(SGLang, SGLangV04, SGLangCurrent),
	EngineTRTLLM:   slices.Concat(TRTLLM, TRTLLMCurrent),
	EngineTGI:      slices.Concat(TGI, TGIV3),
	EngineLlamaCpp: slices.Concat(LlamaCpp, LlamaCppB4747),
	EngineDynamo:   slices.Concat(Dynamo, DynamoCurrent),
}

// Every family vtop reads is on a catalogued page of its engine, with the
// type the alias table expects: a name typed wrong here would be read as
// nothing.
func TestReadsAreOnAPage(t *testing.T) {
	pages := EnginePages
	pages[EngineUnknown] = slices.Concat(Frontend, EndpointPicker, EndpointPickerCurrent)
	pages[EngineTRTLLM] = slices.Concat(TRTLLM, TRTLLMCurrent, TritonTRTLLM)
	// Families vtop reads that the lists do not spell out: the info gauge
	// of the cache config (its labels change from release to release), the
	// Python GC counter, and trtllm-serve's unprefixed spellings, seen only
	// in an excerpt.
	unlisted := map[string]bool{"vllm:cache_config_info": true, "python_gc_collections_total": true}
	for _, r := range Reads {
		if unlisted[r.Name] || (r.Engine == EngineTRTLLM && r.Legacy) {
			continue
		}
		f, ok := FindFamily(pages[r.Engine], r.Name)
		if !ok {
			t.Errorf("%s: read but on no catalogued %s page", r.Name, r.Engine)
			continue
		}
		if want := typeRead(r); f.Type != want {
			t.Errorf("%s: catalogued as type %d, read as %d", r.Name, f.Type, want)
		}
		if r.Label != "" && !slices.Contains(f.Labels, r.Label) {
			t.Errorf("%s: split by %q, which its series do not carry (%v)", r.Name, r.Label, f.Labels)
		}
	}
}

// typeRead is the family type a row of the alias table expects.
func typeRead(r Read) Type {
	switch r.Kind {
	case ReadHistogram, ReadSplitHistogram:
		return TypeHistogram
	case ReadScalar:
		if r.Scalar.IsCounter() {
			return TypeCounter
		}
		return TypeGauge
	case ReadSplitScalar:
		if r.Split[0].Scalar.IsCounter() {
			return TypeCounter
		}
		return TypeGauge
	case ReadFinished, ReadFinishedAs, ReadHTTP, ReadGC, ReadSpecPerPos:
		return TypeCounter
	}
	return TypeGauge
}

// Legacy vLLM names are V0's, current names those of a V1 page, of the
// newest one or of the releases that had them: the alias table prefers the
// current name, so a V1 name marked legacy would be shadowed on new pages.
func TestLegacyNamesAreV0(t *testing.T) {
	current := slices.Concat(VLLMV1, VLLMLatest, VLLMNIXL, VLLMOffload, VLLMLoRA, VLLMRetired)
	for _, r := range Reads {
		if r.Engine != EngineVLLM || r.Kind == ReadCacheConfig {
			continue
		}
		_, inV1 := FindFamily(current, r.Name)
		if r.Legacy && inV1 {
			t.Errorf("%s is marked legacy but is on a V1 page", r.Name)
		}
		if !r.Legacy && !inV1 {
			t.Errorf("%s is current but not on a V1 page", r.Name)
		}
	}
}

// One name, one row: the parser looks a sample up by its name alone. A row
// splits its family by a label exactly when its kind says so, so that a
// reader knowing only ReadScalar and ReadHistogram never merges the values;
// a count of ended requests of one reason may name label values that are
// another figure (TGI's shed requests), which Resolve alone reads.
func TestReadNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reads {
		split := r.Kind == ReadSplitScalar || r.Kind == ReadSplitHistogram
		mayName := split || r.Kind == ReadFinishedAs
		if split && r.Split == nil || !mayName && r.Split != nil || (r.Split != nil) != (r.Label != "") {
			t.Errorf("%s: kind %d with split %v by %q", r.Name, r.Kind, r.Split, r.Label)
		}
		if seen[r.Name] {
			t.Errorf("%s has two rows", r.Name)
		}
		seen[r.Name] = true
	}
}

func TestTokenBuckets(t *testing.T) {
	tests := []struct {
		max  int
		want []float64
	}{
		{8192, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}},
		{32768, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}},
		{131072, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}},
		{1, []float64{1}},
	}
	for _, tt := range tests {
		if got := TokenBuckets(tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("TokenBuckets(%d) = %v, want %v", tt.max, got, tt.want)
		}
	}
}

func TestLookupSample(t *testing.T) {
	tests := []struct {
		name string
		want string // the family's name, "" when not read
	}{
		{"vllm:num_requests_running", "vllm:num_requests_running"},
		{"vllm:time_to_first_token_seconds_bucket", "vllm:time_to_first_token_seconds"},
		{"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds"},
		{"vllm:gpu_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		{"vllm:num_requests_running_bucket", ""}, // a gauge has no buckets
		{"vllm:iteration_tokens_total_bucket", ""},
		{"go_goroutines", ""},
		{"vllm:num_requests_waiting_by_reason", "vllm:num_requests_waiting_by_reason"},
		{"vllm:request_num_preemptions_count", "vllm:request_num_preemptions"},
		{"vllm:nixl_xfer_time_seconds_bucket", "vllm:nixl_xfer_time_seconds"},
		{"sglang:num_running_reqs", "sglang:num_running_reqs"},
		{"sglang:num_retractions_sum", "sglang:num_retractions"},
		{"tgi_request_success", "tgi_request_success"},
		{"tgi_request_success_total", ""}, // TGI writes no _total
		{"tgi_request_input_length_sum", "tgi_request_input_length"},
		{"llamacpp:requests_deferred", "llamacpp:requests_deferred"},
		{"e2e_request_latency_seconds_bucket", "e2e_request_latency_seconds"}, // trtllm-serve unprefixed
		{"dynamo_frontend_time_to_first_token_seconds_sum", "dynamo_frontend_time_to_first_token_seconds"},
		{"dynamo_component_requests_total", ""}, // a worker's Dynamo wrapper: not an engine figure
	}
	for _, tt := range tests {
		i, ok := LookupSample([]byte(tt.name))
		got := ""
		if ok {
			got = Reads[i].Name
		}
		if got != tt.want {
			t.Errorf("LookupSample(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ name, want string }{
		{"vllm:num_requests_running", "vllm:num_requests_running"},
		{"kserve_vllm:num_requests_running", "vllm:num_requests_running"},
		{"ray_vllm_num_requests_running", "vllm:num_requests_running"},
		{"num_requests_running", "vllm:num_requests_running"}, // NIM
		{"ray_vllm_time_to_first_token_seconds_bucket", "vllm:time_to_first_token_seconds_bucket"},
		{"time_per_output_token_seconds_sum", "vllm:time_per_output_token_seconds_sum"},
		{"kserve_vllm:request_success_total", "vllm:request_success_total"},
		{"process_start_time_seconds", "process_start_time_seconds"},
		{"http_requests_total", "http_requests_total"}, // not a vLLM family: no prefix to add
		{"kserve_vllm:go_goroutines", "kserve_vllm:go_goroutines"},
		{"ray_vllm_", "ray_vllm_"},
		{"sglang:num_running_reqs", "sglang:num_running_reqs"}, // other engines keep their names
		{"e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Canonical(tt.name); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestBucketsProblem: buckets that give no quantiles say why.
func TestBucketsProblem(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name string
		b    Buckets
		want string
	}{
		{"well formed", Buckets{Bounds: []float64{1, inf}, Counts: []float64{2, 3}}, ""},
		{"sum and count alone", Buckets{Bounds: []float64{}, Counts: []float64{}, Sum: 1, Count: 2}, ""},
		{"absent", Buckets{}, ""},
		{"falling", Buckets{Bounds: []float64{1, 2, inf}, Counts: []float64{9, 3, 9}}, "bucket counts fall (le=2 holds 3 < 9 of le=1)"},
		{"falling past a bucket not sampled", Buckets{Bounds: []float64{1, 2, inf}, Counts: []float64{9, nan, 3}}, "bucket counts fall (le=+Inf holds 3 < 9 of le=1)"},
		{"a bucket not sampled", Buckets{Bounds: []float64{1, 2, inf}, Counts: []float64{2, nan, 3}}, ""},
		{"no +Inf", Buckets{Bounds: []float64{1, 2}, Counts: []float64{2, 3}}, `no le="+Inf" bucket`},
	}
	for _, tt := range tests {
		if got := tt.b.Problem(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
