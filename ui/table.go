package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// column is one column of the table view.
type column struct {
	title string
	width int  // fixed width; the target column takes what is left
	drop  int  // order in which columns are dropped when narrow (0: never)
	right bool // right-aligned (numbers)
	cell  func(cellCtx, *analysis.ReplicaReport) string
	// num is the sort key of numeric columns; nil for text columns.
	num func(*analysis.ReplicaReport) analysis.Num
}

// cellCtx is what a cell may need besides its replica.
type cellCtx struct {
	th  *Theme
	now time.Time // the time of the report shown
}

// Indices of the columns with special handling.
const (
	colTarget = 0
	colModel  = 1
	colState  = 2
)

// tableColumns are the table's columns; `s` cycles through them as the
// sort key.
var tableColumns = []column{
	{title: "target", width: 12, cell: func(_ cellCtx, r *analysis.ReplicaReport) string { return r.Target }},
	{title: "model", width: 18, drop: 1, cell: func(_ cellCtx, r *analysis.ReplicaReport) string { return r.Model }},
	{title: "state", width: 10, cell: func(c cellCtx, r *analysis.ReplicaReport) string { return c.th.badge(r.State) }},
	numColumn("run", 5, 0, fmtCount, func(r *analysis.ReplicaReport) analysis.Num { return r.Running }),
	numColumn("wait", 5, 0, fmtCount, func(r *analysis.ReplicaReport) analysis.Num { return r.Waiting }),
	numColumn("KV%", 5, 0, fmtPct, func(r *analysis.ReplicaReport) analysis.Num { return r.KVCacheUsage }),
	numColumn("req/s", 6, 0, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.RequestsPerSecond }),
	numColumn("gen tok/s", 9, 4, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.GenerationTokensPerSecond }),
	numColumn("TTFT p99", 8, 0, fmtSeconds, func(r *analysis.ReplicaReport) analysis.Num { return r.TTFT.P99 }),
	numColumn("ITL p99", 7, 5, fmtSeconds, func(r *analysis.ReplicaReport) analysis.Num { return r.ITL.P99 }),
	numColumn("preempt/s", 9, 3, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.PreemptionsPerSecond }),
	numColumn("success", 7, 2, fmtPct, func(r *analysis.ReplicaReport) analysis.Num { return r.SuccessRate }),
	{title: "last seen / error", width: 24, cell: downCell},
}

// downCell dates the figures of a replica that is down and gives its
// error: "3m04s ago: connection refused"; empty for one that answers.
func downCell(c cellCtx, r *analysis.ReplicaReport) string {
	switch {
	case r.State != analysis.StateDown:
		return ""
	case r.LastGood.IsZero():
		return "never seen: " + r.Error
	}
	return fmtAge(c.now.Sub(r.LastGood)) + " ago: " + r.Error
}

func numColumn(title string, width, drop int, format func(analysis.Num) string, get func(*analysis.ReplicaReport) analysis.Num) column {
	return column{title: title, width: width, drop: drop, right: true, num: get,
		cell: func(c cellCtx, r *analysis.ReplicaReport) string {
			if r.State == analysis.StateDown {
				// The last good scrape's figure, dated in the row's last
				// column: faint, never drawn as current.
				return c.th.dim.Render(format(get(r)))
			}
			return format(get(r))
		}}
}

// sortRows orders the table by a column. Unknown numbers sort last in both
// directions (they are not small, they are missing); ties fall back to
// severity (state, queue, TTFT) and then the target, as in the grid.
func sortRows(rows []*analysis.ReplicaReport, col int, desc bool) {
	c := tableColumns[col]
	slices.SortStableFunc(rows, func(a, b *analysis.ReplicaReport) int {
		if d := compareBy(c, col, a, b, desc); d != 0 {
			return d
		}
		return bySeverity(a, b)
	})
}

func compareBy(c column, col int, a, b *analysis.ReplicaReport, desc bool) int {
	var d int
	switch {
	case c.num != nil:
		x, y := c.num(a), c.num(b)
		if x.Known() != y.Known() {
			if x.Known() {
				return -1
			}
			return 1
		}
		if !x.Known() {
			return 0
		}
		d = cmp.Compare(x.Float(), y.Float())
	case col == colState:
		d = cmp.Compare(a.State, b.State)
	case col == colModel:
		d = strings.Compare(a.Model, b.Model)
	default:
		d = strings.Compare(a.Target, b.Target)
	}
	if desc {
		d = -d
	}
	return d
}

// visibleColumns drops columns in their drop order until the rest fit in
// w, and returns the indices kept and the target column's width.
func visibleColumns(w int) ([]int, int) {
	keep := make([]int, len(tableColumns))
	for i := range keep {
		keep[i] = i
	}
	const cursorW = 2
	for {
		used := cursorW
		for _, i := range keep {
			used += tableColumns[i].width + 1
		}
		if used <= w {
			return keep, min(tableColumns[colTarget].width+w-used, 40)
		}
		first, at := 0, -1
		for k, i := range keep {
			if d := tableColumns[i].drop; d > 0 && (at < 0 || d < first) {
				first, at = d, k
			}
		}
		if at < 0 {
			return keep, tableColumns[colTarget].width
		}
		keep = slices.Delete(keep, at, at+1)
	}
}

// tableScreen is the table of replicas for large fleets: one row each,
// sorted by a column the user picks.
type tableScreen struct {
	theme    *Theme
	keys     listKeys
	sortKeys sortKeys

	width, height int
	columns       []int // the columns that fit the width, in order
	targetW       int   // the target column takes what the others leave

	rows     []*analysis.ReplicaReport // the panes, in the sort order
	total    int                       // replicas before the filter
	now      time.Time                 // the time of the report shown
	filter   string
	sortCol  int
	sortDesc bool
	selected string
	// top is the first row shown; like the grid's page, only the user's
	// keys move it.
	top int
}

func newTableScreen(theme *Theme) tableScreen {
	return tableScreen{theme: theme, keys: newListKeys(), sortKeys: newSortKeys(), sortCol: colState, sortDesc: true}
}

// setSize gives the table the body of the frame and picks the columns that
// fit.
func (t *tableScreen) setSize(w, h int) {
	t.width, t.height = w, h
	t.columns, t.targetW = visibleColumns(w)
}

// show gives the table its replicas (after the filter), how many there are
// before it and the filter text.
func (t *tableScreen) show(panes []*analysis.ReplicaReport, total int, filter string, now time.Time) {
	t.rows, t.now = slices.Clone(panes), now
	t.total, t.filter = total, filter
	sortRows(t.rows, t.sortCol, t.sortDesc)
}

// isSortKey reports whether a key orders the table.
func (t *tableScreen) isSortKey(k tea.KeyMsg) bool {
	return key.Matches(k, t.sortKeys.Sort, t.sortKeys.Reverse)
}

// update sorts (s, S/I) or moves the selection, and returns the selection
// and whether the key moved it.
func (t *tableScreen) update(k tea.KeyMsg) (string, bool) {
	switch {
	case key.Matches(k, t.sortKeys.Sort):
		t.sortCol = (t.sortCol + 1) % len(tableColumns)
		sortRows(t.rows, t.sortCol, t.sortDesc)
	case key.Matches(k, t.sortKeys.Reverse):
		t.sortDesc = !t.sortDesc
		sortRows(t.rows, t.sortCol, t.sortDesc)
	default:
		sel, moved := t.keys.move(t.rows, t.selected, 1, t.visibleRows(), k)
		if moved {
			t.selected = sel
			t.reveal(indexOf(t.rows, sel))
		}
		return sel, moved
	}
	return t.selected, false
}

// visibleRows is how many rows fit under the title and the column headers.
func (t *tableScreen) visibleRows() int { return max(t.height-2, 1) }

// reveal scrolls as little as needed to show row i.
func (t *tableScreen) reveal(i int) {
	if i < t.top {
		t.top = i
	}
	if n := t.visibleRows(); i >= t.top+n {
		t.top = i - n + 1
	}
}

// view draws the title, the column headers with the sort arrow and the
// rows around the cursor.
func (t tableScreen) view() []string {
	th := t.theme
	arrow := "▲"
	if t.sortDesc {
		arrow = "▼"
	}
	title := fmt.Sprintf("%d of %d replicas · sorted by %s %s", len(t.rows), t.total, tableColumns[t.sortCol].title, arrow)
	if t.filter != "" {
		title += " · filter " + t.filter
	}
	var head strings.Builder
	head.WriteString("  ")
	for _, i := range t.columns {
		name := tableColumns[i].title
		if i == t.sortCol {
			name += arrow
		}
		head.WriteString(cellText(name, colWidth(i, t.targetW), tableColumns[i].right) + " ")
	}
	lines := []string{th.title.Render(title), th.headerRow.Render(strings.TrimRight(head.String(), " "))}
	if len(t.rows) == 0 {
		return append(lines, th.dim.Render("  no replica matches the filter (esc clears it)"))
	}
	cursor := indexOf(t.rows, t.selected)
	start := min(t.top, max(len(t.rows)-1, 0))
	end := min(start+t.visibleRows(), len(t.rows))
	if cursor >= 0 && (cursor < start || cursor >= end) {
		// A re-sort took the selection off the rows shown: say where.
		r := t.rows[cursor]
		lines[0] += "  " + th.alert.Render(fmt.Sprintf("▸ %s now row %d %s (g: top)", r.Target, cursor+1, stateWord(r.State)))
	}
	for i := start; i < end; i++ {
		lines = append(lines, tableRow(cellCtx{th, t.now}, t.rows[i], t.columns, t.targetW, i == cursor))
	}
	return lines
}

func colWidth(i, targetW int) int {
	if i == colTarget {
		return targetW
	}
	return tableColumns[i].width
}

// tableRow draws one replica; the cursor row has a ▸ glyph, which reads
// without colour too.
func tableRow(ctx cellCtx, r *analysis.ReplicaReport, cols []int, targetW int, cursor bool) string {
	var b strings.Builder
	if cursor {
		b.WriteString(ctx.th.selected.Render("▸ "))
	} else {
		b.WriteString("  ")
	}
	for _, i := range cols {
		c := tableColumns[i]
		b.WriteString(cellText(c.cell(ctx, r), colWidth(i, targetW), c.right) + " ")
	}
	return b.String()
}

// cellText cuts or pads a cell to width, aligned left or right.
func cellText(s string, width int, right bool) string {
	if ansi.StringWidth(s) > width {
		s = ansi.Truncate(s, width, "…")
	}
	pad := strings.Repeat(" ", max(width-ansi.StringWidth(s), 0))
	if right {
		return pad + s
	}
	return s + pad
}
