package ui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/vtop-dev/vtop/analysis"
)

func click(x, y int) tea.MouseMsg {
	return tea.MouseMsg{X: x, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress}
}

func wheel(b tea.MouseButton) tea.MouseMsg {
	return tea.MouseMsg{X: 10, Y: 10, Button: b, Action: tea.MouseActionPress}
}

// A click selects the pane or row under it; a click on the selected one
// opens its detail; the wheel scrolls.
func TestMouse(t *testing.T) {
	grid := send(newModel(120, 40), ReportMsg{Report: spikeFleet(50, t0, map[int]analysis.State{7: analysis.StateFull})})
	l, top := grid.grid.layout, len(grid.header)
	// The second pane of the second row, a column in from its left border.
	x, y := l.x(1)+3, top+l.paneH+2
	want := grid.panes[l.cols+1].Target
	m := send(grid, click(x, y))
	if m.selected != want || m.follow {
		t.Fatalf("click at %d,%d selected %s (follow %v), want %s", x, y, m.selected, m.follow, want)
	}
	if d := send(m, click(x, y)); d.screen != screenDetail {
		t.Errorf("a click on the selected pane did not open its detail")
	}
	if d := send(grid, wheel(tea.MouseButtonWheelDown)); d.selected != grid.panes[l.cols].Target {
		t.Errorf("wheel down selected %s, want the pane a row down", d.selected)
	}

	table := press(grid, "t")
	row := 4 // the fifth row under the title and the column headers
	m = send(table, click(20, len(table.header)+2+row))
	if want := table.table.rows[row].Target; m.selected != want {
		t.Errorf("click in the table selected %s, want %s", m.selected, want)
	}
	if d := send(m, click(20, len(table.header)+2+row)); d.screen != screenDetail {
		t.Errorf("a click on the selected row did not open its detail")
	}

	detail := press(grid, "enter")
	if d := send(detail, wheel(tea.MouseButtonWheelDown)); d.detail.viewport.YOffset == 0 {
		t.Errorf("the wheel did not scroll the detail view")
	}
}
