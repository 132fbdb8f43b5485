// Package ui is vtop's terminal interface: a Bubble Tea program that turns
// analysis Reports into frames — a header with fleet totals, a grid of
// replica panes worst first, a detail view with charts, a sortable and
// filterable table, an event log and a help overlay.
//
// The ui does no I/O. Reports arrive as ReportMsg (Program.Send, from any
// goroutine); the callbacks in Options run from tea.Cmds; View is a pure
// function of the model, and charts are rendered in Update.
//
// The root Model owns the data (report, history, event log, filter,
// selection) and composes one child model per screen. On every resize,
// report or key it lays the frame out once and pushes each child its size.
package ui

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
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
	DefaultHistory  = 900     // points per replica: 15 minutes at 1 s
	maxEvents       = 200     // events kept in the log
	maxReplayEvents = 100_000 // events of a replay's stretch kept in the log
)

// Options configure the ui. The callbacks are invoked from tea.Cmds, off
// the Update path; nil callbacks disable their keys.
type Options struct {
	// History is the points per replica the charts keep (DefaultHistory when zero).
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
	// Want names the replica the detail view shows (nil when none), so
	// that a source that reads a large fleet in less detail reads it in full.
	Want func(targets []string)
	// InView names the replicas whose panes or rows the screen draws (nil
	// when none), whenever they change, for the same reason.
	InView func(targets []string)
	// Insecure shows a loud INSECURE TLS badge: certificates are not checked.
	Insecure bool
	// Hint is shown in place of the empty event log while no replica has
	// answered yet, e.g. what to try when vLLM's default address refuses.
	Hint string
	// Demo shows a DEMO badge: the fleet is simulated.
	Demo bool
	// Version is shown in the header.
	Version string
	// Theme is the look; nil is NewTheme(lipgloss.DefaultRenderer()).
	Theme *Theme
	// Location is the zone of the clock times drawn; nil means local.
	Location *time.Location

	// Player, when set, makes the dashboard a replay of a recording,
	// with its time controls (replay.go).
	Player Player
	// ReplayNote is added to a replay's line: the day and the zone of a
	// stretch of a Prometheus server's past.
	ReplayNote string
	// Recording names the file a recording made beside the screen writes.
	Recording string
	// Found says in the header what local discovery found, or what it
	// looked for; "" when the targets were given.
	Found string
	// Judgement is the analysis's configuration, for the words that quote
	// its SLOs (a SLOW row, the help's actions). Zero: the defaults.
	Judgement analysis.Config
}

// ReportMsg carries a new evaluation into the ui. Bell rings the
// terminal's bell with the frame that shows it (--bell: a replica changed
// into a state the user asked to hear of).
type ReportMsg struct {
	Report analysis.Report
	Bell   bool
	// Replay, in a replay, is the replay's line, in the same message so
	// that no frame shows the one without the other.
	Replay *ReplayMsg
}

// NoticeMsg puts a notice of vtop's own into the event log (a failed hook).
type NoticeMsg struct {
	Time time.Time
	Text string
}

// notice logs a notice of vtop's own, under the target "vtop".
func (m *Model) notice(at time.Time, text string) {
	m.events.add([]analysis.Event{{Time: at, Target: "vtop", State: analysis.StateStale, Text: text}}, at)
}

// bellShown is how long the frame carries the bell: long enough for the
// renderer (60 frames a second) to write one frame with it, not two.
const bellShown = 250 * time.Millisecond

// bellDoneMsg ends the frames that carry bell number n.
type bellDoneMsg struct{ n int }

// HistoryMsg preloads the charts with a source's past, by target, oldest
// first. It may arrive before or after the first report; points at or
// after a target's oldest point are left out, so nothing is drawn twice.
type HistoryMsg struct {
	Points map[string][]analysis.Point
	// At, set by a replay, is the position the points lead up to: they
	// replace what the screen holds before At. A message for a position
	// the screen has since jumped away from is dropped.
	At time.Time
}

// screen is what the body of the frame shows.
type screen int

const (
	screenGrid screen = iota
	screenDetail
	screenTable
	screenEvents
	screenAdvice
)

// Model is the root Bubble Tea model.
type Model struct {
	opts   Options
	wanted string   // the replica last named to opts.Want ("" for none)
	inView []string // the replicas last named to opts.InView
	theme  *Theme
	keys   globalKeys
	fkeys  filterKeys
	footer help.Model

	width, height int
	header        []string // laid out with the rest of the frame, in Update

	// shown is the report drawn; latest is the newest received. They differ
	// only while paused.
	shown, latest analysis.Report
	hasReport     bool
	paused        bool

	// Shared by every copy of the model.
	history map[string]*pointHistory
	events  *eventLog
	window  time.Duration

	screen     screen
	detailBack screen // where esc leaves the detail view for
	showHelp   bool

	filter    textinput.Model
	filtering bool

	// selected is the target of the selected pane. Until the user moves
	// (follow), it is the first of the screen's order — the worst in the
	// grid — so that one arriving in a spike opens the worst replica; then
	// it follows the replica, not a position, across re-sorting.
	selected string
	follow   bool
	panes    []*analysis.ReplicaReport // after the filter, worst first

	grid   gridScreen
	table  tableScreen
	detail detailScreen
	log    eventsScreen
	advice adviceScreen
	help   helpScreen

	play playback // a replay's controls and line, a recording's state

	bell, bells int // the bell the frame carries (0: none), the bells rung

	strip   gpuStrip   // the GPUs above the grid (gpus.go)
	stripH  int        // lines the strip takes in the grid's body
	gpuHist gpuHistory // each GPU's recent points, for the detail view
	// Why the newest reports have no GPU figures, and for how many reports.
	noGPUs      string
	noGPUsCount int
}

// New returns the model for a program, its first frame ready before any report.
func New(opts Options) Model {
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.Judgement.SLOTTFT <= 0 {
		opts.Judgement = analysis.DefaultConfig()
	}
	theme := opts.Theme
	if theme == nil {
		theme = NewTheme(lipgloss.DefaultRenderer())
	}
	events := &eventLog{limit: maxEvents}
	if opts.Player != nil {
		events.limit = maxReplayEvents
	}
	m := Model{
		opts:    opts,
		theme:   theme,
		keys:    newGlobalKeys(),
		fkeys:   newFilterKeys(),
		footer:  help.New(),
		width:   80,
		height:  24,
		history: map[string]*pointHistory{},
		events:  events,
		window:  opts.Window,
		follow:  true,
		filter:  newFilterInput(theme),
		grid:    newGridScreen(theme, opts.Location, opts.Hint),
		table:   newTableScreen(theme, opts.Judgement),
		detail:  newDetailScreen(theme, opts.Location),
		log:     newEventsScreen(theme, opts.Location, events),
		advice:  newAdviceScreen(theme),
		strip:   gpuStrip{theme: theme},
		gpuHist: gpuHistory{},
	}
	windows := opts.SetWindow != nil && len(opts.Windows) > 1
	m.keys.ScrapeNow.SetEnabled(opts.ScrapeNow != nil)
	m.keys.Shorter.SetEnabled(windows)
	m.keys.Longer.SetEnabled(windows)
	m.footer.Styles = theme.helpStyles()
	m.help = newHelpScreen(theme, m.helpColumns(), opts.Judgement)
	m.setupReplay()
	m.refresh()
	return m
}

// newFilterInput is the "/" input of the filter.
func newFilterInput(theme *Theme) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "target, model or state"
	ti.CharLimit = 128
	// Static: a blinking cursor redraws the frame twice a second.
	ti.Cursor.SetMode(cursor.CursorStatic)
	theme.styleInput(&ti)
	return ti
}

// helpColumns are the groups of keys the help overlay shows, by column.
func (m Model) helpColumns() [][]helpGroup {
	k, s := m.keys, m.table.sortKeys
	v := m.detail.viewport.KeyMap
	return [][]helpGroup{
		{{"move (grid, table)", m.grid.keys.bindings()}},
		{
			{"scroll (detail)", []key.Binding{v.Up, v.Down, v.PageUp, v.PageDown, v.HalfPageUp, v.HalfPageDown}},
			{"filter and sort", []key.Binding{k.Filter, s.Sort, s.SortBack, s.Reverse}},
		},
		{
			{"screens", []key.Binding{k.Detail, k.Table, k.Events, k.Advice, k.Back, k.Help}},
			{"display", []key.Binding{k.Pause, k.Shorter, k.Longer, k.ScrapeNow, k.Quit}},
		},
	}
}

// Init starts nothing: reports are sent in from outside the program.
func (m Model) Init() tea.Cmd { return nil }

// Update applies one message. It does no I/O: callbacks leave as Cmds.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.refresh()
	case ReportMsg:
		cmd = m.reportMsg(msg)
	case bellDoneMsg:
		if m.bell == msg.n {
			m.bell = 0
		}
	case NoticeMsg:
		m.notice(msg.Time, msg.Text)
	case HistoryMsg:
		m.historyMsg(msg)
	case ReplayMsg:
		m.replayMsg(msg)
	case EventsMsg:
		m.events.add(msg.Events, msg.Came)
	case RecordingMsg:
		m.play.recStopped = msg.Stopped
		m.layout()
	case tea.KeyMsg:
		cmd = m.handleKey(msg)
		// A key can change the header (a badge, the filter): lay out again.
		m.layout()
	case tea.MouseMsg:
		m.handleMouse(msg)
		m.layout()
	}
	cmd = tea.Batch(cmd, m.wantCmd(), m.inViewCmd())
	return m, cmd
}

// reportMsg takes in a report and the replay's position, and rings the
// bell when asked, with a Cmd that ends the bell's mark.
func (m *Model) reportMsg(msg ReportMsg) tea.Cmd {
	if msg.Replay != nil {
		m.replayMsg(*msg.Replay)
	}
	m.ingest(msg.Report)
	if !msg.Bell {
		return nil
	}
	m.bells++
	m.bell = m.bells
	n := m.bells
	return tea.Tick(bellShown, func(time.Time) tea.Msg { return bellDoneMsg{n} })
}

// historyMsg puts a source's past before each target's points (At zero),
// or the stretch a jump to At skipped before each replica's points from At
// on, in place of the ones it held before At.
func (m *Model) historyMsg(msg HistoryMsg) {
	switch {
	case msg.At.IsZero():
		for target, pts := range msg.Points {
			var first time.Time
			if old := m.history[target]; old != nil && old.Len() > 0 {
				first = old.At(0).Time
			}
			m.putBefore(target, first, pts)
		}
	case msg.At.Equal(m.play.at):
		for target := range m.history {
			m.putBefore(target, msg.At, msg.Points[target])
		}
	default:
		return
	}
	if !m.paused {
		m.refresh()
	}
}

// inViewCmd names the replicas the screen draws to opts.InView when they
// changed, through a Cmd; nil otherwise.
func (m *Model) inViewCmd() tea.Cmd {
	if m.opts.InView == nil {
		return nil
	}
	targets := m.onScreen()
	if slices.Equal(targets, m.inView) {
		return nil
	}
	m.inView = targets
	inView := m.opts.InView
	return func() tea.Msg { inView(targets); return nil }
}

// onScreen are the targets of the panes or rows the frame draws, in
// order: none on the detail view (opts.Want names it) and the screens of
// none. The help overlay, a moment's, leaves those under it named.
func (m *Model) onScreen() []string {
	switch {
	case m.tooSmall():
		return nil
	case m.screen == screenGrid:
		return m.grid.inView()
	case m.screen == screenTable:
		return m.table.inView()
	}
	return nil
}

// wantCmd names the replica the detail view shows to opts.Want when it
// changed, through a Cmd; nil otherwise.
func (m *Model) wantCmd() tea.Cmd {
	target := ""
	if r := m.selectedReport(); r != nil && m.screen == screenDetail {
		target = r.Target
	}
	if m.opts.Want == nil || target == m.wanted {
		return nil
	}
	m.wanted = target
	want := m.opts.Want
	var targets []string
	if target != "" {
		targets = []string{target}
	}
	return func() tea.Msg { want(targets); return nil }
}

// ingest records a report's points and events at once; the frame changes
// only when not paused. Its strings are drawn as they are: text from
// servers is made safe where it enters vtop.
func (m *Model) ingest(r analysis.Report) {
	seen := make(map[string]bool, len(r.Replicas))
	for i := range r.Replicas {
		rep := &r.Replicas[i]
		seen[rep.Target] = true
		h := m.history[rep.Target]
		if h == nil {
			h = newPointHistory(m.opts.History)
			m.history[rep.Target] = h
		}
		p := rep.Point
		if p.Time.IsZero() {
			p.Time = r.Time
		}
		h.Push(p)
	}
	// Forget replicas that left, so a changing fleet does not grow it.
	maps.DeleteFunc(m.history, func(t string, _ *pointHistory) bool { return !seen[t] })
	if m.opts.Player == nil {
		// A replay logs its stretch's events (EventsMsg).
		m.events.add(r.Events, r.Time)
	}
	m.noteNoGPUs(r)
	m.gpuHist.record(r.GPUs, m.opts.History)
	m.latest = r
	m.hasReport = true
	if !m.paused {
		m.shown = r
		m.refresh()
	}
}

// putBefore makes target's history pts before at (all when at is zero),
// then its own points from at on.
func (m *Model) putBefore(target string, at time.Time, pts []analysis.Point) {
	h := newPointHistory(m.opts.History)
	for _, p := range pts {
		if at.IsZero() || p.Time.Before(at) {
			h.Push(p)
		}
	}
	if old := m.history[target]; old != nil {
		for i := range old.Len() {
			if p := old.At(i); !p.Time.Before(at) {
				h.Push(p)
			}
		}
	}
	m.history[target] = h
}

// refresh recomputes what depends on the shown report, the filter, the
// selection and the size.
func (m *Model) refresh() {
	reps := m.shown.Replicas
	filter := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	// A new slice, not m.panes[:0]: copies of the model share its array.
	m.panes = make([]*analysis.ReplicaReport, 0, len(reps))
	for i := range reps {
		if matches(&reps[i], filter) {
			m.panes = append(m.panes, &reps[i])
		}
	}
	slices.SortStableFunc(m.panes, analysis.CompareSeverity)
	m.strip.show(m.shown)
	m.grid.show(m.shown, m.panes, m.history, m.events)
	m.table.show(m.panes, len(reps), m.filter.Value(), m.shown.Time)
	m.table.source = m.shown.Source
	m.followWorst()
	m.log.show(m.shown.Time)
	m.help.show(fleetEngine(reps), gpuNoneNote(m.shown))
	m.layout()
	if m.screen == screenDetail {
		m.renderDetail()
	}
	if m.screen == screenAdvice {
		m.advice.render(m.shown.Fleet)
	}
}

// layout computes the header once and pushes each screen the size of the
// body: what the header and the footer leave of the terminal.
func (m *Model) layout() {
	m.footer.Width = m.width
	m.header = m.headerLines(m.width)
	w, h := m.width, max(m.height-len(m.header)-1, 0)
	m.stripH = min(m.strip.setSize(w, h), h)
	m.grid.setSize(w, h-m.stripH)
	m.table.setSize(w, h)
	m.detail.setSize(w, max(h, 1))
	m.log.setSize(w, h)
	m.advice.setSize(w, h)
	m.help.setSize(w, h)
	m.grid.selected, m.table.selected = m.selected, m.selected
}

// renderDetail draws the selected replica into the detail view, in Update:
// charts are the expensive part of a frame.
func (m *Model) renderDetail() {
	r := m.selectedReport()
	var pts []analysis.Point
	m.detail.gpuLines = nil
	if r != nil {
		pts = pointsUntil(m.history[r.Target], m.opts.History, m.shown.Time)
		m.detail.gpuLines = gpuDetail(m.theme, m.shown.ReplicaGPUs(r.Target), m.gpuHist, m.detail.viewport.Width)
	}
	m.detail.render(r, pts, m.shown.Time)
}

// matches reports whether filter is in a replica's target, model or state.
func matches(r *analysis.ReplicaReport, filter string) bool {
	if filter == "" {
		return true
	}
	return strings.Contains(strings.ToLower(r.Target), filter) ||
		strings.Contains(strings.ToLower(r.Model), filter) ||
		strings.Contains(r.State.String(), filter)
}

// followWorst selects the first of the screen's order while the user has
// not moved (or the selected one left), the grid and table at their top.
func (m *Model) followWorst() {
	if !m.follow && indexOf(m.panes, m.selected) >= 0 {
		return
	}
	order := m.panes
	if m.screen == screenTable {
		order = m.table.rows
	}
	m.selected = ""
	if len(order) > 0 {
		m.selected = order[0].Target
	}
	if m.follow {
		m.grid.top, m.table.top = 0, 0
		m.table.reveal(indexOf(m.table.rows, m.selected))
	}
}

// targetsOf are the targets of a list, in its order.
func targetsOf(list []*analysis.ReplicaReport) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Target
	}
	return out
}

// indexOf is the position of a target in a list, or -1.
func indexOf(list []*analysis.ReplicaReport, target string) int {
	return slices.IndexFunc(list, func(r *analysis.ReplicaReport) bool { return r.Target == target })
}

// selectedReport returns the selected replica, or nil.
func (m *Model) selectedReport() *analysis.ReplicaReport {
	if i := indexOf(m.panes, m.selected); i >= 0 {
		return m.panes[i]
	}
	return nil
}

func (m Model) tooSmall() bool { return m.width < MinWidth || m.height < MinHeight }
