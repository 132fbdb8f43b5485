package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// A theme decides the colour of its model's frames alone: building one
// changes nothing global, and two models draw differently side by side.
func TestThemeIsPerModel(t *testing.T) {
	before := lipgloss.ColorProfile()
	tests := []struct {
		name     string
		theme    *Theme
		wantSGR  bool
		wantText string
	}{
		{"plain", PlainTheme(), false, "PREEMPTING"},
		{"true colour", themeFor(termenv.TrueColor), true, "PREEMPTING"},
		{"256 colours", themeFor(termenv.ANSI256), true, "PREEMPTING"},
	}
	for _, tt := range tests {
		opts := testOptions()
		opts.Theme = tt.theme
		frame := send(sized(New(opts), 120, 40), ReportMsg{Report: allStates(t0)}).View()
		if got := strings.Contains(frame, "\x1b["); got != tt.wantSGR {
			t.Errorf("%s: escape sequences in the frame: %v, want %v", tt.name, got, tt.wantSGR)
		}
		if !strings.Contains(frame, tt.wantText) {
			t.Errorf("%s: the frame lacks %q", tt.name, tt.wantText)
		}
	}
	if after := lipgloss.ColorProfile(); after != before {
		t.Errorf("the global colour profile changed from %v to %v", before, after)
	}
}
