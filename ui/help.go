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
	columns [][]helpGroup

	width, height int
}

// helpGroup is the keys of one model or purpose under a title.
type helpGroup struct {
	title string
	keys  []key.Binding
}

func newHelpScreen(theme *Theme, columns [][]helpGroup) helpScreen {
	h := help.New()
	h.Styles = theme.helpStyles()
	h.ShowAll = true
	return helpScreen{theme: theme, help: h, columns: columns}
}

// setSize gives the overlay the body of the frame.
func (s *helpScreen) setSize(w, h int) {
	s.width, s.height = w, h
}

// view centres the keys and the legend of the states in the body.
func (s helpScreen) view() []string {
	th := s.theme
	var b strings.Builder
	b.WriteString(th.title.Render("vtop keys") + "\n\n")
	b.WriteString(s.keysBlock() + "\n\n")
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

// keysBlock lays the groups out in columns, each group a title over its
// keys, groups of a column one under the other.
func (s helpScreen) keysBlock() string {
	cols := make([]string, 0, 2*len(s.columns))
	for i, groups := range s.columns {
		blocks := make([]string, 0, len(groups))
		for _, g := range groups {
			blocks = append(blocks, s.theme.title.Render(g.title)+"\n"+s.help.FullHelpView([][]key.Binding{g.keys}))
		}
		if i > 0 {
			cols = append(cols, s.help.FullSeparator)
		}
		cols = append(cols, strings.Join(blocks, "\n\n"))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}
