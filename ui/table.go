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
	"github.com/vtop-dev/vtop/catalogue"
)

// column is one column of the table, as wide as its widest cell; flexible
// ones (minW > 0) shrink to minW before a column is dropped.
type column struct {
	title string
	minW  int  // flexible: shrinks down to this; 0 for a fixed column
	drop  int  // order in which columns are dropped when narrow (0: never)
	right bool // right-aligned (numbers)
	// Drawn only when a row is DOWN; only when a row has GPUs joined.
	onlyDown, onlyGPU bool
	cell              func(cellCtx, *analysis.ReplicaReport) string
	// num is the sort key of numeric columns; nil for text columns.
	num func(*analysis.ReplicaReport) analysis.Num
}

// sortable reports whether s and S stop on the column.
func (c column) sortable() bool { return !c.onlyDown }

// cellCtx is what a cell may need besides its replica.
type cellCtx struct {
	th  *Theme
	now time.Time       // the time of the report shown
	cfg analysis.Config // the judgement's SLOs, for SlowMark
}

// Indices of the columns with special handling.
const (
	colTarget = 0
	colState  = 3
)

// tableColumns are the table's columns, s and S step through.
var tableColumns = []column{
	{title: "target", minW: 20, cell: func(_ cellCtx, r *analysis.ReplicaReport) string {
		if r.Instances > 1 {
			return fmt.Sprintf("%s ×%d", r.Target, r.Instances)
		}
		return r.Target
	}},
	{title: "model", minW: 10, drop: 1, cell: func(_ cellCtx, r *analysis.ReplicaReport) string { return r.Model }},
	{title: "engine", drop: 2, cell: func(_ cellCtx, r *analysis.ReplicaReport) string { return engineName(r) }},
	{title: "state", cell: stateCell},
	numColumn("run", 0, fmtCount, func(r *analysis.ReplicaReport) analysis.Num { return r.Running }),
	numColumn("wait", 0, fmtCount, func(r *analysis.ReplicaReport) analysis.Num { return r.Waiting }),
	numColumn("KV%", 0, analysis.Num.Percent, func(r *analysis.ReplicaReport) analysis.Num { return r.KVCacheUsage }),
	numColumn("req/s", 0, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.RequestsPerSecond }),
	numColumn("gen tok/s", 5, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.GenerationTokensPerSecond }),
	quantileColumn("TTFT p99", 0, func(r *analysis.ReplicaReport) analysis.Quantiles { return r.TTFT }),
	quantileColumn("ITL p99", 6, func(r *analysis.ReplicaReport) analysis.Quantiles { return r.ITL }),
	numColumn("preempt/s", 4, fmtRate, func(r *analysis.ReplicaReport) analysis.Num { return r.PreemptionsPerSecond }),
	numColumn("success", 3, analysis.Num.Percent, func(r *analysis.ReplicaReport) analysis.Num { return r.SuccessRate }),
	// req/s counts every finished request, aborts included: their share
	// beside it.
	numColumn("abort", 3, analysis.Num.Percent, func(r *analysis.ReplicaReport) analysis.Num { return r.AbortShare }),
	gpuColumn("GPU%", 4, func(r *analysis.ReplicaReport) analysis.Num { return r.GPUUtilization }),
	gpuColumn("GMEM%", 2, func(r *analysis.ReplicaReport) analysis.Num { return r.GPUMemoryUsage }),
	{title: "error", minW: 24, onlyDown: true, cell: downCell},
}

// numColumn is a figure of each replica, drawn faint on a DOWN row (row).
func numColumn(title string, drop int, format func(analysis.Num) string, get func(*analysis.ReplicaReport) analysis.Num) column {
	return column{title: title, drop: drop, right: true, num: get,
		cell: func(_ cellCtx, r *analysis.ReplicaReport) string { return format(get(r)) }}
}

// gpuColumn is a percentage over the GPUs joined to a replica, drawn only
// when some replica has GPUs; n/a for one without.
func gpuColumn(title string, drop int, get func(*analysis.ReplicaReport) analysis.Num) column {
	c := numColumn(title, drop, analysis.Num.Percent, func(r *analysis.ReplicaReport) analysis.Num {
		if r.GPUCount == 0 {
			return analysis.NA
		}
		return get(r)
	})
	c.onlyGPU = true
	return c
}

// quantileColumn is a p99 latency, drawn as its bucket allows (">80s")
// and sorted by its value.
func quantileColumn(title string, drop int, get func(*analysis.ReplicaReport) analysis.Quantiles) column {
	c := numColumn(title, drop, fmtSeconds, func(r *analysis.ReplicaReport) analysis.Num { return get(r).P99 })
	c.cell = func(_ cellCtx, r *analysis.ReplicaReport) string { return fmtQuantile(get(r), p99) }
	return c
}

// stateCell is the state's badge and its marks: RESTARTED when the window
// holds a restart (its rates count across it), and why a SLOW row whose
// p99 TTFT is within its SLO is SLOW (analysis.SlowMark).
func stateCell(c cellCtx, r *analysis.ReplicaReport) string {
	badge := c.th.badge(r.State)
	if mark := analysis.SlowMark(r, c.cfg); mark != "" {
		badge += " " + c.th.warn.Render(mark)
	}
	if r.Fault != "" {
		badge += " " + c.th.alert.Render(r.Fault)
	}
	if r.SourceStale {
		badge += " " + c.th.warn.Render("stale")
	}
	if r.Late {
		badge += " " + c.th.warn.Render("late")
	}
	if r.Restarted {
		return badge + " " + c.th.warn.Render("RESTARTED")
	}
	return badge
}

// downCell dates a DOWN replica's figures and gives its error: "3m04s
// ago: connection refused"; empty for one that answers.
func downCell(c cellCtx, r *analysis.ReplicaReport) string {
	switch {
	case r.State != analysis.StateDown:
		return ""
	case r.LastGood.IsZero():
		return noGoodScrape + ": " + r.Error
	}
	return fmtAge(c.now.Sub(r.LastGood)) + " ago: " + r.Error
}

// sortRows orders the table by a column. Unknown numbers sort last in both
// directions (they are missing, not small); ties fall back to severity.
func sortRows(rows []*analysis.ReplicaReport, col int, desc bool) {
	c := tableColumns[col]
	slices.SortStableFunc(rows, func(a, b *analysis.ReplicaReport) int {
		if d := compareBy(c, col, a, b, desc); d != 0 {
			return d
		}
		return analysis.CompareSeverity(a, b)
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
		// By severity, the grid's order, not the state's name.
		d = -analysis.CompareSeverity(a, b)
	case col == colTarget:
		d = strings.Compare(a.Target, b.Target)
	default: // by the text drawn
		d = strings.Compare(c.cell(cellCtx{}, a), c.cell(cellCtx{}, b))
	}
	if desc {
		d = -d
	}
	return d
}

// cursorW is the room of the ▸ glyph before each row.
const cursorW = 2

// naturalWidths measures each column: its widest cell, or its title with
// room for the sort arrow; 0 for a column not drawn (onlyDown, onlyGPU).
func naturalWidths(rows []*analysis.ReplicaReport, ctx cellCtx) []int {
	anyDown := slices.ContainsFunc(rows, func(r *analysis.ReplicaReport) bool { return r.State == analysis.StateDown })
	anyGPU := slices.ContainsFunc(rows, func(r *analysis.ReplicaReport) bool { return r.GPUCount > 0 })
	widths := make([]int, len(tableColumns))
	for i, c := range tableColumns {
		if (c.onlyDown && !anyDown) || (c.onlyGPU && !anyGPU) {
			continue
		}
		widths[i] = ansi.StringWidth(c.title) + 1
		for _, r := range rows {
			widths[i] = max(widths[i], ansi.StringWidth(c.cell(ctx, r)))
		}
	}
	return widths
}

// layoutColumns picks the columns that fit in w and their widths: flexible
// columns shrunk to their minimum, then columns dropped in their drop order
// until the rest fit; what is left goes back to the flexible columns in
// order, so that a wide terminal shows the model in full.
func layoutColumns(natural []int, w int) (keep, widths []int) {
	widths = make([]int, len(tableColumns))
	for i, n := range natural {
		if n > 0 {
			keep = append(keep, i)
		}
	}
	for usedWidth(keep, natural) > w {
		at := nextDrop(keep)
		if at < 0 {
			break // nothing left to drop: the row is cut at the edge
		}
		keep = slices.Delete(keep, at, at+1)
	}
	left := w - usedWidth(keep, natural)
	for _, i := range keep {
		widths[i] = columnNeed(natural, i)
		if left < 0 && tableColumns[i].onlyDown {
			// Nothing else can go: the error column takes what is left
			// rather than push every row past the edge.
			widths[i] = max(widths[i]+left, minErrorW)
			left = 0
		}
		if tableColumns[i].minW > 0 && left > 0 {
			more := min(natural[i]-widths[i], left)
			widths[i] += more
			left -= more
		}
	}
	return keep, widths
}

// columnNeed is column i's natural width, or a flexible one's minimum when less.
func columnNeed(natural []int, i int) int {
	if m := tableColumns[i].minW; m > 0 {
		return min(m, natural[i])
	}
	return natural[i]
}

// usedWidth is the width of a row of the kept columns at their need.
func usedWidth(keep, natural []int) int {
	u := cursorW
	for _, i := range keep {
		u += columnNeed(natural, i) + 1
	}
	return u
}

// nextDrop is the place in keep of the column to drop first, -1 for none.
func nextDrop(keep []int) int {
	at := -1
	for k, i := range keep {
		if d := tableColumns[i].drop; d > 0 && (at < 0 || d < tableColumns[keep[at]].drop) {
			at = k
		}
	}
	return at
}

// The narrowest error column ("2m ago: …refused"), and the least of an
// error's end worth showing beside its age.
const (
	minErrorW   = 12
	minErrorEnd = 10
)

// commonEnds is the length of the prefix and suffix every target shares:
// what does not tell the rows apart, elided first.
func commonEnds(rows []*analysis.ReplicaReport) (pre, suf int) {
	if len(rows) < 2 {
		return 0, 0
	}
	first := []rune(rows[0].Target)
	pre, suf = len(first), len(first)
	for _, r := range rows[1:] {
		t := []rune(r.Target)
		pre = min(pre, len(t))
		for k := 0; k < pre; k++ {
			if t[k] != first[k] {
				pre = k
				break
			}
		}
		suf = min(suf, len(t))
		for k := 1; k <= suf; k++ {
			if t[len(t)-k] != first[len(first)-k] {
				suf = k - 1
				break
			}
		}
	}
	return pre, suf
}

// shortenMiddle fits s in w columns keeping the runes between a shared
// prefix of pre runes and a shared suffix of suf runes, with what context
// fits, and "…" where text was cut; without a part that differs, both ends.
func shortenMiddle(s string, pre, suf, w int) string {
	rs := []rune(s)
	n := len(rs)
	switch {
	case n <= w:
		return s
	case w < 3:
		return ansi.Truncate(s, max(w, 0), "")
	}
	start, end := min(pre, n), max(n-suf, 0)
	if start >= end || end-start > w-2 {
		head := (w - 1) / 2
		return string(rs[:head]) + "…" + string(rs[n-(w-1-head):])
	}
	if n-start+1 <= w {
		// The part that differs and all after it fit: keep the end.
		return "…" + string(rs[n-(w-1):])
	}
	rest := w - (end - start) - 2
	a, b := start-rest/2, end+rest-rest/2
	if a <= 0 {
		return string(rs[:w-1]) + "…"
	}
	return "…" + string(rs[a:b]) + "…"
}

// tableScreen is the table of replicas: a row each, sorted by a column.
type tableScreen struct {
	theme    *Theme
	cfg      analysis.Config
	keys     listKeys
	sortKeys sortKeys

	width, height int
	columns       []int // the columns that fit the width, in order
	widths        []int // by column index
	natural       []int // each column's widest cell, for the rows shown
	pre, suf      int   // the prefix and suffix every target shares

	rows     []*analysis.ReplicaReport // the panes, in the sort order
	total    int                       // replicas before the filter
	now      time.Time                 // the time of the report shown
	source   *catalogue.SourceStatus   // the report's source, for a table with no rows
	filter   string
	sortCol  int
	sortDesc bool
	selected string
	top      int // the first row shown; only the user's keys move it
}

func newTableScreen(theme *Theme, cfg analysis.Config) tableScreen {
	return tableScreen{theme: theme, cfg: cfg, keys: newListKeys(), sortKeys: newSortKeys(), sortCol: colState, sortDesc: true}
}

// setSize gives the table the body of the frame and picks the columns.
func (t *tableScreen) setSize(w, h int) {
	t.width, t.height = w, h
	t.columns, t.widths = layoutColumns(t.natural, w)
}

// show gives the table its replicas after the filter, how many there are
// before it, the filter and the report's time, and measures the columns;
// setSize, which follows, picks those that fit.
func (t *tableScreen) show(panes []*analysis.ReplicaReport, total int, filter string, now time.Time) {
	t.rows, t.now = slices.Clone(panes), now
	t.total, t.filter = total, filter
	sortRows(t.rows, t.sortCol, t.sortDesc)
	t.natural = naturalWidths(t.rows, cellCtx{t.theme, now, t.cfg})
	t.pre, t.suf = commonEnds(t.rows)
}

// update sorts or moves the selection, and whether the key moved it.
func (t *tableScreen) update(k tea.KeyMsg) (string, bool) {
	switch {
	case key.Matches(k, t.sortKeys.Sort):
		t.stepSort(+1)
	case key.Matches(k, t.sortKeys.SortBack):
		t.stepSort(-1)
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

// stepSort sorts by the next (+1) or previous (-1) sortable column drawn.
func (t *tableScreen) stepSort(dir int) {
	var cols []int
	for _, i := range t.columns {
		if tableColumns[i].sortable() {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return
	}
	at := slices.Index(cols, t.sortCol)
	if at < 0 && dir < 0 {
		at = 0 // not drawn: backwards starts from the last
	}
	t.sortCol = cols[((at+dir)%len(cols)+len(cols))%len(cols)]
	sortRows(t.rows, t.sortCol, t.sortDesc)
}

// visibleRows is how many rows fit under the title and the column headers.
func (t *tableScreen) visibleRows() int { return max(t.height-2, 1) }

// span is the rows drawn, [start, end).
func (t tableScreen) span() (start, end int) {
	start = max(min(t.top, len(t.rows)-1), 0)
	return start, min(start+t.visibleRows(), len(t.rows))
}

// inView are the targets of the rows drawn.
func (t tableScreen) inView() []string {
	start, end := t.span()
	return targetsOf(t.rows[start:end])
}

// reveal scrolls as little as needed to show row i.
func (t *tableScreen) reveal(i int) {
	if i < 0 {
		return // no such row: nothing to show
	}
	if i < t.top {
		t.top = i
	}
	if n := t.visibleRows(); i >= t.top+n {
		t.top = i - n + 1
	}
}

// view draws the title, the column headers with the sort arrow and the rows.
func (t tableScreen) view() []string {
	th := t.theme
	arrow := "▲"
	if t.sortDesc {
		arrow = "▼"
	}
	title := fmt.Sprintf("%d of %d %s · sorted by %s", len(t.rows), t.total, plural(t.total, "replica"), t.sortWords(arrow))
	if t.filter != "" {
		title += " · filter " + t.filter
	}
	var head strings.Builder
	head.WriteString(strings.Repeat(" ", cursorW))
	for _, i := range t.columns {
		name := tableColumns[i].title
		if i == t.sortCol {
			name += arrow
		}
		head.WriteString(cellText(name, t.widths[i], tableColumns[i].right) + " ")
	}
	lines := []string{th.title.Render(title), th.headerRow.Render(strings.TrimRight(head.String(), " "))}
	if len(t.rows) == 0 {
		return append(lines, th.dim.Render("  "+noRowsText(t.total, t.source)))
	}
	cursor := indexOf(t.rows, t.selected)
	start, end := t.span()
	// The rows off the screen first: short, they fit the narrowest title.
	if start > 0 {
		lines[0] += " · " + th.warn.Render(fmt.Sprintf("%d above", start))
	}
	if below := len(t.rows) - end; below > 0 {
		lines[0] += " · " + th.warn.Render(fmt.Sprintf("%d below", below))
	}
	if cursor >= 0 && (cursor < start || cursor >= end) {
		// A re-sort took the selection off the rows shown: say where.
		r := t.rows[cursor]
		lines[0] += "  " + th.alert.Render(fmt.Sprintf("▸ %s now row %d %s (g: top)", r.Target, cursor+1, stateWord(r.State)))
	}
	for i := start; i < end; i++ {
		lines = append(lines, t.row(t.rows[i], i == cursor))
	}
	return lines
}

// sortWords names the order of the rows: the column and its arrow, the
// state column's by what it sorts by.
func (t tableScreen) sortWords(arrow string) string {
	if t.sortCol != colState {
		return tableColumns[t.sortCol].title + " " + arrow
	}
	if t.sortDesc {
		return "severity " + arrow + " (" + worstFirst + ")"
	}
	return "severity " + arrow + " (best first)"
}

// worstFirst is the table's first order, in the title and the help.
const worstFirst = "worst first"

// plural is "replica" or "replicas" for n.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// row draws one replica, the cursor's with a ▸; targets are shortened in
// the middle, keeping what tells them apart.
func (t tableScreen) row(r *analysis.ReplicaReport, cursor bool) string {
	ctx := cellCtx{t.theme, t.now, t.cfg}
	var b strings.Builder
	if cursor {
		b.WriteString(ctx.th.selected.Render("▸ "))
	} else {
		b.WriteString("  ")
	}
	for _, i := range t.columns {
		c := tableColumns[i]
		text := c.cell(ctx, r)
		switch {
		case c.num != nil && !c.onlyGPU && r.State == analysis.StateDown:
			// The last good scrape's figure, dated in the row's last
			// column: faint, never drawn as current. The GPUs' are current.
			text = ctx.th.dim.Render(text)
		case i == colTarget:
			text = shortenMiddle(text, t.pre, t.suf, t.widths[i])
		case c.onlyDown && ansi.StringWidth(text) > t.widths[i]:
			// An error says what went wrong at its end ("connection
			// refused"): keep the age and the end; the end if not both.
			age, msg, _ := strings.Cut(text, ": ")
			prefix := age + ": "
			if t.widths[i]-ansi.StringWidth(prefix) < minErrorEnd {
				prefix = ""
			}
			keep := max(t.widths[i]-ansi.StringWidth(prefix), 1)
			text = prefix + ansi.TruncateLeft(msg, ansi.StringWidth(msg)-keep+1, "…")
		}
		b.WriteString(cellText(text, t.widths[i], c.right) + " ")
	}
	return b.String()
}

// cellText cuts or pads a cell to width, aligned left or right.
func cellText(s string, width int, right bool) string {
	if right {
		return padLeft(ansi.Truncate(s, width, "…"), width)
	}
	return fitWidth(s, width)
}
