package command

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// The analysis configuration of the command line is the documented one
// (analysis.DefaultConfig) with the flags' values in place: a threshold no
// flag sets (leaving SLOW 10 % under the SLO, the least observations of a
// p99) is the same in live mode, replay and the rules.
func TestAnalysisConfigKeepsTheDefaults(t *testing.T) {
	defaults := analysis.DefaultConfig()
	tests := []struct {
		name       string
		flags      analysisFlags
		window     time.Duration
		hysteresis int
		want       func(*analysis.Config)
	}{
		{
			name:       "the flags' defaults",
			flags:      analysisFlags{SLOTTFT: defaults.SLOTTFT, SLOITL: defaults.SLOITL, TargetQueueTime: defaults.TargetQueueTime},
			window:     defaults.Window,
			hysteresis: defaults.Hysteresis,
			want:       func(*analysis.Config) {},
		},
		{
			name:       "every flag set",
			flags:      analysisFlags{SLOTTFT: 2 * time.Second, SLOITL: 50 * time.Millisecond, SLOE2E: 20 * time.Second, TargetQueueTime: 3 * time.Second},
			window:     time.Minute,
			hysteresis: 1,
			want: func(c *analysis.Config) {
				c.SLOTTFT, c.SLOITL, c.SLOE2E, c.TargetQueueTime = 2*time.Second, 50*time.Millisecond, 20*time.Second, 3*time.Second
				c.Window, c.Hysteresis = time.Minute, 1
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := defaults
			tt.want(&want)
			if got := tt.flags.config(tt.window, tt.hysteresis); got != want {
				t.Errorf("config = %+v\nwant     %+v", got, want)
			}
		})
	}
}
