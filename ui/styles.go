package ui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/vtop-dev/vtop/analysis"
)

// ForceASCII makes every frame plain text without colour or attributes, as
// under NO_COLOR. Tests call it so that golden frames do not depend on the
// terminal that runs them.
func ForceASCII() { lipgloss.SetColorProfile(termenv.Ascii) }

// stateWords are the badges, in capitals so that they read as labels even
// when colour is off.
var stateWords = [...]string{"HEALTHY", "IDLE", "STALE", "SLOW", "FULL", "PREEMPTING", "DOWN"}

// stateWord returns the badge text of a state.
func stateWord(s analysis.State) string {
	if int(s) < len(stateWords) {
		return stateWords[s]
	}
	return "UNKNOWN"
}

// stateColors pair light and dark terminal colours per state.
var stateColors = [...]lipgloss.AdaptiveColor{
	analysis.StateHealthy:    {Light: "#007a33", Dark: "#3ddc84"},
	analysis.StateIdle:       {Light: "#555555", Dark: "#8a8a8a"},
	analysis.StateStale:      {Light: "#8a6d00", Dark: "#c9b458"},
	analysis.StateSlow:       {Light: "#b36b00", Dark: "#ffb02e"},
	analysis.StateFull:       {Light: "#c41e3a", Dark: "#ff5f5f"},
	analysis.StatePreempting: {Light: "#8b008b", Dark: "#ff6ad5"},
	analysis.StateDown:       {Light: "#ffffff", Dark: "#ffffff"},
}

var (
	styleTitle     = lipgloss.NewStyle().Bold(true)
	styleDim       = lipgloss.NewStyle().Faint(true)
	styleLabel     = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#555555", Dark: "#9e9e9e"})
	styleAlert     = lipgloss.NewStyle().Bold(true).Reverse(true)
	styleWarn      = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "#b36b00", Dark: "#ffb02e"})
	styleAction    = lipgloss.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "#005fd7", Dark: "#5fafff"})
	styleSelected  = lipgloss.NewStyle().Bold(true)
	styleHeaderRow = lipgloss.NewStyle().Bold(true).Underline(true)
	styleDownBadge = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ffffff")).Background(lipgloss.Color("#c41e3a"))
)

// stateStyle is the foreground style of a state's figures and borders.
func stateStyle(s analysis.State) lipgloss.Style {
	if int(s) >= len(stateColors) {
		return lipgloss.NewStyle()
	}
	if s == analysis.StateDown {
		return lipgloss.NewStyle().Foreground(lipgloss.Color("#ff5f5f"))
	}
	return lipgloss.NewStyle().Foreground(stateColors[s])
}

// badge draws a state as a coloured word; the word alone carries the meaning
// when colour is off.
func badge(s analysis.State) string {
	if s == analysis.StateDown {
		return styleDownBadge.Render(stateWord(s))
	}
	return stateStyle(s).Bold(true).Render(stateWord(s))
}

// seriesColors tell the lines of one chart apart (the legend names them,
// so they stay readable without colour).
var seriesColors = []lipgloss.AdaptiveColor{
	{Light: "#005fd7", Dark: "#5fafff"},
	{Light: "#b36b00", Dark: "#ffb02e"},
	{Light: "#8b008b", Dark: "#ff6ad5"},
	{Light: "#007a33", Dark: "#3ddc84"},
}
