package ui

import (
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
)

// Player drives the replay of a recording: the dashboard then shows
// recorded reports, with time controls. The ui calls it from tea.Cmds
// only; each control returns at once.
type Player interface {
	TogglePause()
	// StepBy moves n scrapes forward, or back when n < 0, and pauses.
	StepBy(n int)
	// ChangeSpeed plays faster (dir > 0) or slower (dir < 0).
	ChangeSpeed(dir int)
	// NextChange and PrevChange jump to the next or previous report where
	// the fleet's picture (analysis.Picture), or given a target that
	// replica's state, changes; they report whether there was one.
	NextChange(target string) bool
	PrevChange(target string) bool
	// Home and End jump to the start and the end of the recording.
	Home()
	End()
	// StatusLine is the replay line of the header.
	StatusLine() string
	// Position is the recorded time the replay stands at, whose report
	// may still be on its way.
	Position() time.Time
}

// ReplayMsg updates the replay line of the header. A source that jumped
// sends it with Restart in the report at the new position, At: the
// history drops what lies at or after At, and everything on a jump
// forward, so that sparklines never join two distant stretches.
type ReplayMsg struct {
	Status  string
	Note    string // a one-off remark, such as "no later change of the fleet"
	Restart bool
	At      time.Time
	// Position is the recorded time Status names; until its report is
	// shown, the header says the figures are of another time. Zero: the
	// report shown.
	Position time.Time
}

// EventsMsg carries the events of one report of a replay, as the analysis
// ahead of the screen computes them: a replay's event log is the whole
// stretch's, kept across jumps, shown up to the time shown.
type EventsMsg struct {
	Came   time.Time // the report's time
	Events []analysis.Event
}

// RecordingMsg says that the recording made beside the screen stopped
// (the size limit, a full disk); watching goes on.
type RecordingMsg struct {
	Stopped string
}

// replayKeys are the time controls of a replay. They win over the keys
// they share with the dashboard, which keep only their other keys.
type replayKeys struct {
	Pause, Back, Forward, Slower, Faster, NextChange, PrevChange, Start, End key.Binding
}

func newReplayKeys() replayKeys {
	return replayKeys{
		Pause:      key.NewBinding(key.WithKeys(" ", "p"), key.WithHelp("space", "pause, play")),
		Back:       key.NewBinding(key.WithKeys(","), key.WithHelp(",", "one scrape back")),
		Forward:    key.NewBinding(key.WithKeys("."), key.WithHelp(".", "one scrape forward")),
		Slower:     key.NewBinding(key.WithKeys("<"), key.WithHelp("<", "slower (×60 ×10 ×1)")),
		Faster:     key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "faster (×1 ×10 ×60)")),
		NextChange: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next change: the fleet's, the replica's in its detail")),
		PrevChange: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous change")),
		Start:      key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "start")),
		End:        key.NewBinding(key.WithKeys("G"), key.WithHelp("G", "end")),
	}
}

// playback is the state of a replay or of a recording that the header shows.
type playback struct {
	keys       replayKeys
	status     string
	note       string
	recStopped string
	at         time.Time // where the last jump led (ReplayMsg.At)
	position   time.Time // the position the status names (ReplayMsg.Position)
}

// setupReplay takes the replay's keys from the dashboard's bindings, so
// that the help and the footer show what each key does.
func (m *Model) setupReplay() {
	if m.opts.Player == nil {
		return
	}
	m.play.keys = newReplayKeys()
	m.keys.Pause.SetEnabled(false)
	for _, l := range []*listKeys{&m.grid.keys, &m.table.keys} {
		l.First = key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "first, and stay there"))
		l.Last = key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "last"))
	}
	s := &m.table.sortKeys
	s.Sort = key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by next column"))
	s.SortBack = key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "sort by previous column"))
	m.detail.viewport.KeyMap.PageDown.SetKeys("pgdown", "f")
	cols := m.helpColumns()
	last := len(cols) - 1
	cols[last] = append([]helpGroup{{"replay", m.play.keys.help()}}, cols[last]...)
	m.help = newHelpScreen(m.theme, cols, m.opts.Judgement)
}

// help is the replay's keys as the help shows them: pairs on one line,
// short enough for the last column at 80 columns.
func (k replayKeys) help() []key.Binding {
	pair := func(a, b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(a.Keys()...), key.WithHelp(a.Help().Key+" "+b.Help().Key, desc))
	}
	return []key.Binding{
		short(k.Pause, "space", "pause"),
		pair(k.Back, k.Forward, "step"),
		pair(k.Slower, k.Faster, "speed"),
		pair(k.NextChange, k.PrevChange, "change"),
		short(k.Start, "g", "start"),
		short(k.End, "G", "end"),
	}
}

// footer is the replay's keys for the footer, most needed first.
func (k replayKeys) footer() []key.Binding {
	h := k.help()
	return []key.Binding{h[0], h[1], h[3], h[2], short(h[4], "g G", "start/end")}
}

// replayKey handles a replay's key; ok is false for any other key, and
// outside a replay, whose keys (zero bindings) match none.
func (m *Model) replayKey(k tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	p, keys := m.opts.Player, m.play.keys
	// n and N move by the replica of the detail view, else the fleet's picture.
	target, whose := "", "the fleet"
	if r := m.selectedReport(); r != nil && m.screen == screenDetail {
		target, whose = r.Target, r.Target
	}
	var control func()
	jump, none := func() bool { control(); return true }, ""
	switch {
	case key.Matches(k, keys.Pause):
		control = p.TogglePause
	case key.Matches(k, keys.Back):
		control = func() { p.StepBy(-1) }
	case key.Matches(k, keys.Forward):
		control = func() { p.StepBy(+1) }
	case key.Matches(k, keys.Slower):
		control = func() { p.ChangeSpeed(-1) }
	case key.Matches(k, keys.Faster):
		control = func() { p.ChangeSpeed(+1) }
	case key.Matches(k, keys.NextChange):
		jump, none = func() bool { return p.NextChange(target) }, "no later change of "+whose
	case key.Matches(k, keys.PrevChange):
		jump, none = func() bool { return p.PrevChange(target) }, "no earlier change of "+whose
	case key.Matches(k, keys.Start):
		control = p.Home
	case key.Matches(k, keys.End):
		control = p.End
	default:
		return nil, false
	}
	// Off the Update path; it brings back the replay line it leads to.
	return func() tea.Msg {
		msg := ReplayMsg{}
		if !jump() {
			msg.Note = none
		}
		msg.Status, msg.Position = p.StatusLine(), p.Position()
		return msg
	}, true
}

// replayMsg takes a replay line, and on a jump forgets what the new
// position has not yet reached.
func (m *Model) replayMsg(msg ReplayMsg) {
	m.play.status, m.play.note, m.play.position = msg.Status, msg.Note, msg.Position
	if msg.Restart {
		m.rewind(msg.At)
		m.play.at = msg.At
	}
	m.layout()
}

// rewind drops the points at or after at; on a jump forward (nothing at
// or after at) it drops them all: what lies between was never seen.
func (m *Model) rewind(at time.Time) {
	forward := true
	for _, h := range m.history {
		if n := h.Len(); n > 0 && !h.timeAt(n-1).Before(at) {
			forward = false
		}
	}
	for target, h := range m.history {
		kept := newPointHistory(h.Cap())
		for i := 0; i < h.Len() && !forward; i++ {
			if p := h.At(i); p.Time.Before(at) {
				kept.Push(p)
			}
		}
		m.history[target] = kept
	}
}

// recordingBadge is the title's mark of a recording: its file, or why it stopped.
func (m Model) recordingBadge() []string {
	switch {
	case m.opts.Recording == "":
		return nil
	case m.play.recStopped != "":
		return []string{m.theme.alert.Render(" " + m.play.recStopped + " ")}
	}
	return []string{m.theme.warn.Render("REC " + m.opts.Recording)}
}

// replayLines are the header's replay line: the position, the notice
// when the figures are of another time (whole, on a line of its own when
// the two do not fit one), then the notes.
func (m Model) replayLines(w int) []string {
	if m.opts.Player == nil {
		return nil
	}
	status := m.play.status
	if status == "" {
		status = "REPLAY"
	}
	lines := []string{m.theme.alert.Render(" " + status + " ")}
	if at := m.play.position; m.hasReport && !at.IsZero() && !at.Equal(m.shown.Time) {
		// The figures are of another time: a jump's report is still being computed.
		notice := m.theme.warn.Render("computing; figures of " + m.shown.Time.In(m.opts.Location).Format(human.Clock))
		if ansi.StringWidth(lines[0]+"  "+notice) <= w {
			lines[0] += "  " + notice
		} else {
			lines = append(lines, notice)
		}
	}
	last := len(lines) - 1
	for _, note := range []string{m.play.note, m.opts.ReplayNote} {
		if note != "" {
			lines[last] += "  " + m.theme.warn.Render(note)
		}
	}
	return lines
}

// withReplayKeys puts the replay's keys first in the footer, after help
// and quit.
func (m Model) withReplayKeys(keys []key.Binding) []key.Binding {
	if m.opts.Player == nil || m.showHelp || len(keys) < 2 {
		return keys
	}
	return slices.Concat(keys[:2], m.play.keys.footer(), keys[2:])
}
