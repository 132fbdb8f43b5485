package page

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

// ingestBoth reads page with label stripping on and off and returns both
// results as text (NaN-safe), with whether the fast path stripped anything.
func ingestBoth(t *testing.T, page, contentType string) (fast, plain string, stripped bool) {
	t.Helper()
	show := func(in *Ingester) string {
		s, err := in.Ingest([]byte(page), contentType)
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("%#v", s)
	}
	fastIn, plainIn := NewIngester(), NewIngester()
	plainIn.stripper.allowed = 0
	fast, plain = show(fastIn), show(plainIn)
	if plainIn.stripper.stripped != 0 {
		t.Fatal("the as-is reading stripped labels")
	}
	return fast, plain, fastIn.stripper.stripped != 0
}

// TestStripLabelsChangesNothing proves that taking model_name and engine
// off the lines before parsing gives the very Sample (or error) the parser
// gives on the page as it is, including on pages where the rewrite must be
// refused.
func TestStripLabelsChangesNothing(t *testing.T) {
	const h = "# TYPE vllm:e2e_request_latency_seconds histogram\n"
	cases := []struct {
		name      string
		page      string
		wantStrip bool
	}{
		{"one model one engine", h +
			`vllm:num_requests_running{engine="0",model_name="m/x"} 3` + "\n" +
			`vllm:e2e_request_latency_seconds_bucket{engine="0",model_name="m/x",le="1"} 2` + "\n" +
			`vllm:e2e_request_latency_seconds_bucket{engine="0",model_name="m/x",le="+Inf"} 4` + "\n" +
			`vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m/x"} 5` + "\n" +
			`vllm:e2e_request_latency_seconds_count{engine="0",model_name="m/x"} 4` + "\n" +
			`vllm:request_success_total{engine="0",finished_reason="stop",model_name="m/x"} 9` + "\n" +
			`process_start_time_seconds 100` + "\n", true},
		{"two engines keep their names", h +
			`vllm:num_requests_running{engine="0",model_name="m"} 3` + "\n" +
			`vllm:num_requests_running{engine="1",model_name="m"} 4` + "\n" +
			`vllm:e2e_request_latency_seconds_bucket{engine="1",model_name="m",le="+Inf"} 4` + "\n", true},
		{"only label, spaces around", `vllm:num_requests_waiting{ model_name = "m" } 2` + "\n", true},
		{"two models", `vllm:num_requests_running{model_name="a"} 1` + "\n" + `vllm:num_requests_running{model_name="b"} 2` + "\n", false},
		{"a series without the label would merge with one with it", h +
			`vllm:e2e_request_latency_seconds_bucket{model_name="m",le="+Inf"} 4` + "\n" +
			`vllm:e2e_request_latency_seconds_sum{model_name="m"} 5` + "\n" +
			`vllm:e2e_request_latency_seconds_bucket{le="+Inf"} 1` + "\n" +
			`vllm:e2e_request_latency_seconds_sum 7` + "\n", false},
		{"escaped value", `vllm:num_requests_running{model_name="a\"b\\c"} 1` + "\n", false},
		{"label text inside another value", `vllm:num_requests_running{x="model_name=\"z\",engine=\"9\"",model_name="m"} 1` + "\n", true},
		{"duplicate label is the parser's error", `vllm:num_requests_running{model_name="m",model_name="m"} 1` + "\n", false},
		{"invalid UTF-8 is the parser's error", "vllm:num_requests_running{model_name=\"\xff\"} 1\n", false},
		{"quoted label names are left to the parser", `vllm:num_requests_running{"model_name"="m"} 1` + "\n", false},
		{"cut mid-label", `vllm:num_requests_running{model_name="m` + "\n", false},
		{"trailing comma", `vllm:num_requests_running{model_name="m",} 1` + "\n", true},
		{"a blank before the braces", `vllm:num_requests_running {engine="0",model_name="m"} 1` + "\n", false},
		{"the label twice among others", `vllm:num_requests_running{engine="0",x="1",engine="0",model_name="m"} 1` + "\n", false},
		{"a family without the engine label", `vllm:num_requests_running{engine="0",model_name="m"} 1` + "\n" +
			`vllm:admission_rejections_total{model_name="m",reason="r"} 1` + "\n", true},
		{"a second engine after a histogram", h +
			`vllm:e2e_request_latency_seconds_bucket{engine="0",model_name="m",le="+Inf"} 4` + "\n" +
			`vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 4` + "\n" +
			`vllm:num_requests_running{engine="1",model_name="m"} 1` + "\n", true},
		{"openmetrics with exemplar", "# TYPE vllm:prompt_tokens counter\n" +
			`vllm:prompt_tokens_total{engine="0",model_name="m"} 10 # {trace_id="1"} 1` + "\n# EOF\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := ""
			if strings.HasSuffix(c.page, "# EOF\n") {
				ct = "application/openmetrics-text; version=1.0.0"
			}
			fast, plain, stripped := ingestBoth(t, c.page, ct)
			if fast != plain {
				t.Errorf("stripped:\n%s\nas is:\n%s", fast, plain)
			}
			if diff := ingestFastAndPlain(c.page, ct); diff != "" {
				t.Error(diff)
			}
			if _, diff := sameDirectFamilies(NewIngester(), []byte(c.page), ct); diff != "" {
				t.Error(diff)
			}
			if stripped != c.wantStrip {
				t.Errorf("stripped = %v, want %v", stripped, c.wantStrip)
			}
		})
	}
}

// TestStripLabelsOnRealPages runs the same comparison over every captured
// page and a simulated-looking V1 page.
func TestStripLabelsOnRealPages(t *testing.T) {
	for _, p := range captures(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			if fast, plain, _ := ingestBoth(t, string(b), "text/plain; version=0.0.4"); fast != plain {
				t.Errorf("stripped and as-is readings differ:\n%s\n%s", fast, plain)
			}
		})
	}
	for _, engines := range []int{1, 2} {
		page := string(testutil.VLLMPage(t, engines))
		fast, plain, stripped := ingestBoth(t, page, "")
		if fast != plain || !stripped {
			t.Errorf("%d engines: stripped %v, readings equal %v", engines, stripped, fast == plain)
		}
	}
}

// FuzzStripLabels: on any page, stripping gives what the parser gives.
func FuzzStripLabels(f *testing.F) {
	f.Add(`vllm:num_requests_running{engine="0",model_name="m"} 3` + "\n")
	f.Add("# TYPE vllm:e2e_request_latency_seconds histogram\n" +
		`vllm:e2e_request_latency_seconds_bucket{model_name="m",le="+Inf"} 4` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf"} 1` + "\n")
	f.Add(newestPage)
	f.Add(`vllm:admission_rejections_total{model_name="m",reason="r"} 1` + "\n" + `vllm:num_requests_running{engine="0",model_name="m"} 3` + "\n")
	f.Fuzz(func(t *testing.T, page string) {
		if fast, plain, _ := ingestBoth(t, page, ""); fast != plain {
			t.Errorf("stripped:\n%s\nas is:\n%s", fast, plain)
		}
	})
}
