package analysis

import (
	"strings"
	"testing"
)

// TestOneScalingRecommendation: the fleet advice gives one replica count
// to act on, with its basis and reasoning, and says what the other figure
// is. The queue rule (the HPA rule on vllm:num_requests_waiting) is an
// autoscaler target: with a backlog it asks for hundreds of replicas, which
// is not a count to act on. The capacity rule needs a full replica's
// sustained rate.
func TestOneScalingRecommendation(t *testing.T) {
	tests := []struct {
		name                      string
		rps, running, waiting, gr []float64
		wantReplicas              float64
		wantBasis                 string
		wantText                  []string
	}{
		{"four full replicas and a growing backlog: act on capacity",
			[]float64{12, 12, 12, 12}, []float64{256, 256, 256, 256}, []float64{951, 951, 951, 951}, []float64{1, 1, 1, 1},
			5, "capacity", []string{"act on 5 replicas (capacity)", "52 req/s arriving ÷ 12 req/s a full replica finishes",
				"clears the backlog of 3,924 in about 8m11s", "the queue rule's 302 is an HPA target"}},
		{"capacity carries the arrivals on fewer than are up, a backlog drains: keep them",
			[]float64{12, 12, 12, 12}, []float64{256, 256, 256, 256}, []float64{951, 951, 951, 951}, []float64{-4.5, -4.5, -4.5, -4.5},
			4, "capacity", []string{"keep 4 replicas (capacity)", "3 carry the 30 req/s arriving", "do not scale down while the backlog"}},
		{"no queue, no full replica: keep what is up",
			[]float64{6, 6, 6}, []float64{48, 48, 48}, []float64{0, 0, 0}, []float64{0, 0, 0},
			3, "queue", []string{"keep 3 replicas (queue)", "no queue beyond the target"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets, now := fleetOf(tt.rps, tt.running, tt.waiting, tt.gr)
			cfg := DefaultConfig()
			cfg.Hysteresis = 1
			a := Analyze(now, targets, cfg, nil).Fleet.Advice
			if !sameFloat(a.RecommendedReplicas.Float(), tt.wantReplicas) || a.Basis != tt.wantBasis {
				t.Errorf("recommended %v by %q, want %v by %q; %q", a.RecommendedReplicas, a.Basis, tt.wantReplicas, tt.wantBasis, a.Recommendation)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(a.Recommendation, want) {
					t.Errorf("recommendation %q lacks %q", a.Recommendation, want)
				}
			}
			if len(a.Summary) == 0 || a.Summary[0] != a.Recommendation {
				t.Errorf("the summary leads with the recommendation: %q", a.Summary)
			}
		})
	}
}
