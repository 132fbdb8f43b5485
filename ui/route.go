package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// handleKey routes a key: ctrl+c, the filter input while open, the help
// overlay, a replay's keys, the keys every screen shares, then the screen's.
func (m *Model) handleKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return tea.Quit
	}
	if m.filtering {
		return m.filterKey(k)
	}
	if m.tooSmall() || m.showHelp {
		switch {
		case key.Matches(k, m.keys.Quit):
			return tea.Quit
		case key.Matches(k, m.keys.Help, m.keys.Back):
			m.showHelp = false
		case m.showHelp:
			m.help.update(k)
		}
		return nil
	}
	if cmd, ok := m.replayKey(k); ok {
		return cmd
	}
	if cmd, ok := m.globalKey(k); ok {
		return cmd
	}
	return m.screenKey(k)
}

// globalKey handles the keys of every screen; ok is false for any other.
func (m *Model) globalKey(k tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit, true
	case key.Matches(k, m.keys.Help):
		m.showHelp = true
		m.help.top = 0
	case key.Matches(k, m.keys.Back):
		m.goBack()
	case key.Matches(k, m.keys.Pause):
		m.togglePause()
	case key.Matches(k, m.keys.Shorter):
		return m.stepWindow(-1), true
	case key.Matches(k, m.keys.Longer):
		return m.stepWindow(+1), true
	case key.Matches(k, m.keys.ScrapeNow): // enabled only with opts.ScrapeNow
		scrape := m.opts.ScrapeNow
		return func() tea.Msg { scrape(); return nil }, true
	case key.Matches(k, m.keys.Table):
		m.toggleScreen(screenTable)
	case key.Matches(k, m.keys.Events):
		m.toggleScreen(screenEvents)
	case key.Matches(k, m.keys.Advice):
		m.toggleScreen(screenAdvice)
		m.advice.viewport.GotoTop()
	case key.Matches(k, m.keys.Filter):
		return m.startFilter(), true
	case key.Matches(k, m.keys.Detail):
		m.openDetail()
	default:
		return nil, false
	}
	return nil, true
}

// startFilter opens the filter's input, on the table when the screen has
// no rows to filter.
func (m *Model) startFilter() tea.Cmd {
	if m.screen == screenDetail || m.screen == screenEvents || m.screen == screenAdvice {
		m.screen = screenTable
	}
	m.filtering = true
	return m.filter.Focus()
}

// screenKey gives a key to the screen shown; the sort keys to the table.
func (m *Model) screenKey(k tea.KeyMsg) tea.Cmd {
	if s := m.table.sortKeys; key.Matches(k, s.Sort, s.SortBack, s.Reverse) {
		m.table.update(k)
		// A sort is asked for its top rows, the followed selection the first.
		m.table.top = 0
		m.followWorst()
		return nil
	}
	switch m.screen {
	case screenDetail:
		return m.detail.update(k)
	case screenAdvice:
		return m.advice.update(k)
	case screenTable:
		sel, moved := m.table.update(k)
		m.userMoved(k, sel, moved)
	case screenGrid:
		sel, moved := m.grid.update(k)
		m.userMoved(k, sel, moved)
	}
	return nil
}

// userMoved takes the selection a key made: a move ends following the
// worst replica; first (g, home) goes back to it.
func (m *Model) userMoved(k tea.KeyMsg, sel string, moved bool) {
	if !moved {
		return
	}
	m.selected = sel
	m.follow = key.Matches(k, m.grid.keys.First)
}

// filterKey edits the filter: enter keeps it, esc clears it, anything
// else (q included) is typed.
func (m *Model) filterKey(k tea.KeyMsg) tea.Cmd {
	if key.Matches(k, m.fkeys.Keep, m.fkeys.Clear) {
		m.filtering = false
		m.filter.Blur()
		if key.Matches(k, m.fkeys.Clear) {
			m.filter.SetValue("")
			m.refresh()
		}
		return nil
	}
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(k)
	m.refresh()
	return cmd
}

// openDetail shows the selected replica's detail view. Opening a replica
// is choosing it, as a move is: the view must not turn to another that
// turns worse while the user reads this one.
func (m *Model) openDetail() {
	if m.screen == screenDetail || m.selectedReport() == nil {
		return
	}
	m.follow = false
	m.detailBack = m.screen
	m.screen = screenDetail
	m.detail.viewport.GotoTop()
	m.refresh()
}

// goBack is esc: leave the detail view, then clear the filter, then leave
// the table or event view. It never quits.
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

// togglePause freezes or thaws the frame; thawing shows the newest report.
func (m *Model) togglePause() {
	m.paused = !m.paused
	if !m.paused && m.hasReport {
		m.shown = m.latest
		m.refresh()
	}
}

// stepWindow asks for the next shorter or longer window through a Cmd. Its
// keys are enabled only with opts.SetWindow and two windows or more.
func (m *Model) stepWindow(dir int) tea.Cmd {
	ws := m.opts.Windows
	i := slices.Index(ws, m.window)
	if i < 0 {
		// Not a choice: start from the first at least as long.
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
		return nil
	}
	m.window = ws[next]
	set, w := m.opts.SetWindow, m.window
	return func() tea.Msg { set(w); return nil }
}
