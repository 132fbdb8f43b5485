package command

import (
	"math"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// pageOf is a reading with the given counters and process start time (NaN:
// the page has none).
func pageOf(prompt, generation, started float64) catalogue.Sample {
	s := catalogue.Sample{Total: catalogue.NewSeries(), ProcessStartTime: started}
	s.Total.Scalars[catalogue.PromptTokens], s.Total.Scalars[catalogue.GenerationTokens] = prompt, generation
	return s
}

// Two pages whose every counter is lower in the second are either given
// the wrong way round or taken across a restart: the refusal names both
// unless the process start time tells which, and when the start times
// differ it says the server restarted.
func TestCompareReadingsCountersDown(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name          string
		before, after catalogue.Sample
		want, notWant []string
	}{
		{"every counter lower, no start time: both possibilities",
			pageOf(3000, 1800, nan), pageOf(1000, 600, nan),
			[]string{"swapped", "restarted between"}, nil},
		{"every counter lower, the same start time: swapped, not a restart",
			pageOf(3000, 1800, 1.7e9), pageOf(1000, 600, 1.7e9),
			[]string{"swapped", "same process start time"}, []string{"restarted"}},
		{"a later start time: restarted",
			pageOf(3000, 1800, 1.7e9), pageOf(1000, 600, 1.7e9+30),
			[]string{"restarted between"}, []string{"swapped"}},
		{"an earlier start time: restarted, and the files look swapped",
			pageOf(1000, 600, 1.7e9+600), pageOf(3000, 1800, 1.7e9),
			[]string{"restarted between", "swapped"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compareReadings(tt.before, tt.after)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("%q says %q", err, w)
				}
			}
		})
	}
}
