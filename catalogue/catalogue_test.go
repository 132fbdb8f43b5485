package catalogue

import (
	"slices"
	"testing"
)

// Every family vtop reads is on a page of some generation, with the type
// the alias table expects: a name typed wrong here would be read as nothing.
func TestReadsAreOnAPage(t *testing.T) {
	pages := slices.Concat(VLLMV1, VLLMV0, Frontend)
	// Families vtop reads that the page lists above do not spell out: the
	// info gauge of the cache config, and the Python GC counter.
	unlisted := map[string]bool{"vllm:cache_config_info": true, "python_gc_collections_total": true}
	for _, r := range Reads {
		if unlisted[r.Name] {
			continue
		}
		f, ok := FindFamily(pages, r.Name)
		if !ok {
			t.Errorf("%s: read but on no catalogued page", r.Name)
			continue
		}
		want := TypeGauge
		switch {
		case r.Kind == ReadHistogram:
			want = TypeHistogram
		case r.Kind == ReadScalar && r.Scalar.IsCounter(), r.Kind == ReadFinished, r.Kind == ReadHTTP:
			want = TypeCounter
		}
		if f.Type != want {
			t.Errorf("%s: catalogued as type %d, read as %d", r.Name, f.Type, want)
		}
	}
}

// Legacy names are V0's, current names V1's: the alias table prefers the
// current name, so a V1 name marked legacy would be shadowed on new pages.
func TestLegacyNamesAreV0(t *testing.T) {
	for _, r := range Reads {
		if r.Kind != ReadScalar && r.Kind != ReadHistogram {
			continue
		}
		_, inV1 := FindFamily(VLLMV1, r.Name)
		if r.Legacy && inV1 {
			t.Errorf("%s is marked legacy but is on a V1 page", r.Name)
		}
		if !r.Legacy && !inV1 {
			t.Errorf("%s is current but not on a V1 page", r.Name)
		}
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
		{"", ""},
	}
	for _, tt := range tests {
		if got := Canonical(tt.name); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
