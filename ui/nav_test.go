package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// selectAt selects the i-th replica of a list and shows it, as keys that
// moved there would.
func selectAt(m Model, i int, onTable bool) Model {
	m.follow = false
	if onTable {
		m.selected = m.table.rows[i].Target
		m.table.reveal(i)
	} else {
		m.selected = m.panes[i].Target
		m.grid.top = i
	}
	return sized(m, m.width, m.height)
}

func TestListKeysMoveTheSelection(t *testing.T) {
	// 40 replicas: three columns of panes at 120 columns, one row each in
	// the table.
	grid := send(newModel(120, 40), ReportMsg{Report: fleet(40, 0, t0)})
	if grid.grid.layout.cols != 3 {
		t.Fatalf("the grid has %d columns at 120, want 3", grid.grid.layout.cols)
	}
	table := press(grid, "t")
	gridPage, tablePage := grid.grid.layout.perPage, table.table.visibleRows()
	tests := []struct {
		name    string
		onTable bool
		from    int
		key     string
		want    int
	}{
		{"grid: down is one row of panes", false, 0, "down", 3},
		{"grid: j is down", false, 4, "j", 7},
		{"grid: up is one row of panes", false, 7, "up", 4},
		{"grid: k at the top stays", false, 1, "k", 0},
		{"grid: right is the next pane", false, 0, "right", 1},
		{"grid: l is right", false, 1, "l", 2},
		{"grid: left is the previous pane", false, 2, "left", 1},
		{"grid: h at the first stays", false, 0, "h", 0},
		{"grid: tab is the next pane", false, 5, "tab", 6},
		{"grid: tab wraps to the first", false, 39, "tab", 0},
		{"grid: shift+tab is the previous pane", false, 5, "shift+tab", 4},
		{"grid: shift+tab stops at the first", false, 0, "shift+tab", 0},
		{"grid: pgdn is a page down", false, 1, "pgdown", 1 + gridPage},
		{"grid: pgdn stops at the last", false, 38, "pgdown", 39},
		{"grid: pgup is a page up", false, 38, "pgup", 38 - gridPage},
		{"grid: pgup stops at the first", false, 20, "pgup", 0},
		{"grid: home is the first", false, 17, "home", 0},
		{"grid: g is the first", false, 17, "g", 0},
		{"grid: end is the last", false, 3, "end", 39},
		{"grid: G is the last", false, 3, "G", 39},
		{"table: down is one row", true, 0, "down", 1},
		{"table: up is one row", true, 5, "k", 4},
		{"table: tab is the next row", true, 5, "tab", 6},
		{"table: shift+tab is the previous row", true, 5, "shift+tab", 4},
		{"table: pgdn is a page down", true, 3, "pgdown", 3 + tablePage},
		{"table: pgdn stops at the last", true, 35, "pgdown", 39},
		{"table: pgup is a page up", true, 35, "pgup", 35 - tablePage},
		{"table: home is the first", true, 22, "home", 0},
		{"table: g is the first", true, 22, "g", 0},
		{"table: end is the last", true, 2, "end", 39},
		{"table: G is the last", true, 2, "G", 39},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, list := grid, grid.panes
			if tt.onTable {
				base, list = table, table.table.rows
			}
			m := press(selectAt(base, tt.from, tt.onTable), tt.key)
			if want := list[tt.want].Target; m.selected != want {
				t.Fatalf("from #%d %s selected %q, want #%d %q", tt.from, tt.key, m.selected, tt.want, want)
			}
			// The page follows the selection: the selected replica is
			// drawn, with the cursor glyph.
			if f := ansi.Strip(m.View()); !strings.Contains(f, "▸ "+m.selected) {
				t.Errorf("the frame does not show the selected %s", m.selected)
			}
		})
	}
}

func TestDetailScrollKeys(t *testing.T) {
	m := press(withHistory(newModel(80, 24), 60, rampingFull), "enter")
	page := m.detail.viewport.Height
	tests := []struct {
		key  string
		from int
		want int
	}{
		{"j", 0, 1},
		{"down", 0, 1},
		{"k", 5, 4},
		{"f", 0, page},
		{"pgdown", 0, page},
		{" ", 0, page},
		{"b", page, 0},
		{"pgup", page, 0},
		{"d", 0, page / 2},
		{"ctrl+d", 0, page / 2},
		{"u", page, page - page/2},
	}
	for _, tt := range tests {
		d := m
		d.detail.viewport.SetYOffset(tt.from)
		d = press(d, tt.key)
		if got := d.detail.viewport.YOffset; got != tt.want {
			t.Errorf("%q from line %d: at line %d, want %d", tt.key, tt.from, got, tt.want)
		}
	}
}

// Every key the screens handle is in the help overlay, with what it does.
func TestHelpShowsEveryKey(t *testing.T) {
	m := press(send(newModel(120, 40), ReportMsg{Report: allStates(t0)}), "?")
	frame := m.View()
	handled := map[string]bool{}
	for _, col := range m.helpColumns() {
		for _, g := range col {
			for _, b := range g.keys {
				if !b.Enabled() {
					continue
				}
				for _, k := range b.Keys() {
					handled[k] = true
				}
				if line := b.Help().Key; !strings.Contains(frame, line) || !strings.Contains(frame, b.Help().Desc) {
					t.Errorf("help lacks %q %q", line, b.Help().Desc)
				}
			}
		}
	}
	for _, k := range []string{"up", "k", "down", "j", "left", "h", "right", "l", "tab", "shift+tab",
		"pgup", "pgdown", "home", "end", "g", "G", "b", "f", " ", "u", "d", "ctrl+u", "ctrl+d",
		"enter", "t", "e", "esc", "?", "/", "s", "S", "I", "p", "q", "ctrl+c"} {
		if !handled[k] {
			t.Errorf("%q works but is in no binding the help shows", k)
		}
	}
}

// The root lays the frame out and gives every screen the body's size: the
// terminal's width and what the header and the footer leave of its height.
func TestRootPushesSizesDown(t *testing.T) {
	base := send(newModel(80, 24), ReportMsg{Report: allStates(t0)})
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 60}, {61, 17}} {
		m := sized(base, size[0], size[1])
		w, h := size[0], size[1]-len(m.header)-1
		got := map[string][2]int{
			"grid":   {m.grid.width, m.grid.height},
			"table":  {m.table.width, m.table.height},
			"detail": {m.detail.viewport.Width, m.detail.viewport.Height},
			"events": {m.log.width, m.log.height},
			"help":   {m.help.width, m.help.height},
		}
		for name, g := range got {
			if g != [2]int{w, h} {
				t.Errorf("%dx%d: %s is %dx%d, want %dx%d", size[0], size[1], name, g[0], g[1], w, h)
			}
		}
	}
}
