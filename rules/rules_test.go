package rules

import (
	"math"
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
		// What promtool rejects in by (…): PromQL's keywords and its
		// numbers, in any case.
		{"a keyword", func(o *Options) { o.GroupBy = []string{"pod", "without"} }, `group-by "without" is a PromQL keyword`},
		{"a keyword in capitals", func(o *Options) { o.GroupBy = []string{"BY"} }, `group-by "BY" is a PromQL keyword`},
		{"inf", func(o *Options) { o.GroupBy = []string{"inf"} }, `group-by "inf" is a PromQL number`},
		{"Inf", func(o *Options) { o.GroupBy = []string{"Inf"} }, `group-by "Inf" is a PromQL number`},
		{"NaN", func(o *Options) { o.GroupBy = []string{"NaN"} }, `group-by "NaN" is a PromQL number`},
		// A for: past time.Duration's range wrapped to -10s and -3s709ms.
		{"the largest hysteresis", func(o *Options) { o.Config.Hysteresis = math.MaxInt }, "hysteresis 9223372036854775807: for: would be"},
		{"a hysteresis whose for: wraps", func(o *Options) { o.Config.Hysteresis = 3689348815 }, "hysteresis 3689348815: for: would be"},
		{"an interval whose two evaluations wrap", func(o *Options) { o.EvaluationInterval = 2562047 * time.Hour }, "two evaluations"},
		{"an interval whose FULL readings wrap", func(o *Options) {
			o.Config.Window, o.EvaluationInterval = math.MaxInt64, math.MaxInt64/2
		}, "evaluations of it pass the longest duration"},
		{"one more than the longest for:", func(o *Options) {
			e := o.EvaluationInterval
			o.Config.Hysteresis = int((math.MaxInt64-e/2)/e) + 2
		}, "past the longest duration a rule can hold"},
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
