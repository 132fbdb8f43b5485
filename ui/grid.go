package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// minPaneWidth is the narrowest pane: the figure lines fit in it.
const minPaneWidth = 38

// paneLevel is how much a pane shows: sparklines go first, then figure
// lines, so that more panes fit.
type paneLevel int

const (
	levelCompact paneLevel = iota // title, one figure line, reason
	levelNormal                   // title, three figure lines, reason
	levelFull                     // normal plus sparklines
)

// sparks are a pane's sparklines in the order drawn: the label, the top
// of the scale (0: the largest value shown), the history's figure and now's.
var sparks = [...]struct {
	name string
	hi   float64
	get  func(analysis.Point) float32
	now  func(*analysis.ReplicaReport) string
}{
	{"run", 0, func(p analysis.Point) float32 { return p.Running }, func(r *analysis.ReplicaReport) string { return fmtCount(r.Running) }},
	{"wait", 0, func(p analysis.Point) float32 { return p.Waiting }, func(r *analysis.ReplicaReport) string { return fmtCount(r.Waiting) }},
	// KV usage is a fraction: a fixed scale makes 100% look full.
	{"KV", 1, func(p analysis.Point) float32 { return p.KVCacheUsage }, func(r *analysis.ReplicaReport) string { return r.KVCacheUsage.Percent() }},
	{"TTFT", 0, func(p analysis.Point) float32 { return p.TTFTP99 }, func(r *analysis.ReplicaReport) string { return fmtQuantile(r.TTFT, p99) }},
	{"gen", 0, func(p analysis.Point) float32 { return p.GenerationTokensPerSecond },
		func(r *analysis.ReplicaReport) string { return fmtRate(r.GenerationTokensPerSecond) }},
}

// gridLayout is how the grid body is divided. The first extra panes of a
// row are one column wider, so that rows reach the right edge.
type gridLayout struct {
	cols, paneW, extra int
	level              paneLevel
	sparkPer, sparkH   int // sparklines per line, rows per sparkline (full level)
	reasonLines        int // lines of evidence and first action
	paneH              int // lines, borders included
	perPage            int // panes shown at once
	eventLines         int // lines left for the event log (0: none)
}

// width is the width of the panes of column col.
func (l gridLayout) width(col int) int {
	if col < l.extra {
		return l.paneW + 1
	}
	return l.paneW
}

// x is where the panes of column col start.
func (l gridLayout) x(col int) int { return col*l.paneW + min(col, l.extra) }

// gridScreen is the grid of replica panes, worst first, with the event log
// under them when there is room; laid out when its size or panes change.
type gridScreen struct {
	theme *Theme
	loc   *time.Location
	hint  string // shown instead of an empty event log while nothing answers
	keys  listKeys

	width, height int
	layout        gridLayout

	report   analysis.Report
	panes    []*analysis.ReplicaReport
	history  map[string]*pointHistory
	events   *eventLog
	selected string
	// top is the first pane of the page shown. Only the user's keys move
	// it: a re-sort moves replicas, never the page.
	top int
}

func newGridScreen(theme *Theme, loc *time.Location, hint string) gridScreen {
	return gridScreen{theme: theme, loc: loc, hint: hint, keys: newListKeys()}
}

// setSize gives the grid the body of the frame.
func (g *gridScreen) setSize(w, h int) {
	g.width, g.height = w, h
	g.layout = layoutGrid(g.panes, g.theme, w, h)
	g.alignTop()
}

// alignTop keeps the page on a page boundary inside the list.
func (g *gridScreen) alignTop() {
	per := max(g.layout.perPage, 1)
	g.top = min(max(g.top, 0), max(len(g.panes)-1, 0))
	g.top -= g.top % per
}

// show gives the grid what to draw; setSize, which follows, lays it out.
func (g *gridScreen) show(r analysis.Report, panes []*analysis.ReplicaReport, history map[string]*pointHistory, events *eventLog) {
	g.report, g.panes, g.history, g.events = r, panes, history, events
}

// update moves the selection and the page with it, and whether it moved.
func (g *gridScreen) update(k tea.KeyMsg) (string, bool) {
	sel, moved := g.keys.move(g.panes, g.selected, g.layout.cols, g.layout.perPage, k)
	if moved {
		g.selected = sel
		g.top = indexOf(g.panes, sel)
		g.alignTop()
	}
	return sel, moved
}

// Bounds of the layout's choices.
const (
	maxSparkH      = 8 // rows of a sparkline grown into a tall screen
	maxReasonLines = 6 // lines of evidence a pane wraps to
	eventReserve   = 6 // lines kept for the event log on a tall screen
	eventReserveLo = 3 // and on a short one
)

// paneHeight is the height of a pane, borders included.
func paneHeight(level paneLevel, sparkPer, sparkH, reasonLines int) int {
	h := 2 + 1 + reasonLines
	switch level {
	case levelFull:
		h += 3 + (len(sparks)+sparkPer-1)/sparkPer*sparkH
	case levelNormal:
		h += 3
	default:
		h++
	}
	return h
}

// paneShape is one way to draw a pane; shapes are tried richest first.
type paneShape struct {
	level            paneLevel
	sparkPer, sparkH int
}

// paneShapes are the shapes of a pane inner columns wide, tallest first:
// full panes with sparklines up to maxSparkH rows, down to compact panes.
func paneShapes(inner int) []paneShape {
	var full []paneShape
	for h := maxSparkH; h >= 1; h-- {
		for per := 1; per <= min(max(inner/minPaneWidth, 1), len(sparks)); per++ {
			full = append(full, paneShape{levelFull, per, h})
		}
	}
	lines := func(s paneShape) int { return (len(sparks) + s.sparkPer - 1) / s.sparkPer * s.sparkH }
	slices.SortStableFunc(full, func(a, b paneShape) int { return lines(b) - lines(a) })
	return append(full, paneShape{level: levelNormal}, paneShape{level: levelCompact})
}

// layoutGrid divides w × h among the panes. Every pane on one screen comes
// first, then the evidence in full, then the richest shape that fills the
// height; if none fits every pane, compact panes page, with a hint line.
// The event log gets what is left (at least eventReserve when tall).
func layoutGrid(panes []*analysis.ReplicaReport, th *Theme, w, h int) gridLayout {
	n := max(len(panes), 1)
	cols := min(n, max(w/minPaneWidth, 1))
	rows := (n + cols - 1) / cols
	// As few columns as make the same rows: four panes are two wide rows
	// of two rather than three and a lone one.
	cols = (n + rows - 1) / rows
	l := gridLayout{cols: cols, paneW: w / cols, extra: w % cols}
	reserve := eventReserveLo
	if h >= 30 {
		reserve = eventReserve
	}
	inner := max(l.paneW-2, 1)
	shapes := paneShapes(inner)
	full, plain := shapes[:len(shapes)-2], shapes[len(shapes)-2:]
	need := reasonNeed(panes, th, inner)
	// Every pane on the screen matters more than the event log under them,
	// the sparklines (the minutes before now) more than the evidence's
	// later lines, which the detail view holds in full.
	for _, room := range []int{h - reserve, h} {
		for _, group := range [][]paneShape{full, plain} {
			for rl := need; rl >= 1; rl-- {
				for _, s := range group {
					paneH := paneHeight(s.level, s.sparkPer, s.sparkH, rl)
					if rows*paneH > room {
						continue
					}
					l.level, l.sparkPer, l.sparkH, l.reasonLines, l.paneH = s.level, s.sparkPer, s.sparkH, rl, paneH
					l.perPage = n
					if left := h - rows*paneH; left >= 2 {
						l.eventLines = left
					}
					return l
				}
			}
		}
	}
	// Paging: rows of compact panes over the hint line, their evidence
	// grown into the lines left over.
	l.level, l.reasonLines = levelCompact, 1
	l.paneH = paneHeight(levelCompact, 0, 0, 1)
	fit := max((h-1)/l.paneH, 1)
	l.reasonLines = min(1+max(h-1-fit*l.paneH, 0)/fit, need)
	l.paneH = paneHeight(levelCompact, 0, 0, l.reasonLines)
	l.perPage = fit * cols
	return l
}

// reasonNeed is the lines the longest evidence takes, up to maxReasonLines.
func reasonNeed(panes []*analysis.ReplicaReport, th *Theme, inner int) int {
	need := 1
	for _, r := range panes {
		if need == maxReasonLines {
			break
		}
		need = max(need, min(len(wrapLines(paneReason(th, r), inner)), maxReasonLines))
	}
	return need
}

// wrapLines wraps text at word boundaries into lines of at most w columns.
func wrapLines(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, max(w, 1), ""), "\n")
}

// wrapIn wraps text into at most n lines of w columns, each drawn in style.
func wrapIn(style lipgloss.Style, s string, w, n int) []string {
	lines := wrapLines(s, w)
	lines = lines[:min(len(lines), n)]
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// linesOf wraps text into exactly n lines of w columns, "…" when cut.
func linesOf(s string, w, n int) []string {
	lines := wrapLines(s, w)
	if len(lines) > n {
		lines = lines[:n]
		if last := lines[n-1]; ansi.StringWidth(last)+2 <= w {
			lines[n-1] = last + " …" // after a whole word: "at 140 …", not "at 140…"
		} else {
			lines[n-1] = ansi.Truncate(last, max(w-1, 0), "") + "…"
		}
	}
	return fitHeight(lines, n)
}

// fitSegments joins the first variant of a figure line that fits in w,
// two blanks between figures or else one; when none fits, whole figures
// go from the end of the last: a figure is never cut.
func fitSegments(w int, variants ...[]string) string {
	for _, v := range variants {
		for _, sep := range []string{"  ", " "} {
			if line := strings.Join(v, sep); ansi.StringWidth(line) <= w {
				return line
			}
		}
	}
	last := variants[len(variants)-1]
	for k := len(last) - 1; k > 0; k-- {
		if line := strings.Join(last[:k], " "); ansi.StringWidth(line) <= w {
			return line
		}
	}
	return last[0]
}

// span is the panes of the page drawn, [start, end).
func (g gridScreen) span() (start, end int) {
	return g.top, min(g.top+g.layout.perPage, len(g.panes))
}

// inView are the targets of the panes drawn.
func (g gridScreen) inView() []string {
	if len(g.panes) == 0 {
		return nil
	}
	start, end := g.span()
	return targetsOf(g.panes[start:end])
}

// view draws the panes, the "+N more" hint and the event log.
func (g gridScreen) view() []string {
	if len(g.panes) == 0 {
		return []string{"", center(noRowsText(len(g.report.Replicas), g.report.Source), g.width)}
	}
	l := g.layout
	sel := indexOf(g.panes, g.selected)
	start, end := g.span()
	var lines []string
	for rowStart := start; rowStart < end; rowStart += l.cols {
		panes := make([]string, 0, l.cols)
		for i := rowStart; i < min(rowStart+l.cols, end); i++ {
			panes = append(panes, g.renderPane(g.panes[i], l.width(i-rowStart), i == sel))
		}
		lines = append(lines, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, panes...), "\n")...)
	}
	if hint := g.pageHint(start, end, sel); hint != "" {
		lines = append(lines, hint)
	}
	if l.eventLines > 0 {
		lines = append(lines, g.eventPanel(l.eventLines)...)
	}
	return lines
}

// pageHint says what is above and below the page, with the keys, and
// where the selection went when a re-sort took it off the page.
func (g gridScreen) pageHint(start, end, sel int) string {
	var segs []string
	if sel >= 0 && (sel < start || sel >= end) {
		r := g.panes[sel]
		segs = append(segs, g.theme.alert.Render(fmt.Sprintf("▸ %s now #%d %s (g: top)", r.Target, sel+1, stateWord(r.State))))
	}
	if start > 0 {
		segs = append(segs, g.theme.warn.Render(fmt.Sprintf("%d above (PgUp)", start)))
	}
	if below := len(g.panes) - end; below > 0 {
		segs = append(segs, g.theme.warn.Render(fmt.Sprintf("+%d more (t table, PgDn page)", below)))
	}
	return strings.Join(segs, " · ")
}

// eventPanel is the event log under the grid: a title and the newest events.
func (g gridScreen) eventPanel(h int) []string {
	th := g.theme
	empty := th.dim.Render(noEvents)
	if g.hint != "" && g.report.Fleet.Replicas > 0 && g.report.Fleet.Up == 0 {
		empty = th.warn.Render(g.hint)
	}
	return eventLines(th, g.loc, th.headerRow.Render("events")+th.dim.Render("  (e: all)"), g.events.newest(h-1, g.report.Time), empty)
}

// renderPane draws one replica in a bordered box, its lines cut to the
// width first so that lipgloss never wraps them.
func (g gridScreen) renderPane(r *analysis.ReplicaReport, w int, selected bool) string {
	th, l := g.theme, g.layout
	inner := max(w-2, 1)
	lines := []string{paneTitle(th, r, inner, selected)}
	lines = append(lines, g.paneFigures(r, l.level, inner)...)
	if l.level == levelFull {
		lines = append(lines, g.paneSparklines(r, inner, l.sparkPer, l.sparkH)...)
	}
	// The evidence opens with why the figures may mislead: scrapes gone
	// unanswered, a restart in the window (its rates count across it).
	reason := paneReason(th, r)
	if r.Restarted {
		reason = th.warn.Render("restarted "+r.RestartedAt.In(g.loc).Format(human.Clock)) + " · " + reason
	}
	if r.Late {
		reason = th.warn.Render(analysis.LateNote(r)) + " · " + reason
	}
	lines = append(lines, linesOf(reason, inner, l.reasonLines)...)
	return th.pane(r.State, selected).Render(strings.Join(fitLines(lines, inner), "\n"))
}

// paneTitle is "▸ target engine model … BADGE", the badge at the right edge.
func paneTitle(th *Theme, r *analysis.ReplicaReport, inner int, selected bool) string {
	glyph := "  "
	if selected {
		glyph = "▸ "
	}
	right := th.badge(r.State)
	if len(r.Warnings) > 0 {
		// The warnings themselves are in the detail view.
		right = th.warn.Render("WARN") + " " + right
	}
	if r.Fault != "" {
		right = th.alert.Render(r.Fault) + " " + right
	}
	if r.SourceStale {
		right = th.warn.Render("stale") + " " + right
	}
	if r.Late {
		right = th.warn.Render("late") + " " + right
	}
	rightW := lipgloss.Width(right)
	left := glyph + th.title.Render(r.Target)
	if n := instancesText(r); n != "" {
		left += " " + th.warn.Render(n)
	}
	if e := paneEngine(r); e != "" {
		left += " " + e
	}
	if r.Model != "" {
		left += " " + th.dim.Render(r.Model)
	}
	left = fitWidth(left, max(inner-rightW-1, 1))
	return left + " " + right
}

// paneFigures are the figure lines: gauges, rates and latencies; for a
// replica that is down, its error, then its last good figures, dated and faint.
func (g gridScreen) paneFigures(r *analysis.ReplicaReport, level paneLevel, inner int) []string {
	th := g.theme
	if r.State == analysis.StateDown {
		failing := th.warn.Render(downFor(r, g.report.Time, g.loc)+": ") + r.Error
		if level == levelCompact {
			return []string{failing}
		}
		if r.LastGood.IsZero() {
			return []string{failing, noGoodScrape, ""}
		}
		return []string{failing,
			th.dim.Render(lastSeen(r, g.report.Time, g.loc) + ":"),
			th.dim.Render(compactFigures(r, inner))}
	}
	if level == levelCompact {
		return []string{compactFigures(r, inner)}
	}
	preempt := fmtRate(r.PreemptionsPerSecond)
	run, wait, kv := loadFigures(r)
	gauges := fitSegments(inner, []string{run, wait, kv, "preempt/s " + preempt}, []string{run, wait, kv, "preempt " + preempt + "/s"})
	reqs, in, out := fmtRate(r.RequestsPerSecond)+" req/s", fmtRate(r.PromptTokensPerSecond), fmtRate(r.GenerationTokensPerSecond)
	if r.MaterialAborts() { // counted in req/s
		reqs += " " + th.warn.Render(r.AbortShare.Percent()+" abort")
	}
	rates := fitSegments(inner, []string{reqs, "tok/s in " + in + " out " + out}, []string{reqs, "in " + in + "/s", "out " + out + "/s"})
	ttft := "TTFT " + fmtQuantile(r.TTFT, p50) + "/" + fmtQuantile(r.TTFT, p99)
	itl := "ITL " + fmtQuantile(r.ITL, p50) + "/" + fmtQuantile(r.ITL, p99)
	lat := fitSegments(inner, []string{"p50/p99", ttft, itl}, []string{"p50/99", ttft, itl}, []string{ttft, itl})
	return []string{gauges, rates, lat}
}

// compactFigures is the one figure line of a compact pane.
func compactFigures(r *analysis.ReplicaReport, inner int) string {
	ttft := fmtQuantile(r.TTFT, p99)
	run, wait, kv := loadFigures(r)
	return fitSegments(inner, []string{run, wait, kv, "TTFT p99 " + ttft}, []string{run, wait, kv, "p99 " + ttft})
}

// loadFigures are a replica's running, waiting and KV figures.
func loadFigures(r *analysis.ReplicaReport) (run, wait, kv string) {
	return "run " + fmtCount(r.Running), "wait " + fmtCount(r.Waiting), "KV " + r.KVCacheUsage.Percent()
}

// noGoodScrape is said of a DOWN replica with no good scrape: not "never
// answered", since one that answers with an error status did answer.
const noGoodScrape = "no successful scrape yet"

// downFor says how long a replica has been down at now: "down for 1m41s
// since 14:47:07"; the age of its last good scrape when the start of the
// failures is not known; "error" when neither is.
func downFor(r *analysis.ReplicaReport, now time.Time, loc *time.Location) string {
	switch {
	case !r.DownSince.IsZero():
		return "down for " + fmtAge(now.Sub(r.DownSince)) + " since " + r.DownSince.In(loc).Format(human.Clock)
	case !r.LastGood.IsZero():
		return "down " + fmtAge(now.Sub(r.LastGood))
	}
	return "error"
}

// lastSeen dates a DOWN replica's figures: "last seen 14:02:11 (3m04s
// ago)", or noGoodScrape.
func lastSeen(r *analysis.ReplicaReport, now time.Time, loc *time.Location) string {
	if r.LastGood.IsZero() {
		return noGoodScrape
	}
	return fmt.Sprintf("last seen %s (%s ago)", r.LastGood.In(loc).Format(human.Clock), fmtAge(now.Sub(r.LastGood)))
}

// paneSparklines draw the sparks over the history, per to a line,
// each rows high: a tall screen gets taller sparklines, not blank rows.
func (g gridScreen) paneSparklines(r *analysis.ReplicaReport, inner, per, rows int) []string {
	per, rows = max(per, 1), max(rows, 1)
	slot := inner / per
	const labelW, valueW = 5, 7
	sparkW := max(slot-labelW-valueW-3, 1) // two blanks before the next cell
	pts := pointsUntil(g.history[r.Target], sparkW, g.report.Time)
	style, value := g.theme.state(r.State), g.theme.plain
	if r.State == analysis.StateDown { // old figures
		style, value = g.theme.dim, g.theme.dim
	}
	var lines []string
	cur := make([]strings.Builder, rows)
	for i, s := range sparks {
		series := make([]float64, len(pts))
		for j, p := range pts {
			series[j] = float64(s.get(p))
		}
		for k, spark := range sparkRows(series, sparkW, 0, s.hi, rows) {
			label, val := "", ""
			if k == rows-1 { // the name and the value beside the newest bar
				label, val = s.name, s.now(r)
			}
			cell := fmt.Sprintf("%-*s", labelW, label) + style.Render(spark) + value.Render(fmt.Sprintf(" %*s", valueW, val))
			cur[k].WriteString(fitWidth(cell, slot))
		}
		if (i+1)%per == 0 || i == len(sparks)-1 {
			for k := range cur {
				lines = append(lines, cur[k].String())
				cur[k].Reset()
			}
		}
	}
	return lines
}

// paneReason is the one line of evidence and first action.
func paneReason(th *Theme, r *analysis.ReplicaReport) string {
	reason := ""
	if len(r.Reasons) > 0 {
		reason = r.Reasons[0]
	}
	switch {
	case reason != "" && r.Action != "":
		return reason + th.action.Render(" → "+r.Action)
	case reason != "":
		return reason
	case r.Action != "":
		return th.action.Render("→ " + r.Action)
	case r.State == analysis.StateIdle:
		return th.dim.Render("no requests in the window")
	default:
		return th.dim.Render("no problem found")
	}
}

// instancesText is "8 instances" for a replica of several targets.
func instancesText(r *analysis.ReplicaReport) string {
	if r.Instances < 2 {
		return ""
	}
	return fmt.Sprintf("%d instances", r.Instances)
}

// noRowsText says why no replica is drawn, of total before the filter.
func noRowsText(total int, src *catalogue.SourceStatus) string {
	switch {
	case total > 0:
		return "no replica matches the filter (esc clears it)"
	case src.Failing():
		return "no replica to show: the source has given none (see above)"
	}
	return "no replica to show yet"
}
