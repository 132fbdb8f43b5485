package page

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// omPage is what the Rust frontend serves: OpenMetrics, counters typed by
// their base name, integer gauges, labels model_name first, a # UNIT, an
// exemplar on a bucket and on a counter, _created lines, and # EOF.
const omPage = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m",engine="0"} 7
# TYPE vllm:prompt_tokens counter
# UNIT vllm:prompt_tokens tokens
vllm:prompt_tokens_total{model_name="m",engine="0"} 1234 # {trace_id="abc # not a comment"} 3 1700000000.5
vllm:prompt_tokens_created{model_name="m",engine="0"} 1700000000.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",engine="0",le="0.1"} 3 # {trace_id="x"} 0.05
vllm:time_to_first_token_seconds_bucket{model_name="m",engine="0",le="1"} 9
vllm:time_to_first_token_seconds_bucket{model_name="m",engine="0",le="+Inf"} 10
vllm:time_to_first_token_seconds_count{model_name="m",engine="0"} 10
vllm:time_to_first_token_seconds_sum{model_name="m",engine="0"} 4.5
vllm:time_to_first_token_seconds_created{model_name="m",engine="0"} 1700000000.0
# TYPE vllm:request_success counter
vllm:request_success_total{model_name="m",engine="0",finished_reason="stop"} 8
vllm:request_success_total{model_name="m",engine="0",finished_reason="length"} 2
# EOF
`

func TestIngestOpenMetrics(t *testing.T) {
	for _, ct := range []string{"application/openmetrics-text; version=1.0.0; charset=utf-8", "text/plain"} {
		t.Run(ct, func(t *testing.T) {
			s, err := NewIngester().Ingest([]byte(omPage), ct)
			if err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				what      string
				got, want float64
			}{
				{"running", s.Total.Scalars[catalogue.Running], 7},
				{"prompt tokens (counter named by base)", s.Total.Scalars[catalogue.PromptTokens], 1234},
				{"finished stop", s.Total.Finished[catalogue.FinishStop], 8},
				{"finished length", s.Total.Finished[catalogue.FinishLength], 2},
				{"ttft le=0.1 (exemplar stripped)", bucketAt(catalogue.TTFT, 0.1)(&s), 3},
				{"ttft le=1", bucketAt(catalogue.TTFT, 1)(&s), 9},
				{"ttft count", s.Total.Histograms[catalogue.TTFT].Count, 10},
				{"ttft sum", s.Total.Histograms[catalogue.TTFT].Sum, 4.5},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

// The OpenMetrics path must stay a text parse (expfmt's OM decoder takes
// seconds per page): a thousand-series OM page must ingest in well under a
// second even on a loaded test machine.
func TestIngestOpenMetricsIsFast(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE vllm:time_to_first_token_seconds histogram\n")
	for e := range 40 {
		for _, le := range catalogue.TTFTBuckets {
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{model_name=\"m\",engine=\"%d\",le=\"%g\"} 1 # {trace_id=\"t\"} 0.01\n", e, le)
		}
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{model_name=\"m\",engine=\"%d\",le=\"+Inf\"} 1\n", e)
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{model_name=\"m\",engine=\"%d\"} 1\n", e)
	}
	b.WriteString("# EOF\n")
	start := time.Now()
	s, err := NewIngester().Ingest([]byte(b.String()), "application/openmetrics-text")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("OpenMetrics page of %d bytes took %v", b.Len(), d)
	}
	if len(s.Engines) != 40 || s.Total.Histograms[catalogue.TTFT].Count != 40 {
		t.Errorf("engines %d, ttft count %v", len(s.Engines), s.Total.Histograms[catalogue.TTFT].Count)
	}
}

func TestIngestHostilePages(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		page    string
		check   func(s *catalogue.Sample) (got, want float64)
		warning string // a substring one warning must have ("" = no warning)
	}{
		{
			name: "new name preferred over the old one on one page",
			page: "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.25\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.KVCacheUsage], 0.25
			},
		},
		{
			name: "NaN gauge is n/a with a warning",
			page: "vllm:num_requests_waiting{model_name=\"m\"} NaN\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.Waiting], nan
			},
			warning: "vllm:num_requests_waiting: value NaN is out of its domain (not a finite number)",
		},
		{
			name: "+Inf counter is n/a with a warning",
			page: "vllm:generation_tokens_total{model_name=\"m\"} +Inf\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.GenerationTokens], nan
			},
			warning: "vllm:generation_tokens_total: value +Inf is out of its domain (not a finite number)",
		},
		{
			name: "negative gauge is n/a with a warning",
			page: "vllm:num_requests_running{model_name=\"m\"} -3\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.Running], nan
			},
			warning: "vllm:num_requests_running: value -3 is out of its domain (a count is ≥ 0); the figure is n/a",
		},
		{
			name: "le=1 and le=1.0 coalesced by summing",
			page: "# TYPE vllm:time_to_first_token_seconds histogram\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"1.0\"} 3\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 6\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				b := s.Total.Histograms[catalogue.TTFT]
				if len(b.Bounds) != 2 {
					return float64(len(b.Bounds)), 2
				}
				return b.Counts[0], 5
			},
		},
		{
			name: "non-monotonic buckets kept as given, sorted by bound, and said",
			page: "# TYPE vllm:time_to_first_token_seconds histogram\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 4\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"2\"} 3\n" +
				"vllm:time_to_first_token_seconds_bucket{le=\"1\"} 9\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				b := s.Total.Histograms[catalogue.TTFT]
				if !slices.Equal(b.Bounds, []float64{1, 2, math.Inf(1)}) {
					return -1, 0
				}
				return b.Counts[0]*100 + b.Counts[1]*10 + b.Counts[2], 934
			},
			warning: "vllm:time_to_first_token_seconds: bucket counts fall",
		},
		{
			name: "histogram without +Inf kept without it, and said",
			page: "# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_bucket{le=\"1\"} 2\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				b := s.Total.Histograms[catalogue.E2E]
				return float64(len(b.Bounds)) + b.Bounds[0], 2
			},
			warning: `vllm:e2e_request_latency_seconds: no le="+Inf" bucket`,
		},
		{
			name: "histogram with only _sum and _count is present without buckets",
			page: "# TYPE vllm:e2e_request_latency_seconds histogram\nvllm:e2e_request_latency_seconds_sum 9\nvllm:e2e_request_latency_seconds_count 3\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				b := s.Total.Histograms[catalogue.E2E]
				if !b.Present() || len(b.Bounds) != 0 {
					return -1, 0
				}
				return b.Sum / b.Count, 3
			},
		},
		{
			name: "histogram typed only by its # TYPE line (a _total name)",
			page: "# TYPE vllm:iteration_tokens_total histogram\nvllm:iteration_tokens_total_bucket{le=\"1\"} 2\nvllm:num_requests_running 1\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.Running], 1
			},
		},
		{
			name: "unknown finish reason ignored",
			page: "vllm:request_success_total{finished_reason=\"teleported\"} 4\nvllm:request_success_total{finished_reason=\"abort\"} 1\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				if stop := s.Total.Finished[catalogue.FinishStop]; !math.IsNaN(stop) {
					return stop, nan // misfiled
				}
				return s.Total.Finished[catalogue.FinishAbort], 1
			},
		},
		{
			name: "CRLF line ends",
			page: "# TYPE vllm:num_requests_waiting gauge\r\nvllm:num_requests_waiting 4\r\n",
			check: func(s *catalogue.Sample) (float64, float64) {
				return s.Total.Scalars[catalogue.Waiting], 4
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewIngester().Ingest([]byte(tt.page), "text/plain")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tt.check(&s); !sameFloat(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if tt.warning == "" && len(s.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", s.Warnings)
			}
			if tt.warning != "" && !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, tt.warning) }) {
				t.Errorf("warnings %q, want one containing %q", s.Warnings, tt.warning)
			}
		})
	}
}

func TestIngestLabelsAreSanitized(t *testing.T) {
	long := strings.Repeat("x", 5000)
	page := "vllm:num_requests_running{engine=\"0\",model_name=\"evil\x1b[2Jmodel\x07" + long + "\"} 1\n" +
		"vllm:num_requests_running{engine=\"\x1b]0;pwned\x07\",model_name=\"m\"} 2\n"
	s, err := NewIngester().Ingest([]byte(page), "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsFunc(s.Model, isControl) || len(s.Model) > safetext.MaxTextLen+len("…") {
		t.Errorf("model not sanitized: %q (len %d)", s.Model[:min(40, len(s.Model))], len(s.Model))
	}
	if len(s.Engines) != 2 {
		t.Fatalf("engines = %d, want 2", len(s.Engines))
	}
	for _, e := range s.Engines {
		if strings.ContainsFunc(e.Name, isControl) {
			t.Errorf("engine name not sanitized: %q", e.Name)
		}
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func TestIngestCardinalityCaps(t *testing.T) {
	var b strings.Builder
	for e := range MaxEngines + 10 {
		fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\"} 1\n", e)
	}
	s, err := NewIngester().Ingest([]byte(b.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Engines) != MaxEngines || s.Total.Scalars[catalogue.Running] != MaxEngines {
		t.Errorf("engines %d running %v, want %d each", len(s.Engines), s.Total.Scalars[catalogue.Running], MaxEngines)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "more than 64 engines") }) {
		t.Errorf("warnings %q lack the engine cap", s.Warnings)
	}

	b.Reset()
	for i := range MaxSeries + 500 {
		fmt.Fprintf(&b, "vllm:request_success_total{finished_reason=\"stop\",x=\"%d\"} 1\n", i)
	}
	s, err = NewIngester().Ingest([]byte(b.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Total.Finished[catalogue.FinishStop]; got != MaxSeries {
		t.Errorf("finished stop = %v, want the %d series under the cap", got, MaxSeries)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "more than 2000 vLLM series") }) {
		t.Errorf("warnings %q lack the series cap", s.Warnings)
	}
}

func TestIngestErrors(t *testing.T) {
	tests := []struct {
		name, page, contentType, want string
	}{
		{"empty", "", "text/plain", "empty body"},
		{"blank", " \n\n", "text/plain", "empty body"},
		{"html by content type", "hello", "text/html; charset=utf-8", "HTML page, not Prometheus metrics"},
		{"html by sniffing", "<!DOCTYPE html><html>oops</html>", "text/plain", "HTML page, not Prometheus metrics"},
		{"json", `{"status":"ok"}`, "application/json", "JSON, not Prometheus metrics"},
		{"json served as text", "{\"object\":\"list\"}\n", "text/plain", "JSON, not Prometheus metrics"},
		{"cut mid-line", "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\nvllm:num_requests_waiting{model_name=\"x", "text/plain", "page cut mid-line at byte 106"},
		{"garbage value, line of the page not of the filtered copy", "a 1\nb 2\n# HELP vllm:num_requests_waiting x\nvllm:num_requests_waiting abc\n", "", "parse error at line 4: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewIngester().Ingest([]byte(tt.page), tt.contentType)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// TestIngestContentTypeChanges: one target's Ingester remembers the media
// type of the last Content-Type; a server that changes its header is read
// by the new one, the empty header included.
func TestIngestContentTypeChanges(t *testing.T) {
	const page = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n"
	const openMetrics = page + "# EOF\n"
	in := NewIngester()
	steps := []struct {
		page, contentType, wantErr string
	}{
		{page, "", ""},
		{page, "text/html; charset=utf-8", "HTML page"},
		{page, "text/html; charset=utf-8", "HTML page"},
		{openMetrics, "application/openmetrics-text; version=1.0.0", ""},
		{page, "application/json", "JSON"},
		{page, "text/plain; version=0.0.4", ""},
		{page, "", ""},
		{page, "application/vnd.google.protobuf", "protobuf"},
	}
	for i, st := range steps {
		s, err := in.Ingest([]byte(st.page), st.contentType)
		switch {
		case st.wantErr == "" && err != nil:
			t.Fatalf("step %d (%q): %v", i, st.contentType, err)
		case st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)):
			t.Fatalf("step %d (%q): error %v, want %q", i, st.contentType, err, st.wantErr)
		case st.wantErr == "" && s.Total.Scalars[catalogue.Running] != 1:
			t.Fatalf("step %d (%q): running %v, want 1", i, st.contentType, s.Total.Scalars[catalogue.Running])
		}
	}
}

// TestSameName: sameName says a line has the previous line's name exactly
// when SampleName would return that name.
func TestSameName(t *testing.T) {
	lines := []string{
		"vllm:num_requests_running 3", "vllm:num_requests_running{engine=\"0\"} 3",
		"vllm:num_requests_running\t3", "vllm:num_requests_running", "vllm:num_requests_running_total 3",
		"vllm:num_requests_runnin 3", "vllm:num_requests_running{", "{a=\"b\"} 1", "x 1", "",
	}
	for _, prev := range lines {
		name := SampleName([]byte(prev))
		for _, line := range lines {
			want := string(SampleName([]byte(line))) == string(name)
			if got := sameName([]byte(line), name); got != want {
				t.Errorf("sameName(%q, %q) = %v, want %v", line, name, got, want)
			}
		}
	}
}
