package rules

import (
	"strings"
	"testing"
	"time"
)

// TestValidate refuses the settings no rule can be written with.
func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Options)
		error string
	}{
		{"defaults", func(*Options) {}, ""},
		{"interval under a second", func(o *Options) { o.EvaluationInterval = 500 * time.Millisecond }, "evaluation interval"},
		{"window of one evaluation", func(o *Options) { o.Config.Window = 5 * time.Second }, "two evaluations"},
		{"no SLO", func(o *Options) { o.Config.SLOITL = 0 }, "SLOs"},
		{"no hysteresis", func(o *Options) { o.Config.Hysteresis = 0 }, "hysteresis"},
		{"no label", func(o *Options) { o.GroupBy = nil }, "no label"},
		{"not a label", func(o *Options) { o.GroupBy = []string{"pod-name"} }, "not a label name"},
		{"reserved label", func(o *Options) { o.GroupBy = []string{"__name__"} }, "not a label name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.edit(&o)
			err := o.Validate()
			if tt.error == "" && err != nil || tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)) {
				t.Errorf("got %v, want an error with %q", err, tt.error)
			}
		})
	}
}

// TestHolds: a judged state fires on the hysteresis-th evaluation that
// finds it, as vtop shows it, and is kept as long after its evidence ends.
func TestHolds(t *testing.T) {
	tests := []struct {
		hysteresis int
		interval   time.Duration
		keep       bool
		held, kept time.Duration
		fullSpan   time.Duration
	}{
		{2, 5 * time.Second, true, 5 * time.Second, 5 * time.Second, 12500 * time.Millisecond},
		{3, 5 * time.Second, true, 10 * time.Second, 10 * time.Second, 12500 * time.Millisecond},
		{1, 15 * time.Second, true, 0, 0, 37500 * time.Millisecond},
		{2, time.Second, false, time.Second, 0, 5 * time.Second},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		o.Config.Hysteresis, o.EvaluationInterval, o.KeepFiringFor = tt.hysteresis, tt.interval, tt.keep
		o.Config.Window = time.Minute
		b := builder{o: o}
		b.t.FullSpan, b.t.FullReadings = 5*time.Second, 3
		if b.held() != tt.held || b.kept() != tt.kept || b.fullSpan() != tt.fullSpan {
			t.Errorf("hysteresis %d every %s: held %s kept %s full span %s, want %s %s %s",
				tt.hysteresis, tt.interval, b.held(), b.kept(), b.fullSpan(), tt.held, tt.kept, tt.fullSpan)
		}
	}
}
