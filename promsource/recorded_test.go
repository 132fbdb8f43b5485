package promsource

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestOverrunNote: a raw refresh longer than the interval says that the
// store's recording rules make it cheap; a refresh within it, or one of
// the rules path, says nothing.
func TestOverrunNote(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		took     time.Duration
		interval time.Duration
		note     bool
	}{
		{"raw, overrunning", PathRaw, 1900 * time.Millisecond, time.Second, true},
		{"raw, within", PathRaw, 400 * time.Millisecond, time.Second, false},
		{"raw, exactly the interval", PathRaw, time.Second, time.Second, false},
		{"rules, overrunning", PathRules, 1900 * time.Millisecond, time.Second, false},
		{"no refresh yet", "", 0, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := overrunNote(catalogue.SourceStatus{Path: tt.path, RefreshSeconds: tt.took.Seconds()}, tt.interval)
			if (got != "") != tt.note || tt.note && !(strings.Contains(got, "`vtop rules`") && strings.Contains(got, "1.9s")) {
				t.Errorf("note %q, want one: %v (naming vtop rules and the time taken)", got, tt.note)
			}
		})
	}
}

// TestLaggedNote: rules whose evaluation read the store as of another
// time than the one they record (VictoriaMetrics' latency offset, for
// vmalert's queries without nocache=1) are not read, and the note says
// by how much and how to write rules that read the present; rules that
// read it at their own time, to half an interval, are read.
func TestLaggedNote(t *testing.T) {
	stamp := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		readAt   time.Time
		interval time.Duration
		lagged   bool
	}{
		{"read at the evaluation time", stamp, 5 * time.Second, false},
		{"VictoriaMetrics' default offset", stamp.Add(-30 * time.Second), 5 * time.Second, true},
		{"a millisecond's rounding", stamp.Add(-time.Millisecond), time.Second, false},
		{"half an interval", stamp.Add(-500 * time.Millisecond), time.Second, false},
		{"past half an interval", stamp.Add(-501 * time.Millisecond), time.Second, true},
		{"ahead of the stamp", stamp.Add(2 * time.Second), time.Second, true},
		{"no info row read", time.Time{}, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := laggedNote(stamp, tt.readAt, tt.interval)
			if (got != "") != tt.lagged {
				t.Fatalf("note %q, want one: %v", got, tt.lagged)
			}
			if tt.lagged && !(strings.Contains(got, stamp.Sub(tt.readAt).String()) && strings.Contains(got, "`vtop rules --format vmalert`") && strings.Contains(got, "raw series")) {
				t.Errorf("note %q: want the lag, the raw path, and the rules that ask with nocache=1", got)
			}
		})
	}
}

// TestAlertsOf: an evaluation's alerts are those written within its
// interval from its time: Prometheus's at the time itself, vmalert's at
// the second its evaluation began (the records at that time aligned to
// the interval: 12:00:05 for an evaluation begun at 12:00:09 every 5s);
// the evaluation before's and the next's are not.
func TestAlertsOf(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 5, 0, time.UTC).UnixMilli()
	tests := []struct {
		name    string
		written []int64 // ms after the evaluation's time
		of      bool
	}{
		{"Prometheus: at the evaluation's time", []int64{0}, true},
		{"vmalert: the second its evaluation began", []int64{4000}, true},
		{"the last millisecond of the interval", []int64{4999}, true},
		{"the next evaluation's", []int64{5000}, false},
		{"the evaluation before's", []int64{-1}, false},
		{"the one before and the next", []int64{-5000, 5000}, false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var values []model.SamplePair
			for _, ms := range tt.written {
				values = append(values, model.SamplePair{Timestamp: model.Time(at + ms), Value: 1})
			}
			if got := alertsOf(values, at, 5*time.Second); got != tt.of {
				t.Errorf("alerts written at %v ms: of the evaluation %v, want %v", tt.written, got, tt.of)
			}
		})
	}
}
