package sim

import (
	"slices"
	"sort"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// Bucket lists copied from the vLLM metric catalogue §5, independently of
// the simulator's own variables.
var (
	catTTFT = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	catITL  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	catReq  = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	catIter = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	catN    = []float64{1, 2, 5, 10, 20}
	// build_1_2_5_buckets(32768)
	catTok = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000}
)

type catEntry struct {
	name    string
	kind    dto.MetricType
	labels  []string // sorted, as the page writes them
	buckets []float64
}

var (
	engineLabels = []string{"engine", "model_name"}
	with         = func(extra string) []string {
		l := append([]string{extra}, engineLabels...)
		sort.Strings(l)
		return l
	}
)

// v1Catalogue is vllm-metrics.md §3.1–3.3 (always-registered families) and
// §3.4 (speculative decoding, enabled on the replica under test).
var v1Catalogue = []catEntry{
	{"vllm:num_requests_running", dto.MetricType_GAUGE, engineLabels, nil},
	{"vllm:num_requests_waiting", dto.MetricType_GAUGE, engineLabels, nil},
	{"vllm:num_requests_waiting_by_reason", dto.MetricType_GAUGE, with("reason"), nil},
	{"vllm:kv_cache_usage_perc", dto.MetricType_GAUGE, engineLabels, nil},
	{"vllm:engine_sleep_state", dto.MetricType_GAUGE, with("sleep_state"), nil},
	{"vllm:prompt_tokens_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:generation_tokens_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:prompt_tokens_by_source_total", dto.MetricType_COUNTER, with("source"), nil},
	{"vllm:prompt_tokens_cached_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:request_success_total", dto.MetricType_COUNTER, with("finished_reason"), nil},
	{"vllm:num_preemptions_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:prefix_cache_queries_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:prefix_cache_hits_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:external_prefix_cache_queries_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:external_prefix_cache_hits_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:mm_cache_queries_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:mm_cache_hits_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:estimated_flops_per_gpu_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:estimated_read_bytes_per_gpu_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:estimated_write_bytes_per_gpu_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:spec_decode_num_drafts_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:spec_decode_num_draft_tokens_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:spec_decode_num_accepted_tokens_total", dto.MetricType_COUNTER, engineLabels, nil},
	{"vllm:spec_decode_num_accepted_tokens_per_pos_total", dto.MetricType_COUNTER, with("position"), nil},
	{"vllm:time_to_first_token_seconds", dto.MetricType_HISTOGRAM, engineLabels, catTTFT},
	{"vllm:inter_token_latency_seconds", dto.MetricType_HISTOGRAM, engineLabels, catITL},
	{"vllm:request_time_per_output_token_seconds", dto.MetricType_HISTOGRAM, engineLabels, catITL},
	{"vllm:e2e_request_latency_seconds", dto.MetricType_HISTOGRAM, engineLabels, catReq},
	{"vllm:request_queue_time_seconds", dto.MetricType_HISTOGRAM, engineLabels, catReq},
	{"vllm:request_inference_time_seconds", dto.MetricType_HISTOGRAM, engineLabels, catReq},
	{"vllm:request_prefill_time_seconds", dto.MetricType_HISTOGRAM, engineLabels, catReq},
	{"vllm:request_decode_time_seconds", dto.MetricType_HISTOGRAM, engineLabels, catReq},
	{"vllm:request_prompt_tokens", dto.MetricType_HISTOGRAM, engineLabels, catTok},
	{"vllm:request_generation_tokens", dto.MetricType_HISTOGRAM, engineLabels, catTok},
	{"vllm:request_prefill_kv_computed_tokens", dto.MetricType_HISTOGRAM, engineLabels, catTok},
	{"vllm:request_max_num_generation_tokens", dto.MetricType_HISTOGRAM, engineLabels, catTok},
	{"vllm:request_params_max_tokens", dto.MetricType_HISTOGRAM, engineLabels, catTok},
	{"vllm:request_params_n", dto.MetricType_HISTOGRAM, engineLabels, catN},
	{"vllm:iteration_tokens_total", dto.MetricType_HISTOGRAM, engineLabels, catIter},
	{"http_requests_total", dto.MetricType_COUNTER, []string{"handler", "method", "status"}, nil},
	{"process_start_time_seconds", dto.MetricType_GAUGE, nil, nil},
	{"process_resident_memory_bytes", dto.MetricType_GAUGE, nil, nil},
	{"process_cpu_seconds_total", dto.MetricType_COUNTER, nil, nil},
}

// v0Catalogue is the V0-era page (§6, §7): old names, no engine label.
var v0Catalogue = []catEntry{
	{"vllm:num_requests_running", dto.MetricType_GAUGE, []string{"model_name"}, nil},
	{"vllm:num_requests_waiting", dto.MetricType_GAUGE, []string{"model_name"}, nil},
	{"vllm:gpu_cache_usage_perc", dto.MetricType_GAUGE, []string{"model_name"}, nil},
	{"vllm:prompt_tokens_total", dto.MetricType_COUNTER, []string{"model_name"}, nil},
	{"vllm:gpu_prefix_cache_queries_total", dto.MetricType_COUNTER, []string{"model_name"}, nil},
	{"vllm:gpu_prefix_cache_hits_total", dto.MetricType_COUNTER, []string{"model_name"}, nil},
	{"vllm:request_success_total", dto.MetricType_COUNTER, []string{"finished_reason", "model_name"}, nil},
	{"vllm:time_to_first_token_seconds", dto.MetricType_HISTOGRAM, []string{"model_name"}, catTTFT},
	{"vllm:time_per_output_token_seconds", dto.MetricType_HISTOGRAM, []string{"model_name"}, catITL},
	{"vllm:e2e_request_latency_seconds", dto.MetricType_HISTOGRAM, []string{"model_name"}, catReq},
	{"vllm:iteration_tokens_total", dto.MetricType_HISTOGRAM, []string{"model_name"}, catIter},
}

func TestExportedFamiliesMatchCatalogue(t *testing.T) {
	tests := []struct {
		version string
		want    []catEntry
		absent  []string
	}{
		{V1, v1Catalogue, []string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_queries_total"}},
		{V0, v0Catalogue, []string{"vllm:kv_cache_usage_perc", "vllm:inter_token_latency_seconds", "vllm:prefix_cache_queries_total", "vllm:request_time_per_output_token_seconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			// Replica 1 of the mixed scenario has prefix caching and
			// speculative decoding; replica 0 of a V1 fleet has two engines.
			f, err := NewFleet(Options{Replicas: 2, Scenario: Mixed, Seed: 3, VLLMVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			f.Advance(30e9)
			mfs, err := f.Replicas()[1].Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*dto.MetricFamily{}
			for _, mf := range mfs {
				got[mf.GetName()] = mf
			}
			for _, want := range tt.want {
				checkFamily(t, got[want.name], want)
			}
			for _, name := range tt.absent {
				if _, ok := got[name]; ok {
					t.Errorf("%s present on a %s page", name, tt.version)
				}
			}
		})
	}
}

func checkFamily(t *testing.T, mf *dto.MetricFamily, want catEntry) {
	t.Helper()
	if mf == nil {
		t.Errorf("%s: absent", want.name)
		return
	}
	if mf.GetType() != want.kind {
		t.Errorf("%s: type %v, want %v", want.name, mf.GetType(), want.kind)
	}
	for _, m := range mf.GetMetric() {
		var names []string
		for _, l := range m.GetLabel() {
			names = append(names, l.GetName())
		}
		if !slices.Equal(names, want.labels) {
			t.Errorf("%s: labels %v, want %v", want.name, names, want.labels)
		}
		if want.kind != dto.MetricType_HISTOGRAM {
			continue
		}
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if !slices.Equal(bounds, want.buckets) {
			t.Errorf("%s: buckets %v, want %v", want.name, bounds, want.buckets)
		}
	}
}

func TestFinishReasonsPreCreated(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Idle})
	if err != nil {
		t.Fatal(err)
	}
	p := scrape(t, f.Replicas()[0])
	for _, reason := range []string{"stop", "length", "abort", "error", "repetition"} {
		if n := len(filter(p["vllm:request_success_total"], "finished_reason", reason)); n != 1 {
			t.Errorf("finished_reason=%q: %d series, want 1 at 0", reason, n)
		}
	}
}

func TestTwoEnginesExportTwoSeries(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Mixed, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(60e9)
	p := scrape(t, f.Replicas()[0])
	for _, engine := range []string{"0", "1"} {
		ms := filter(p["vllm:generation_tokens_total"], "engine", engine)
		if len(ms) != 1 || ms[0].GetCounter().GetValue() == 0 {
			t.Errorf("engine %s: %d series (want 1 with tokens)", engine, len(ms))
		}
		if len(filter(p["vllm:cache_config_info"], "engine", engine)) != 1 {
			t.Errorf("engine %s: no cache_config_info", engine)
		}
	}
}

func filter(mf *dto.MetricFamily, name, value string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mf.GetMetric() {
		if matches(m, []string{name, value}) {
			out = append(out, m)
		}
	}
	return out
}

func TestBuckets125(t *testing.T) {
	tests := []struct {
		max  int
		want []float64
	}{
		{8192, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}},
		{32768, catTok},
		{131072, append(append([]float64(nil), catTok...), 50000, 100000)},
		{1, []float64{1}},
	}
	for _, tt := range tests {
		if got := buckets125(tt.max); !slices.Equal(got, tt.want) {
			t.Errorf("buckets125(%d) = %v, want %v", tt.max, got, tt.want)
		}
	}
}

// TestV0SumsEngines checks that a V0 page, which has no engine label, shows
// a two-engine replica as one series holding the sum of both engines.
func TestV0SumsEngines(t *testing.T) {
	pages := map[string]page{}
	for _, v := range []string{V1, V0} {
		f, err := NewFleet(Options{Replicas: 1, Scenario: Mixed, Seed: 4, VLLMVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		f.Advance(45e9)
		pages[v] = scrape(t, f.Replicas()[0])
	}
	if n := len(pages[V0]["vllm:generation_tokens_total"].GetMetric()); n != 1 {
		t.Fatalf("V0 page: %d generation token series, want 1", n)
	}
	v1, v0 := pages[V1].value("vllm:generation_tokens_total"), pages[V0].value("vllm:generation_tokens_total")
	if v1 == 0 || v1 != v0 {
		t.Errorf("generation tokens: V1 engines sum to %v, V0 page shows %v", v1, v0)
	}
	kv := pages[V0].value("vllm:gpu_cache_usage_perc")
	if kv <= 0 || kv >= 1 {
		t.Errorf("V0 KV usage %v, want the engines' mean in (0,1)", kv)
	}
}
