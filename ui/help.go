package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/vtop-dev/vtop/analysis"
)

// helpScreen is the help overlay: every key binding, from the same
// bindings the screens handle, and the meaning of the states.
type helpScreen struct {
	theme   *Theme
	help    help.Model
	columns [][]key.Binding

	width, height int
}

func newHelpScreen(theme *Theme, columns [][]key.Binding) helpScreen {
	h := help.New()
	h.Styles = theme.helpStyles()
	h.ShowAll = true
	return helpScreen{theme: theme, help: h, columns: columns}
}

// setSize gives the overlay the body of the frame.
func (s *helpScreen) setSize(w, h int) {
	s.width, s.height = w, h
	s.help.Width = w
}

// view centres the keys and the legend of the states in the body.
func (s helpScreen) view() []string {
	th := s.theme
	var b strings.Builder
	b.WriteString(th.title.Render("vtop keys") + "\n\n")
	b.WriteString(s.help.FullHelpView(s.columns) + "\n\n")
	b.WriteString("states, worst first: ")
	for st := len(stateWords) - 1; st >= 0; st-- {
		b.WriteString(th.badge(analysis.State(st)) + " ")
	}
	b.WriteString("\n" + th.dim.Render("n/a: the server does not export the metric, or too few scrapes yet"))
	b.WriteString("\n" + th.dim.Render("esc or ? closes this help"))
	block := th.renderer.PlaceHorizontal(s.width, lipgloss.Center, b.String())
	lines := strings.Split(block, "\n")
	top := max((s.height-len(lines))/2, 0)
	return append(make([]string, top), lines...)
}
