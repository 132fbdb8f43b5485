package page

import (
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestRefusedIsNotAbsent: a value the page sends out of its figure's
// domain marks the figure refused (catalogue.Sample.Refused), which the
// analysis tells from a family the page does not export: neither a
// family left out nor a real capture is marked.
func TestRefusedIsNotAbsent(t *testing.T) {
	set := func(figures ...catalogue.Figure) catalogue.FigureSet {
		var s catalogue.FigureSet
		for _, f := range figures {
			s.Add(f)
		}
		return s
	}
	tests := []struct {
		name string
		page []byte
		want catalogue.FigureSet
	}{
		{"running and waiting NaN", []byte("vllm:num_requests_running{model_name=\"m\"} NaN\nvllm:num_requests_waiting{model_name=\"m\"} NaN\n"),
			set(catalogue.ScalarFigure(catalogue.Running), catalogue.ScalarFigure(catalogue.Waiting))},
		{"generation tokens past 2^53", []byte("vllm:generation_tokens_total{model_name=\"m\"} 1e308\nvllm:num_requests_running{model_name=\"m\"} 1\n"),
			set(catalogue.ScalarFigure(catalogue.GenerationTokens))},
		{"a finish count NaN: the finished requests", []byte("vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} NaN\n"),
			set(catalogue.ScalarFigure(catalogue.FinishedRequests))},
		{"a TTFT histogram whose _count is NaN", []byte("# TYPE vllm:time_to_first_token_seconds histogram\n" +
			"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 2\n" +
			"vllm:time_to_first_token_seconds_count{model_name=\"m\"} NaN\nvllm:time_to_first_token_seconds_sum{model_name=\"m\"} 1\n"),
			set(catalogue.HistogramFigure(catalogue.TTFT))},
		{"running and waiting not exported", []byte("vllm:generation_tokens_total{model_name=\"m\"} 7\n"), 0},
		{"a trimmed real vLLM page", loadReal(t, "gh-file-book-ch03-vllm-v0.29.0-cpu-trimmed.txt"), 0},
		{"a real TensorRT-LLM page through Dynamo", loadReal(t, "docs-dynamo-ce30a764-trtllm_via_dynamo-unstated.txt"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewIngester().Ingest(tt.page, "text/plain; version=0.0.4")
			if err != nil {
				t.Fatal(err)
			}
			if s.Refused != tt.want {
				t.Errorf("refused %b, want %b (warnings %q)", s.Refused, tt.want, s.Warnings)
			}
		})
	}
}
