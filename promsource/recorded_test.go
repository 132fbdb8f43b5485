package promsource

import (
	"strings"
	"testing"
	"time"

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
			got := overrunNote(catalogue.SourceStatus{Path: tt.path, LastRefresh: tt.took}, tt.interval)
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
