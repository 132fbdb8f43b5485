package analysis

import "testing"

// Every state that is a problem raises an alert named after it, paging
// for a replica that serves nobody or needs capacity now, a ticket for one
// slow or stuck; IDLE's is news; the others raise none.
func TestAlertOf(t *testing.T) {
	tests := []struct {
		state State
		want  Alert
		ok    bool
	}{
		{StateDown, Alert{"VtopDown", "critical"}, true},
		{StateStalled, Alert{"VtopStalled", "critical"}, true},
		{StatePreempting, Alert{"VtopPreempting", "critical"}, true},
		{StateFull, Alert{"VtopFull", "critical"}, true},
		{StateSlow, Alert{"VtopSlow", "warning"}, true},
		{StateStale, Alert{"VtopStale", "warning"}, true},
		{StateIdle, Alert{"VtopIdle", "info"}, true},
		{StateHealthy, Alert{}, false},
		{StateSleeping, Alert{}, false},
		{StateUnjudged, Alert{}, false},
		{StateWarming, Alert{}, false},
		{StateRecovering, Alert{}, false},
	}
	for _, tt := range tests {
		if got, ok := AlertOf(tt.state); got != tt.want || ok != tt.ok {
			t.Errorf("AlertOf(%s) = %+v, %v; want %+v, %v", tt.state, got, ok, tt.want, tt.ok)
		}
	}
}
