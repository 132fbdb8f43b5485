package page

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// ways names the readings a page is held to, Ingest's and the reference
// (byExpfmt), so that both refuse alike.
var ways = []struct {
	name string
	read func(page []byte, contentType string) (catalogue.Sample, error)
}{{"ingest", func(page []byte, contentType string) (catalogue.Sample, error) {
	return NewIngester().Ingest(page, contentType)
}}, {"expfmt", byExpfmt}}

// TestIngestRefusesRepeatedSeries: a page holding one series twice is
// malformed, as Prometheus's scrape says ("duplicate sample for
// timestamp"); vtop refuses it too, naming the series and the line, in
// every way it reads a page.
func TestIngestRefusesRepeatedSeries(t *testing.T) {
	tests := []struct {
		name string
		page string
		want string // in the error
	}{
		{
			name: "gauge three times",
			page: "vllm:num_requests_running{model_name=\"m\"} 4\n" +
				"vllm:num_requests_waiting{model_name=\"m\"} 1\n" +
				"vllm:num_requests_running{model_name=\"m\"} 9\n" +
				"vllm:num_requests_running{model_name=\"m\"} 7\n",
			want: `duplicate series at line 3: vllm:num_requests_running{model_name="m"} (first at line 1)`,
		},
		{
			name: "labels in another order are the same series",
			page: "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 4\n" +
				"vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 9\n",
			want: `duplicate series at line 2: vllm:num_requests_running{engine="0",model_name="m"} (first at line 1)`,
		},
		{
			name: "counter without labels",
			page: "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 5\nvllm:prompt_tokens_total 5\n",
			want: `duplicate series at line 3: vllm:prompt_tokens_total (first at line 2)`,
		},
		{
			name: "histogram family repeated",
			page: strings.Repeat("# TYPE vllm:time_to_first_token_seconds histogram\n"+
				"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\n"+
				"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 3\n"+
				"vllm:time_to_first_token_seconds_count 3\n", 2),
			want: `duplicate series at line 6: vllm:time_to_first_token_seconds_bucket{le="1"} (first at line 2)`,
		},
	}
	for _, tt := range tests {
		for _, w := range ways {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				s, err := w.read([]byte(tt.page), "text/plain")
				if err == nil {
					t.Fatalf("accepted: running %v, warnings %q", s.Total.Scalars[catalogue.Running], s.Warnings)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q, want it to hold %q", err, tt.want)
				}
			})
		}
	}
}

// TestIngestDuplicateThenClean: a refused page leaves no memo behind: the
// next page, clean, reads as itself, and a page of the clean one's shape
// read as values only after it is read right too.
func TestIngestDuplicateThenClean(t *testing.T) {
	clean := "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 4\nvllm:num_requests_running{engine=\"1\",model_name=\"m\"} 5\n"
	dup := clean + "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 6\n"
	in := NewIngester()
	setMemoMin(t, 0)
	for i, page := range []string{clean, dup, clean, strings.ReplaceAll(clean, "} 5", "} 8"), dup} {
		s, err := in.Ingest([]byte(page), "text/plain")
		if (err != nil) != (page == dup) {
			t.Fatalf("page %d: error %v", i, err)
		}
		if err == nil {
			want := 9.0
			if i == 3 {
				want = 12
			}
			if got := s.Total.Scalars[catalogue.Running]; got != want {
				t.Errorf("page %d: running %v, want %v", i, got, want)
			}
			if in.replayed != (i == 3) {
				t.Errorf("page %d: read as values only %v", i, in.replayed)
			}
		}
	}
}

// TestIngestSaysWhyQuantilesAreNA: buckets that fall, or lack +Inf, give
// no quantiles; the sample says so, naming the histogram.
func TestIngestSaysWhyQuantilesAreNA(t *testing.T) {
	const h = "# TYPE vllm:time_to_first_token_seconds histogram\n"
	tests := []struct {
		name, page, want string
	}{
		{
			name: "falling buckets",
			page: h + "vllm:time_to_first_token_seconds_bucket{le=\"1\"} 9\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"2\"} 3\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n",
			want: "vllm:time_to_first_token_seconds: bucket counts fall (le=2 holds 3 < 9 of le=1); its quantiles are n/a",
		},
		{
			name: "no +Inf bucket",
			page: h + "vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"2\"} 3\n",
			want: "vllm:time_to_first_token_seconds: no le=\"+Inf\" bucket; its quantiles are n/a",
		},
		{
			name: "well formed: no warning",
			page: h + "vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 3\n",
		},
		{
			name: "only _sum and _count: no warning",
			page: h + "vllm:time_to_first_token_seconds_sum 2\nvllm:time_to_first_token_seconds_count 3\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewIngester().Ingest([]byte(tt.page), "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" && len(s.Warnings) > 0 {
				t.Errorf("warnings %q, want none", s.Warnings)
			}
			if tt.want != "" && !slices.Contains(s.Warnings, tt.want) {
				t.Errorf("warnings %q, want %q", s.Warnings, tt.want)
			}
		})
	}
}

// TestIngestValuesOutOfDomain: a value out of its figure's domain
// (catalogue.Fold.Takes) is not read, in every way a page is read: the
// figure is n/a and a warning names the family.
func TestIngestValuesOutOfDomain(t *testing.T) {
	tests := []struct {
		name, page, warning string
		figure              func(s *catalogue.Sample) float64
	}{
		{"running 1e308", "vllm:num_requests_running{model_name=\"m\"} 1e308\n",
			"vllm:num_requests_running: value 1e+308 is out of its domain (past 2^53",
			func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.Running] }},
		{"KV cache 1.5", "vllm:kv_cache_usage_perc{model_name=\"m\"} 1.5\n",
			"vllm:kv_cache_usage_perc: value 1.5 is out of its domain (a fraction is within 0–1)",
			func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.KVCacheUsage] }},
		{"KV cache +Inf", "vllm:kv_cache_usage_perc{model_name=\"m\"} +Inf\n",
			"vllm:kv_cache_usage_perc: value +Inf is out of its domain (not a finite number)",
			func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.KVCacheUsage] }},
		{"finished +Inf", "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} +Inf\n",
			"vllm:request_success_total: value +Inf is out of its domain (not a finite number)",
			func(s *catalogue.Sample) float64 { return s.Total.Finished[catalogue.FinishStop] }},
		{"capacity NaN", "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"NaN\"} 1\n",
			"vllm:cache_config_info: value NaN is out of its domain (not a finite number)",
			func(s *catalogue.Sample) float64 { return s.KVCapacityTokens }},
	}
	for _, tt := range tests {
		for _, w := range ways {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				s, err := w.read([]byte(tt.page), "text/plain")
				if err != nil {
					t.Fatal(err)
				}
				if v := tt.figure(&s); !math.IsNaN(v) {
					t.Errorf("figure %v, want n/a", v)
				}
				if !slices.ContainsFunc(s.Warnings, func(x string) bool { return strings.HasPrefix(x, tt.warning) }) {
					t.Errorf("warnings %q, want %q", s.Warnings, tt.warning)
				}
			})
		}
	}
}

// TestIngestHistogramOutOfDomain: a histogram holding a count or a sum
// that is not a finite number, a negative count, or one past 2^53 is not
// read: its figures are n/a, and a warning names it.
func TestIngestHistogramOutOfDomain(t *testing.T) {
	const h = "# TYPE vllm:time_to_first_token_seconds histogram\n"
	tests := []struct{ name, page, want string }{
		{"+Inf bucket count", h + "vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} +Inf\n",
			"vllm:time_to_first_token_seconds: count +Inf of le=+Inf is out of its domain (not a finite number); its figures are n/a"},
		{"NaN sum", h + "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 2\nvllm:time_to_first_token_seconds_sum NaN\nvllm:time_to_first_token_seconds_count 2\n",
			"vllm:time_to_first_token_seconds: sum NaN is out of its domain (not a finite number); its figures are n/a"},
		{"count past 2^53", h + "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 1e300\nvllm:time_to_first_token_seconds_count 1e300\n",
			"vllm:time_to_first_token_seconds: count 1e+300 of le=+Inf is out of its domain (past 2^53, where a float no longer counts); its figures are n/a"},
	}
	for _, tt := range tests {
		for _, w := range ways {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				s, err := w.read([]byte(tt.page), "text/plain")
				if err != nil {
					t.Fatal(err)
				}
				if s.Total.Histograms[catalogue.TTFT].Present() {
					t.Errorf("histogram read: %+v", s.Total.Histograms[catalogue.TTFT])
				}
				if !slices.Contains(s.Warnings, tt.want) {
					t.Errorf("warnings %q, want %q", s.Warnings, tt.want)
				}
			})
		}
	}
}
