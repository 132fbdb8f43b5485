package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// The most header lines the advice takes, and what ends it when cut.
const (
	maxAdviceLines = 2
	adviceMore     = " … a: all"
)

// adviceLines are the fleet's advice in the header: its action sentence,
// wrapped, cut to maxAdviceLines with a pointer to the advice view.
func (m Model) adviceLines(w int) []string {
	rec := m.shown.Fleet.Advice.Recommendation
	if rec == "" {
		return nil
	}
	lines := wrapLines("advice: "+rec, w)
	if len(lines) > maxAdviceLines {
		lines = lines[:maxAdviceLines]
		last := lines[maxAdviceLines-1]
		room := max(w-ansi.StringWidth(adviceMore), 0)
		lines[maxAdviceLines-1] = strings.TrimRight(ansi.Truncate(last, room, ""), " ") + adviceMore
	}
	for i, l := range lines {
		lines[i] = m.theme.action.Render(l)
	}
	return lines
}

// pager is a screen whose content scrolls in a viewport: the detail and
// advice views.
type pager struct{ viewport viewport.Model }

func newPager(theme *Theme) pager {
	vp := viewport.New(80, 20)
	vp.Style = theme.renderer.NewStyle()
	vp.KeyMap = scrollKeys()
	return pager{vp}
}

// setSize gives the view the body of the frame; the content keeps its
// width until the next render, which follows every resize.
func (p *pager) setSize(w, h int) { p.viewport.Width, p.viewport.Height = w, h }

// update scrolls.
func (p *pager) update(msg tea.Msg) (cmd tea.Cmd) {
	p.viewport, cmd = p.viewport.Update(msg)
	return cmd
}

func (p pager) view() []string { return strings.Split(p.viewport.View(), "\n") }

// adviceScreen is the whole fleet advice, with each group's and every
// replica far from the median: the header has room for the action alone.
type adviceScreen struct {
	pager
	theme *Theme
}

func newAdviceScreen(theme *Theme) adviceScreen {
	return adviceScreen{pager: newPager(theme), theme: theme}
}

// render lays the advice out: the fleet's sentences, each group's when
// there are several, then the imbalance, each sentence wrapped whole.
func (s *adviceScreen) render(f analysis.FleetFigures) {
	th, w := s.theme, max(s.viewport.Width, 1)
	var lines []string
	section := func(title string) {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, th.headerRow.Render(title))
	}
	sentences := func(ss []string, first bool) {
		for i, sentence := range ss {
			prefix := "• "
			for _, l := range wrapLines(sentence, max(w-2, 1)) {
				if i == 0 && first {
					l = th.action.Render(l)
				}
				lines = append(lines, prefix+l)
				prefix = "  "
			}
		}
	}
	section("fleet advice")
	if len(f.Advice.Summary) == 0 {
		lines = append(lines, th.dim.Render("no advice yet"))
	}
	sentences(f.Advice.Summary, true)
	if len(f.Groups) > 1 {
		for i := range f.Groups {
			g := &f.Groups[i]
			section(g.Name())
			sentences(g.Advice.Summary, true)
		}
	}
	if len(f.Imbalance) > 0 {
		section("imbalance, most extreme first")
		texts := make([]string, len(f.Imbalance))
		for i, im := range f.Imbalance {
			texts[i] = im.Text
		}
		sentences(texts, false)
	}
	lines = append(lines, "", th.dim.Render("a or esc closes the advice; ↑/↓ scroll"))
	s.viewport.SetContent(strings.Join(fitLines(lines, w), "\n"))
}
