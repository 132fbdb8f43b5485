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
