package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// helpScreen is the help overlay: every key binding, from the bindings
// the screens handle, and the legend of the states in the analysis's
// words. What does not fit the body scrolls.
type helpScreen struct {
	theme   *Theme
	help    help.Model
	columns [][]helpGroup
	keys    helpKeys
	cfg     analysis.Config
	kind    catalogue.EngineKind // the engine whose waiting gauge FULL's action names
	gpuNote string               // why there are no GPU figures; "" when there are, or none were asked

	width, height int
	lines         []string // the whole overlay at the width, rendered by setSize and show
	top           int      // the first line shown
}

// helpGroup is the keys of one model or purpose under a title.
type helpGroup struct {
	title string
	keys  []key.Binding
}

// helpKeys scroll the overlay when it is taller than the body.
type helpKeys struct {
	Up, Down, PageUp, PageDown, First, Last key.Binding
}

func newHelpKeys() helpKeys {
	v := scrollKeys()
	return helpKeys{Up: v.Up, Down: v.Down, PageUp: v.PageUp, PageDown: v.PageDown,
		First: key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Last:  key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "end"))}
}

func newHelpScreen(theme *Theme, columns [][]helpGroup, cfg analysis.Config) helpScreen {
	h := help.New()
	h.Styles = theme.helpStyles()
	h.ShowAll = true
	return helpScreen{theme: theme, help: h, columns: columns, keys: newHelpKeys(), cfg: cfg, kind: catalogue.EngineVLLM}
}

// setSize gives the overlay the body of the frame.
func (s *helpScreen) setSize(w, h int) {
	s.width, s.height = w, h
	s.render()
}

// show gives the overlay the engine FULL's action names the waiting gauge
// of, and why there are no GPU figures; setSize, which follows, renders it.
func (s *helpScreen) show(kind catalogue.EngineKind, gpuNote string) {
	if kind == catalogue.EngineUnknown {
		kind = catalogue.EngineVLLM
	}
	s.kind, s.gpuNote = kind, gpuNote
}

// update scrolls; it reports whether the key was one of the overlay's.
func (s *helpScreen) update(k tea.KeyMsg) bool {
	page := max(s.height-1, 1)
	switch {
	case key.Matches(k, s.keys.Up):
		s.top--
	case key.Matches(k, s.keys.Down):
		s.top++
	case key.Matches(k, s.keys.PageUp):
		s.top -= page
	case key.Matches(k, s.keys.PageDown):
		s.top += page
	case key.Matches(k, s.keys.First):
		s.top = 0
	case key.Matches(k, s.keys.Last):
		s.top = len(s.lines)
	default:
		return false
	}
	s.clamp()
	return true
}

// scrolls reports whether the overlay is taller than the body.
func (s helpScreen) scrolls() bool { return len(s.lines) > s.height }

// clamp keeps the first line shown within the overlay: the last page
// ends with its last line, above the line that says what is below.
func (s *helpScreen) clamp() {
	s.top = max(min(s.top, len(s.lines)-max(s.height-1, 1)), 0)
}

// view centres the overlay in the body when it fits; otherwise the last
// line says how many are below and how to reach them.
func (s helpScreen) view() []string {
	if !s.scrolls() {
		top := max((s.height-len(s.lines))/2, 0)
		return append(make([]string, top), s.lines...)
	}
	n := max(s.height-1, 0)
	end := min(s.top+n, len(s.lines))
	below := len(s.lines) - end
	more := fmt.Sprintf("↓ %d more %s (↓/j, f/pgdn, G)", below, plural(below, "line"))
	if below == 0 {
		more = "↑ b/pgup, g: back to the top"
	}
	out := fitHeight(slices.Clone(s.lines[s.top:end]), n)
	return append(out, s.theme.dim.Render(center(more, s.width)))
}

// render lays the overlay out at the width: the keys, then the legend of
// the states, then the notes, as one block centred in the body.
func (s *helpScreen) render() {
	th := s.theme
	var b strings.Builder
	b.WriteString(th.title.Render("vtop keys") + "\n\n")
	b.WriteString(s.keysBlock() + "\n\n")
	legendW := min(s.width, maxLegendWidth)
	dim := func(text string) {
		for _, l := range wrapLines(text, legendW) {
			b.WriteString(th.dim.Render(l) + "\n")
		}
	}
	dim("the table starts sorted by severity, " + worstFirst + ", as the grid is")
	b.WriteString("\n" + th.title.Render("states, "+worstFirst) + "\n")
	// Padded to one width, the legend is centred as a block: its badges
	// and its meanings stay in columns.
	b.WriteString(padBlock(s.legend(legendW)) + "\n\n")
	dim("n/a: the server does not export the metric, or too few scrapes yet")
	if s.gpuNote != "" {
		dim(s.gpuNote)
	}
	b.WriteString(th.dim.Render("esc or ? closes this help"))
	block := th.renderer.PlaceHorizontal(s.width, lipgloss.Center, b.String())
	s.lines = strings.Split(block, "\n")
	s.clamp()
}

// maxLegendWidth is the widest the legend and the notes are drawn: lines
// longer than this are hard to read across.
const maxLegendWidth = 100

// legend is a line per state, worst first: its badge and meaning, then
// its first action, wrapped to w columns.
func (s helpScreen) legend(w int) []string {
	th := s.theme
	badgeW := 0
	for st := range stateWords {
		badgeW = max(badgeW, ansi.StringWidth(th.badge(analysis.State(st))))
	}
	indent := strings.Repeat(" ", badgeW+2)
	var lines []string
	for st := len(stateWords) - 1; st >= 0; st-- {
		state := analysis.State(st)
		badge := th.badge(state)
		pad := strings.Repeat(" ", badgeW-ansi.StringWidth(badge)+2)
		lead := badge + pad // then indent: the meaning hangs beside the badge
		for _, l := range wrapLines(analysis.StateMeaning(state), max(w-len(indent), 1)) {
			lines = append(lines, lead+l)
			lead = indent
		}
		if action := analysis.FirstAction(state, s.kind, s.cfg); action != "" {
			arrow := "→ "
			for _, l := range wrapLines(action, max(w-len(indent)-2, 1)) {
				lines = append(lines, indent+th.dim.Render(arrow+l))
				arrow = "  "
			}
		}
	}
	return lines
}

// padBlock joins lines padded with blanks to the widest of them.
func padBlock(lines []string) string {
	w := 0
	for _, l := range lines {
		w = max(w, ansi.StringWidth(l))
	}
	for i, l := range lines {
		lines[i] = l + strings.Repeat(" ", w-ansi.StringWidth(l))
	}
	return strings.Join(lines, "\n")
}

// keysBlock lays the groups out in columns, each a title over its keys;
// the columns that do not fit beside the others go under them.
func (s helpScreen) keysBlock() string {
	var rows []string
	var row []string
	for _, groups := range s.columns {
		blocks := make([]string, 0, len(groups))
		for _, g := range groups {
			blocks = append(blocks, s.theme.title.Render(g.title)+"\n"+s.help.FullHelpView([][]key.Binding{g.keys}))
		}
		col := strings.Join(blocks, "\n\n")
		wider := append(append([]string(nil), row...), s.help.FullSeparator, col)
		switch {
		case len(row) == 0:
			row = []string{col}
		case lipgloss.Width(lipgloss.JoinHorizontal(lipgloss.Top, wider...)) <= s.width:
			row = wider
		default:
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row = []string{col}
		}
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	for i, r := range rows {
		// Padded to one width, a row is centred as a block.
		rows[i] = padBlock(strings.Split(r, "\n"))
	}
	return strings.Join(rows, "\n\n")
}

// fleetEngine is the first known engine of the replicas.
func fleetEngine(reps []analysis.ReplicaReport) catalogue.EngineKind {
	for i := range reps {
		if k := reps[i].EngineKind; k != catalogue.EngineUnknown {
			return k
		}
	}
	return catalogue.EngineUnknown
}
