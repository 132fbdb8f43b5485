package analysis

import (
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestFirstAction: the states that ask something say it in the words the
// panes use; FULL names the engine's own waiting gauge.
func TestFirstAction(t *testing.T) {
	tests := []struct {
		state State
		kind  catalogue.EngineKind
		want  string
	}{
		{StateDown, catalogue.EngineVLLM, "check the inference server process / pod"},
		{StatePreempting, catalogue.EngineVLLM, "lower max_num_seqs"},
		{StateFull, catalogue.EngineVLLM, "add replicas; scale on vllm:num_requests_waiting"},
		{StateFull, catalogue.EngineSGLang, "scale on sglang:num_queue_reqs"},
		{StateSlow, catalogue.EngineVLLM, "long prompts"},
		{StateStale, catalogue.EngineVLLM, "PROMETHEUS_MULTIPROC_DIR"},
		{StateStalled, catalogue.EngineVLLM, "the engine stopped stepping: restart it"},
		{StateIdle, catalogue.EngineVLLM, ""},
		{StateHealthy, catalogue.EngineVLLM, ""},
	}
	for _, tt := range tests {
		got := FirstAction(tt.state, tt.kind, DefaultConfig())
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s on %s: %q, want it to say %q", tt.state, tt.kind, got, tt.want)
		}
	}
}

// TestJudgementThresholds are the constants the state rules read.
func TestJudgementThresholds(t *testing.T) {
	got := JudgementThresholds()
	want := Thresholds{fullMinSamples, fullSpan, obviousQueue, preemptingSpan, materialRecomputed, materialPreempted, leastEvidence, staleMinSamples, stalledSpan}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
