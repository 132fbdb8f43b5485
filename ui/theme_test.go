package ui

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/vtop-dev/vtop/analysis"
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

// ansi256Bg finds a 256-colour background in an SGR sequence: "48;5;160".
var ansi256Bg = regexp.MustCompile(`48;5;(\d+)`)

// The DOWN badge is red on a 256-colour terminal (its true colour, rounded
// to the 256-colour cube, was near black).
func TestDownBadgeIsRedIn256Colours(t *testing.T) {
	badge := themeFor(termenv.ANSI256).badge(analysis.StateDown)
	m := ansi256Bg.FindStringSubmatch(badge)
	reds := map[string]bool{"1": true, "9": true, "88": true, "124": true, "160": true, "196": true, "161": true}
	if m == nil || !reds[m[1]] {
		t.Errorf("DOWN badge %q: background is not red", badge)
	}
}

// On a light terminal nothing is drawn white: the DOWN pane's border
// was white on white.
func TestLightBackgroundPalette(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(false)
	th := NewTheme(r)
	for s := range stateWords {
		for _, sel := range []bool{false, true} {
			if box := th.pane(analysis.State(s), sel).Render("x"); strings.Contains(box, "38;2;255;255;255") {
				t.Errorf("%s pane border is white on a light terminal", stateWords[s])
			}
		}
		if f := th.state(analysis.State(s)).Render("x"); strings.Contains(f, "38;2;255;255;255") {
			t.Errorf("%s figures are white on a light terminal", stateWords[s])
		}
	}
}

// The command's --color auto|always|never maps onto a theme: never is
// plain whatever the terminal, always colours even a pipe and under
// NO_COLOR, auto follows the output and NO_COLOR.
func TestColorModes(t *testing.T) {
	tests := []struct {
		mode    string
		noColor bool
		wantSGR bool
	}{
		{"never", false, false},
		{"always", false, true},
		{"always", true, true},
		{"auto", true, false},
		{"auto", false, false}, // a buffer is not a terminal
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s NO_COLOR=%v", tt.mode, tt.noColor), func(t *testing.T) {
			if tt.noColor {
				t.Setenv("NO_COLOR", "1")
			}
			mode, err := ParseColorMode(tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			got := strings.Contains(NewThemeFor(&out, mode).badge(analysis.StateFull), "\x1b[")
			if got != tt.wantSGR {
				t.Errorf("escape sequences: %v, want %v", got, tt.wantSGR)
			}
		})
	}
	if _, err := ParseColorMode("sometimes"); err == nil {
		t.Error("ParseColorMode accepted \"sometimes\"")
	}
}
