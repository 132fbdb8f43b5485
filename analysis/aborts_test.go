package analysis

import (
	"slices"
	"strings"
	"testing"
)

// TestAbortsAreSaid: a material share of client aborts among the finished
// requests (materialAbortShare) is a reason on the replica's state, the
// second, whatever the state; and the throughput and the efficiency say
// that they count the aborts, with what succeeded beside them.
func TestAbortsAreSaid(t *testing.T) {
	tests := []struct {
		name       string
		m          member
		wantState  State
		wantSecond string // the second reason; "" when no abort reason is due
		wantIn     []string
	}{
		{"a FULL replica whose clients give up waiting",
			member{stop: 6.3, abort: 8.8, running: 256, waiting: 951, growth: 1}, StateFull,
			"58% of finished requests were client aborts (8.8/s): clients give up waiting",
			[]string{"against 15.1 finished/s, 6.3 successful (efficiency 94%, aborts included)"}},
		{"a healthy replica with a tenth aborted",
			member{stop: 9, abort: 1, running: 48}, StateHealthy,
			"10% of finished requests were client aborts (1/s): clients gave up before their answer ended",
			[]string{"10 req/s (9 successful)"}},
		{"a few aborts are no reason",
			member{stop: 9.6, abort: 0.4, running: 48}, StateHealthy, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets, now := fleetOfMembers(tt.m)
			cfg := DefaultConfig()
			cfg.Hysteresis = 1
			r := Analyze(now, targets, cfg, nil).Replicas[0]
			if r.State != tt.wantState {
				t.Fatalf("%v, want %v: %q", r.State, tt.wantState, r.Reasons)
			}
			aborted := slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.Contains(s, "client aborts") })
			switch {
			case tt.wantSecond == "" && aborted:
				t.Errorf("an abort reason for %v%% aborted: %q", 100*r.AbortShare, r.Reasons)
			case tt.wantSecond != "" && (len(r.Reasons) < 2 || r.Reasons[1] != tt.wantSecond):
				t.Errorf("reasons %q, want the second %q", r.Reasons, tt.wantSecond)
			}
			all := strings.Join(r.Reasons, "\n")
			for _, want := range tt.wantIn {
				if !strings.Contains(all, want) {
					t.Errorf("reasons lack %q:\n%s", want, all)
				}
			}
		})
	}
}
