package ui

import (
	"fmt"
	"io"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/vtop-dev/vtop/analysis"
)

// Theme is every style the ui draws with, built once for one renderer;
// nothing global changes, so two models can draw with different themes.
type Theme struct {
	renderer *lipgloss.Renderer

	title, dim, alert, warn, action, selected, headerRow, downBadge lipgloss.Style

	// A state's figures, its word, its pane borders [state][selected]; the
	// last of each (plain) for a state the theme does not know (styleIndex).
	states [len(stateWords) + 1]lipgloss.Style
	badges [len(stateWords) + 1]lipgloss.Style
	panes  [len(stateWords) + 1][2]lipgloss.Style
	plain  lipgloss.Style

	series []lipgloss.Style
}

// NewTheme builds the theme for a renderer: colours as far as its profile
// allows (plain text under NO_COLOR or into a pipe).
func NewTheme(r *lipgloss.Renderer) *Theme {
	t := &Theme{renderer: r, plain: r.NewStyle()}
	t.title = r.NewStyle().Bold(true)
	t.dim = r.NewStyle().Faint(true)
	t.alert = r.NewStyle().Bold(true).Reverse(true)
	t.warn = r.NewStyle().Bold(true).Foreground(stateColors[analysis.StateSlow])
	t.action = r.NewStyle().Foreground(seriesColors[0])
	t.selected = r.NewStyle().Bold(true)
	t.headerRow = r.NewStyle().Bold(true).Underline(true)
	// Complete colours: the true colour rounded to the 256-colour cube is
	// near black, so each profile gets its own red.
	t.downBadge = r.NewStyle().Bold(true).
		Foreground(lipgloss.CompleteColor{TrueColor: "#ffffff", ANSI256: "231", ANSI: "15"}).
		Background(lipgloss.CompleteColor{TrueColor: "#c41e3a", ANSI256: "160", ANSI: "1"})
	for s, c := range stateColors {
		t.states[s] = r.NewStyle().Foreground(c)
		t.badges[s] = t.states[s].Bold(true)
		// A heavier border shows the selection even without colour.
		t.panes[s][0] = r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c)
		t.panes[s][1] = r.NewStyle().Border(lipgloss.ThickBorder()).BorderForeground(c)
	}
	// DOWN's border is white (near black on a light terminal), its figures red.
	t.states[analysis.StateDown] = r.NewStyle().Foreground(lipgloss.Color("#ff5f5f"))
	t.badges[analysis.StateDown] = t.downBadge
	unknown := len(stateWords)
	t.states[unknown], t.badges[unknown] = t.plain, t.plain.Bold(true)
	t.panes[unknown] = [2]lipgloss.Style{t.plain.Border(lipgloss.RoundedBorder()), t.plain.Border(lipgloss.ThickBorder())}
	for _, c := range seriesColors {
		t.series = append(t.series, r.NewStyle().Foreground(c))
	}
	return t
}

// PlainTheme is a theme without colour or attributes, whatever the terminal.
func PlainTheme() *Theme {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	// Set, not detected: detection would query a terminal.
	r.SetHasDarkBackground(true)
	return NewTheme(r)
}

// stateWords are the badges, in capitals to read as labels without colour.
var stateWords = [...]string{"HEALTHY", "IDLE", "SLEEPING", "UNJUDGED", "WARMING", "RECOVERING", "STALE", "SLOW", "FULL", "PREEMPTING", "STALLED", "DOWN"}

// stateWord returns the badge text of a state.
func stateWord(s analysis.State) string {
	if int(s) < len(stateWords) {
		return stateWords[s]
	}
	return "UNKNOWN"
}

// The palette (for the README): every colour is a pair, one for dark
// terminals and one for light ones. vtop picks the pair from the
// background the terminal reports (lipgloss's HasDarkBackground asks it
// with an OSC 11 query; a terminal that does not answer counts as dark).
// Nothing is white on a light background, and every state is also a word,
// so no colour carries a meaning alone. --color never (or NO_COLOR under
// --color auto) draws no colour at all; --color always colours a pipe.
//
// stateColors pair light and dark terminal colours per state.
var stateColors = [len(stateWords)]lipgloss.AdaptiveColor{
	analysis.StateHealthy:    {Light: "#007a33", Dark: "#3ddc84"},
	analysis.StateIdle:       neutral,
	analysis.StateSleeping:   {Light: "#005f87", Dark: "#5fafd7"},
	analysis.StateUnjudged:   neutral,
	analysis.StateWarming:    neutral,
	analysis.StateRecovering: {Light: "#2e6b8a", Dark: "#7fbfdf"},
	analysis.StateStale:      {Light: "#8a6d00", Dark: "#c9b458"},
	analysis.StateSlow:       {Light: "#b36b00", Dark: "#ffb02e"},
	analysis.StateFull:       {Light: "#c41e3a", Dark: "#ff5f5f"},
	analysis.StatePreempting: {Light: "#8b008b", Dark: "#ff6ad5"},
	analysis.StateStalled:    {Light: "#9b1c00", Dark: "#ff8700"},
	analysis.StateDown:       {Light: "#1c1c1c", Dark: "#ffffff"},
}

// neutral is the grey of the states that say nothing is wrong nor right yet.
var neutral = lipgloss.AdaptiveColor{Light: "#555555", Dark: "#8a8a8a"}

// seriesColors are the colours of the lines of one chart, in order: the
// action's blue, then colours of the states.
var seriesColors = []lipgloss.AdaptiveColor{{Light: "#005fd7", Dark: "#5fafff"},
	stateColors[analysis.StateSlow], stateColors[analysis.StatePreempting], stateColors[analysis.StateHealthy]}

// styleIndex is a state's place in the theme's tables: the last for a
// state the theme does not know.
func styleIndex(s analysis.State) int { return min(int(s), len(stateWords)) }

// state is the style of a state's figures.
func (t *Theme) state(s analysis.State) lipgloss.Style { return t.states[styleIndex(s)] }

// badge draws a state as a coloured word.
func (t *Theme) badge(s analysis.State) string { return t.badges[styleIndex(s)].Render(stateWord(s)) }

// pane is the bordered box of a replica in a state.
func (t *Theme) pane(s analysis.State, selected bool) lipgloss.Style {
	if selected {
		return t.panes[styleIndex(s)][1]
	}
	return t.panes[styleIndex(s)][0]
}

func (t *Theme) seriesStyle(i int) lipgloss.Style { return t.series[i%len(t.series)] }

// helpStyles are the bubbles help styles, drawn with this theme's renderer
// rather than the global one.
func (t *Theme) helpStyles() help.Styles {
	s := help.New().Styles
	for _, st := range []*lipgloss.Style{&s.Ellipsis, &s.ShortKey, &s.ShortDesc, &s.ShortSeparator,
		&s.FullKey, &s.FullDesc, &s.FullSeparator} {
		*st = st.Renderer(t.renderer)
	}
	return s
}

// styleInput draws a text input with this theme's renderer.
func (t *Theme) styleInput(ti *textinput.Model) {
	for _, st := range []*lipgloss.Style{&ti.PromptStyle, &ti.TextStyle, &ti.PlaceholderStyle,
		&ti.CompletionStyle, &ti.Cursor.Style, &ti.Cursor.TextStyle} {
		*st = st.Renderer(t.renderer)
	}
}

// ColorMode is how colour is chosen, as the command's --color flag says.
type ColorMode int

// The colour modes.
const (
	// ColorAuto follows the output: colour on a terminal, as far as its
	// profile allows; none into a pipe or under NO_COLOR.
	ColorAuto ColorMode = iota
	// ColorAlways colours whatever the output and NO_COLOR say (256
	// colours at least).
	ColorAlways
	// ColorNever draws plain text: no colour, no attributes.
	ColorNever
)

var colorModeNames = [...]string{"auto", "always", "never"}

// ParseColorMode reads a --color value: auto, always or never.
func ParseColorMode(s string) (ColorMode, error) {
	for i, name := range colorModeNames {
		if s == name {
			return ColorMode(i), nil
		}
	}
	return ColorAuto, fmt.Errorf("color %q: want auto, always or never", s)
}

// NewThemeFor is the theme of a program drawing to w in a colour mode.
func NewThemeFor(w io.Writer, mode ColorMode) *Theme {
	switch mode {
	case ColorNever:
		return PlainTheme()
	case ColorAlways:
		r := lipgloss.NewRenderer(w, termenv.WithUnsafe())
		// The profile the terminal claims, ignoring NO_COLOR and whether
		// w is a terminal; at least 256 colours.
		p := termenv.NewOutput(w, termenv.WithUnsafe()).ColorProfile()
		if p == termenv.Ascii {
			p = termenv.ANSI256
		}
		r.SetColorProfile(p)
		return NewTheme(r)
	default:
		return NewTheme(lipgloss.NewRenderer(w))
	}
}

// colour reports whether the theme draws colour and attributes.
func (t *Theme) colour() bool { return t.renderer.ColorProfile() != termenv.Ascii }
