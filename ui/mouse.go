package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/vtop-dev/vtop/analysis"
)

// handleMouse applies a mouse event to the screen shown (the program needs
// tea.WithMouseCellMotion()): a click selects the pane or row under the
// pointer, a click on the selected one opens its detail, the wheel moves
// the selection a row or scrolls the detail.
func (m *Model) handleMouse(msg tea.MouseMsg) {
	if m.tooSmall() || m.showHelp || m.filtering || !m.hasReport || msg.Action != tea.MouseActionPress {
		return
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp, tea.MouseButtonWheelDown:
		m.wheel(msg)
	case tea.MouseButtonLeft:
		m.click(msg.X, msg.Y-len(m.header))
	}
}

func (m *Model) wheel(msg tea.MouseMsg) {
	if m.screen == screenDetail {
		m.detail.update(msg)
		return
	}
	k := tea.KeyMsg{Type: tea.KeyDown}
	if msg.Button == tea.MouseButtonWheelUp {
		k.Type = tea.KeyUp
	}
	m.screenKey(k)
}

func (m *Model) click(x, y int) {
	var hit *analysis.ReplicaReport
	switch m.screen {
	case screenGrid:
		hit = m.grid.at(x, y)
	case screenTable:
		hit = m.table.at(y)
	}
	if hit == nil {
		return
	}
	if hit.Target == m.selected {
		m.openDetail()
		return
	}
	m.selected, m.follow = hit.Target, false
}

// at is the pane drawn at column x of body line y, or nil.
func (g *gridScreen) at(x, y int) *analysis.ReplicaReport {
	l := g.layout
	if y < 0 || l.paneH <= 0 {
		return nil
	}
	row, col := y/l.paneH, -1
	for c := 0; c < l.cols; c++ {
		if x >= l.x(c) && x < l.x(c)+l.width(c) {
			col = c
		}
	}
	i := g.top + row*l.cols + col
	if col < 0 || row*l.cols >= l.perPage || i >= len(g.panes) {
		return nil
	}
	return g.panes[i]
}

// at is the row drawn at body line y, or nil.
func (t *tableScreen) at(y int) *analysis.ReplicaReport {
	i := t.top + y - 2
	if y < 2 || y-2 >= t.visibleRows() || i >= len(t.rows) {
		return nil
	}
	return t.rows[i]
}
