// Package ui is vtop's terminal interface: a Bubble Tea program that turns
// analysis Reports into frames — a header with fleet totals, a grid of
// replica panes worst first, a detail view with time-series charts, a
// sortable and filterable table for large fleets, an event log and a help
// overlay.
//
// The ui does no I/O. Reports arrive as ReportMsg, sent with Program.Send
// by whatever runs the program, from any goroutine; the callbacks in Options
// are run from tea.Cmds, never inside Update; View is a pure function of the
// model and expensive charts are rendered in Update.
package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/vtop-dev/vtop/analysis"
)

// Minimum terminal size; below it the ui shows one line that says so.
const (
	MinWidth  = 60
	MinHeight = 16
)

// Defaults used when Options leaves a bound at zero.
const (
	DefaultHistory = 900 // points per replica: 15 minutes at 1 s
	maxEvents      = 200 // events kept in the log
)

// Options configure the ui. The callbacks are invoked from tea.Cmds, off
// the Update path; nil callbacks disable their keys.
type Options struct {
	// History is how many points per replica the sparklines and charts
	// keep (DefaultHistory when zero).
	History int
	// Interval is the scrape interval, shown in the header.
	Interval time.Duration
	// Window is the analysis window at start.
	Window time.Duration
	// Windows are the choices `[` and `]` step through, shortest first.
	Windows []time.Duration
	// ScrapeNow asks the poller for an immediate scrape (key r).
	ScrapeNow func()
	// SetWindow changes the analysis window (keys [ and ]).
	SetWindow func(time.Duration)
	// Insecure shows a loud INSECURE TLS badge: certificates are not checked.
	Insecure bool
	// Hint is shown in place of the empty event log while no replica has
	// answered yet, e.g. what to try when vLLM's default address refuses.
	Hint string
	// Demo shows a DEMO badge: the fleet is simulated.
	Demo bool
	// Version is shown in the header.
	Version string
	// Theme is the look; nil is NewTheme(lipgloss.DefaultRenderer()), which
	// follows the terminal and NO_COLOR. PlainTheme() turns colour off.
	Theme *Theme
	// Location is the zone of the clock times drawn (event log, chart
	// axes); nil means the local zone.
	Location *time.Location
}

// ReportMsg carries a new evaluation into the ui.
type ReportMsg struct {
	Report analysis.Report
}

// screen is what the body of the frame shows.
type screen int

const (
	screenGrid screen = iota
	screenDetail
	screenTable
	screenEvents
)

// Model is the root Bubble Tea model.
type Model struct {
	opts  Options
	theme *Theme
	keys  keyMap
	help  help.Model

	width, height int

	// shown is the report drawn; latest is the newest received. They differ
	// only while paused.
	shown, latest analysis.Report
	hasReport     bool
	paused        bool

	history map[string]*ring[analysis.Point]
	events  *eventLog
	window  time.Duration

	screen     screen
	detailBack screen // where esc leaves the detail view for
	showHelp   bool

	filter    textinput.Model
	filtering bool
	sortCol   int
	sortDesc  bool

	// selected is the target of the selected pane: selection follows the
	// replica, not a position, so it survives re-sorting.
	selected string
	panes    []*analysis.ReplicaReport // grid order: worst state first, then target
	rows     []*analysis.ReplicaReport // table order: by the sort column

	detail viewport.Model
}

// New returns the model for a program; the first frame ("waiting for the
// first scrape…") is ready before any report arrives.
func New(opts Options) Model {
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "target, model or state"
	ti.CharLimit = 128
	// A static cursor: a blinking one would redraw the frame twice a second
	// over SSH for nothing.
	ti.Cursor.SetMode(cursor.CursorStatic)
	theme := opts.Theme
	if theme == nil {
		theme = NewTheme(lipgloss.DefaultRenderer())
	}
	theme.styleInput(&ti)
	m := Model{
		opts:     opts,
		theme:    theme,
		keys:     newKeyMap(),
		help:     help.New(),
		width:    80,
		height:   24,
		history:  map[string]*ring[analysis.Point]{},
		events:   &eventLog{limit: maxEvents},
		window:   opts.Window,
		filter:   ti,
		sortCol:  colState,
		sortDesc: true,
		detail:   viewport.New(80, 20),
	}
	m.detail.Style = theme.renderer.NewStyle()
	m.keys.ScrapeNow.SetEnabled(opts.ScrapeNow != nil)
	m.keys.Shorter.SetEnabled(opts.SetWindow != nil && len(opts.Windows) > 1)
	m.keys.Longer.SetEnabled(opts.SetWindow != nil && len(opts.Windows) > 1)
	m.help.Styles = theme.helpStyles()
	m.help.Width = m.width
	return m
}

// Init starts nothing: reports are sent in from outside the program.
func (m Model) Init() tea.Cmd { return nil }

// Update applies one message. It does no I/O: callbacks leave as Cmds.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.refresh()
	case ReportMsg:
		m.ingest(msg.Report)
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

// ingest records a report: its points go into the history and its events
// into the log at once, but the frame only changes when not paused. Its
// strings are drawn as they are: text from servers is made safe where it
// enters vtop, before any Report is built.
func (m *Model) ingest(r analysis.Report) {
	seen := make(map[string]bool, len(r.Replicas))
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		seen[rep.Target] = true
		h := m.history[rep.Target]
		if h == nil {
			h = newRing[analysis.Point](m.opts.History)
			m.history[rep.Target] = h
		}
		p := rep.Point
		if p.Time.IsZero() {
			p.Time = r.Time
		}
		h.Push(p)
	}
	// Forget replicas that left the fleet, so a changing fleet does not
	// grow the history without bound.
	for t := range m.history {
		if !seen[t] {
			delete(m.history, t)
		}
	}
	m.events.add(r.Events)
	m.latest = r
	m.hasReport = true
	if !m.paused {
		m.shown = r
		m.refresh()
	}
}

// refresh recomputes what depends on the shown report, the filter, the sort
// and the size: pane and row order, the selection and the detail charts.
func (m *Model) refresh() {
	reps := m.shown.Replicas
	filter := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	// New slices rather than m.panes[:0]: copies of the model (tests branch
	// from one) would otherwise share the backing array and be reordered too.
	m.panes = make([]*analysis.ReplicaReport, 0, len(reps))
	for i := range reps {
		if matches(&reps[i], filter) {
			m.panes = append(m.panes, &reps[i])
		}
	}
	slices.SortStableFunc(m.panes, byStateThenTarget)
	m.rows = slices.Clone(m.panes)
	sortRows(m.rows, m.sortCol, m.sortDesc)
	if m.indexOf(m.panes, m.selected) < 0 {
		m.selected = ""
		if len(m.panes) > 0 {
			m.selected = m.panes[0].Target
		}
	}
	if m.screen == screenDetail {
		m.renderDetail()
	}
}

// matches reports whether a replica passes the filter (a case-insensitive
// substring of its target, model or state).
func matches(r *analysis.ReplicaReport, filter string) bool {
	if filter == "" {
		return true
	}
	return strings.Contains(strings.ToLower(r.Target), filter) ||
		strings.Contains(strings.ToLower(r.Model), filter) ||
		strings.Contains(r.State.String(), filter)
}

// byStateThenTarget orders panes worst state first and by target within a
// state, so panes do not jump between polls.
func byStateThenTarget(a, b *analysis.ReplicaReport) int {
	if a.State != b.State {
		return int(b.State) - int(a.State)
	}
	return strings.Compare(a.Target, b.Target)
}

func (m *Model) indexOf(list []*analysis.ReplicaReport, target string) int {
	for i, r := range list {
		if r.Target == target {
			return i
		}
	}
	return -1
}

// selectedReport returns the selected replica, or nil.
func (m *Model) selectedReport() *analysis.ReplicaReport {
	if i := m.indexOf(m.panes, m.selected); i >= 0 {
		return m.panes[i]
	}
	return nil
}

func (m Model) tooSmall() bool { return m.width < MinWidth || m.height < MinHeight }

// handleKey routes a key: ctrl+c always quits; the filter input swallows
// every other key while open; the help overlay comes next; then the keys of
// the current screen.
func (m Model) handleKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyCtrlC {
		return m, tea.Quit
	}
	if m.filtering {
		return m.filterKey(k)
	}
	if m.tooSmall() || m.showHelp {
		switch {
		case key.Matches(k, m.keys.Quit):
			return m, tea.Quit
		case key.Matches(k, m.keys.Help, m.keys.Back):
			m.showHelp = false
		}
		return m, nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
	case key.Matches(k, m.keys.Back):
		m.goBack()
	case key.Matches(k, m.keys.Pause):
		m.togglePause()
	case key.Matches(k, m.keys.Shorter):
		return m.stepWindow(-1)
	case key.Matches(k, m.keys.Longer):
		return m.stepWindow(+1)
	case key.Matches(k, m.keys.ScrapeNow):
		return m, m.scrapeNowCmd()
	case key.Matches(k, m.keys.Table):
		m.toggleScreen(screenTable)
	case key.Matches(k, m.keys.Events):
		m.toggleScreen(screenEvents)
	case key.Matches(k, m.keys.Filter):
		if m.screen == screenDetail || m.screen == screenEvents {
			m.screen = screenTable
		}
		m.filtering = true
		return m, m.filter.Focus()
	case key.Matches(k, m.keys.Sort):
		m.sortCol = (m.sortCol + 1) % len(tableColumns)
		m.refresh()
	case key.Matches(k, m.keys.Reverse):
		m.sortDesc = !m.sortDesc
		m.refresh()
	case key.Matches(k, m.keys.Detail):
		if m.screen != screenDetail && m.selectedReport() != nil {
			m.detailBack = m.screen
			m.screen = screenDetail
			m.detail.GotoTop()
			m.refresh()
		}
	default:
		return m.navigate(k)
	}
	return m, nil
}

// filterKey edits the filter: enter keeps it, esc clears it, anything else
// (q included) is typed.
func (m Model) filterKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEnter:
		m.filtering = false
		m.filter.Blur()
		return m, nil
	case tea.KeyEsc:
		m.filtering = false
		m.filter.Blur()
		m.filter.SetValue("")
		m.refresh()
		return m, nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(k)
	m.refresh()
	return m, cmd
}

// goBack is esc: leave the detail view, then the table or event view, then
// clear the filter. It never quits.
func (m *Model) goBack() {
	switch {
	case m.screen == screenDetail:
		m.screen = m.detailBack
	case m.screen != screenGrid:
		if m.filter.Value() != "" {
			m.filter.SetValue("")
		} else {
			m.screen = screenGrid
		}
	default:
		m.filter.SetValue("")
	}
	m.refresh()
}

func (m *Model) toggleScreen(s screen) {
	if m.screen == s {
		m.screen = screenGrid
	} else {
		m.screen = s
	}
	m.refresh()
}

// togglePause freezes or thaws the frame. Reports keep arriving while
// paused and go into the history; thawing shows the newest.
func (m *Model) togglePause() {
	m.paused = !m.paused
	if !m.paused && m.hasReport {
		m.shown = m.latest
		m.refresh()
	}
}

// stepWindow moves to the next shorter or longer analysis window and asks
// for it through a Cmd.
func (m Model) stepWindow(dir int) (tea.Model, tea.Cmd) {
	ws := m.opts.Windows
	if m.opts.SetWindow == nil || len(ws) == 0 {
		return m, nil
	}
	i := slices.Index(ws, m.window)
	if i < 0 {
		// Not one of the choices: start from the first choice at least as long.
		i = len(ws) - 1
		for j, w := range ws {
			if w >= m.window {
				i = j
				break
			}
		}
		if dir > 0 && ws[i] > m.window {
			dir = 0
		}
	}
	next := min(max(i+dir, 0), len(ws)-1)
	if ws[next] == m.window {
		return m, nil
	}
	m.window = ws[next]
	set, w := m.opts.SetWindow, m.window
	return m, func() tea.Msg { set(w); return nil }
}

func (m Model) scrapeNowCmd() tea.Cmd {
	if m.opts.ScrapeNow == nil {
		return nil
	}
	scrape := m.opts.ScrapeNow
	return func() tea.Msg { scrape(); return nil }
}

// navigate moves the selection (grid, table) or scrolls (detail).
func (m Model) navigate(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch m.screen {
	case screenDetail:
		var cmd tea.Cmd
		m.detail, cmd = m.detail.Update(k)
		return m, cmd
	case screenTable:
		m.moveInList(m.rows, k, 1)
	case screenGrid:
		_, cols := m.gridShape()
		m.moveInList(m.panes, k, cols)
	}
	return m, nil
}

// moveInList moves the selection in a list laid out in cols columns.
func (m *Model) moveInList(list []*analysis.ReplicaReport, k tea.KeyMsg, cols int) {
	if len(list) == 0 {
		return
	}
	i := max(m.indexOf(list, m.selected), 0)
	switch {
	case key.Matches(k, m.keys.Up):
		i -= cols
	case key.Matches(k, m.keys.Down):
		i += cols
	case key.Matches(k, m.keys.Left):
		i--
	case key.Matches(k, m.keys.Right):
		i++
	case key.Matches(k, m.keys.Next):
		if k.Type == tea.KeyShiftTab {
			i--
		} else {
			i = (i + 1) % len(list)
		}
	case k.Type == tea.KeyPgDown:
		i += 10 * cols
	case k.Type == tea.KeyPgUp:
		i -= 10 * cols
	case k.Type == tea.KeyHome || k.String() == "g":
		i = 0
	case k.Type == tea.KeyEnd || k.String() == "G":
		i = len(list) - 1
	default:
		return
	}
	i = min(max(i, 0), len(list)-1)
	m.selected = list[i].Target
}
