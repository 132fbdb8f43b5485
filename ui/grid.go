package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/ring"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/vtop-dev/vtop/analysis"
)

// minPaneWidth is the narrowest pane: the figure lines fit in it.
const minPaneWidth = 38

// paneLevel is how much a pane shows. Levels drop content in a fixed
// priority so that more panes fit: sparklines first, then figure lines.
type paneLevel int

const (
	levelCompact paneLevel = iota // title, one figure line, reason
	levelNormal                   // title, three figure lines, reason
	levelFull                     // normal plus sparklines
)

// sparkNames label the sparklines in the order they are drawn.
var sparkNames = [...]string{"run", "wait", "KV", "TTFT", "gen"}

// gridLayout is how the grid body is divided.
type gridLayout struct {
	cols, paneW int
	level       paneLevel
	paneH       int // lines, borders included
	perPage     int // panes shown at once
	eventLines  int // lines left for the event log (0: none)
}

// gridScreen is the grid of replica panes, worst first, with the event log
// under them when there is room. Its layout is computed when its size or
// its panes change, not on every frame.
type gridScreen struct {
	theme *Theme
	loc   *time.Location
	hint  string // shown instead of an empty event log while nothing answers
	keys  listKeys

	width, height int
	layout        gridLayout

	report   analysis.Report
	panes    []*analysis.ReplicaReport
	history  map[string]*ring.Ring[analysis.Point]
	events   *eventLog
	selected string
	// top is the first pane of the page shown. Only the user's keys move
	// it: a re-sort moves replicas, never the page under the user's eyes.
	top int
}

func newGridScreen(theme *Theme, loc *time.Location, hint string) gridScreen {
	return gridScreen{theme: theme, loc: loc, hint: hint, keys: newListKeys()}
}

// setSize gives the grid the body of the frame.
func (g *gridScreen) setSize(w, h int) {
	g.width, g.height = w, h
	g.layout = layoutGrid(len(g.panes), w, h)
	g.alignTop()
}

// alignTop keeps the page on a page boundary inside the list, after a
// resize or a change of the fleet.
func (g *gridScreen) alignTop() {
	per := max(g.layout.perPage, 1)
	g.top = min(max(g.top, 0), max(len(g.panes)-1, 0))
	g.top -= g.top % per
}

// show gives the grid what to draw: the report shown, its panes in order
// and the history and events behind them.
func (g *gridScreen) show(r analysis.Report, panes []*analysis.ReplicaReport, history map[string]*ring.Ring[analysis.Point], events *eventLog) {
	g.report, g.panes, g.history, g.events = r, panes, history, events
	g.layout = layoutGrid(len(panes), g.width, g.height)
	g.alignTop()
}

// update moves the selection and returns it, and whether the key moved
// it; up and down move by a row of the grid, PgUp and PgDn by a page. The
// page shown follows the selection the user moves.
func (g *gridScreen) update(k tea.KeyMsg) (string, bool) {
	sel, moved := g.keys.move(g.panes, g.selected, g.layout.cols, g.layout.perPage, k)
	if moved {
		g.selected = sel
		g.top = indexOf(g.panes, sel)
		g.alignTop()
	}
	return sel, moved
}

// paneHeight is the height of a pane at a level, borders included.
func paneHeight(level paneLevel, inner int) int {
	switch level {
	case levelFull:
		return 2 + 1 + 3 + sparkLines(inner) + 1
	case levelNormal:
		return 2 + 1 + 3 + 1
	default:
		return 2 + 1 + 1 + 1
	}
}

// sparkPerLine is how many sparklines share a line in a pane this wide.
func sparkPerLine(inner int) int { return min(max(inner/minPaneWidth, 1), len(sparkNames)) }

func sparkLines(inner int) int {
	per := sparkPerLine(inner)
	return (len(sparkNames) + per - 1) / per
}

// gridLayout picks the richest level at which every pane fits; if none
// layoutGrid divides w × h among n panes: the richest level at which every
// pane fits; if none does, the most compact level with as many panes as fit
// and a hint line. What is left below the panes goes to the event log.
func layoutGrid(panes, w, h int) gridLayout {
	n := max(panes, 1)
	cols := min(n, max(w/minPaneWidth, 1))
	l := gridLayout{cols: cols, paneW: w / cols}
	rows := (n + cols - 1) / cols
	for _, level := range []paneLevel{levelFull, levelNormal, levelCompact} {
		l.level, l.paneH = level, paneHeight(level, l.paneW-2)
		if rows*l.paneH <= h {
			l.perPage = n
			if left := h - rows*l.paneH; left >= 4 {
				l.eventLines = min(left, 12)
			}
			return l
		}
	}
	fitRows := max((h-1)/l.paneH, 1)
	l.perPage = fitRows * cols
	return l
}

// view draws the panes, worst first, the "+N more" hint and the event log
// when there is room for it.
func (g gridScreen) view() []string {
	if len(g.panes) == 0 {
		return []string{"", center("no replica matches the filter (esc clears it)", g.width)}
	}
	l := g.layout
	sel := indexOf(g.panes, g.selected)
	start := g.top
	end := min(start+l.perPage, len(g.panes))
	var lines []string
	for rowStart := start; rowStart < end; rowStart += l.cols {
		panes := make([]string, 0, l.cols)
		for i := rowStart; i < min(rowStart+l.cols, end); i++ {
			panes = append(panes, g.renderPane(g.panes[i], l.paneW, l.level, i == sel))
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

// pageHint is the line under a grid that does not show every pane: what
// is above and below the page, with the keys that show it, and where the
// selection went when a re-sort took it off the page.
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
	lines := []string{th.headerRow.Render("events") + th.dim.Render("  (e: all)")}
	evs := g.events.newest(h-1, g.report.Time)
	if len(evs) == 0 {
		if g.hint != "" && g.report.Fleet.Replicas > 0 && g.report.Fleet.Up == 0 {
			return append(lines, th.warn.Render(g.hint))
		}
		return append(lines, th.dim.Render("no state changes yet"))
	}
	for _, e := range evs {
		lines = append(lines, eventLine(th, g.loc, e))
	}
	return lines
}

// renderPane draws one replica: a bordered box whose lines are cut to the
// pane's width first, so lipgloss never wraps them.
func (g gridScreen) renderPane(r *analysis.ReplicaReport, w int, level paneLevel, selected bool) string {
	th := g.theme
	inner := max(w-2, 1)
	lines := []string{paneTitle(th, r, inner, selected)}
	lines = append(lines, g.paneFigures(r, level)...)
	if level == levelFull {
		lines = append(lines, g.paneSparklines(r, inner)...)
	}
	lines = append(lines, paneReason(th, r))
	return th.pane(r.State, selected).Render(strings.Join(fitLines(lines, inner), "\n"))
}

// paneTitle is "▸ target model … BADGE", the badge kept at the right edge.
func paneTitle(th *Theme, r *analysis.ReplicaReport, inner int, selected bool) string {
	glyph := "  "
	if selected {
		glyph = "▸ "
	}
	right := th.badge(r.State)
	if r.Restarted {
		right = th.warn.Render("RESTARTED") + " " + right
	}
	if len(r.Warnings) > 0 {
		// The warnings themselves are in the detail view.
		right = th.warn.Render("WARN") + " " + right
	}
	rightW := lipgloss.Width(right)
	left := glyph + th.title.Render(r.Target)
	if r.Model != "" {
		left += " " + th.dim.Render(r.Model)
	}
	left = fitWidth(left, max(inner-rightW-1, 1))
	return left + " " + right
}

// paneFigures are the figure lines: gauges, rates and latencies; or, for a
// replica that is down, its error, then the figures of its last good
// scrape, dated and faint: they are not current.
func (g gridScreen) paneFigures(r *analysis.ReplicaReport, level paneLevel) []string {
	th := g.theme
	if r.State == analysis.StateDown {
		if level == levelCompact {
			return []string{th.warn.Render("down "+downFor(r, g.report.Time)+": ") + r.Error}
		}
		if r.LastGood.IsZero() {
			return []string{th.warn.Render("error: ") + r.Error, "no good scrape yet", ""}
		}
		return []string{th.warn.Render("error: ") + r.Error,
			th.dim.Render(lastSeen(r, g.report.Time, g.loc) + ":"),
			th.dim.Render(compactFigures(r))}
	}
	if level == levelCompact {
		return []string{compactFigures(r)}
	}
	gauges := fmt.Sprintf("run %s  wait %s  KV %s  preempt/s %s",
		fmtCount(r.Running), fmtCount(r.Waiting), fmtPct(r.KVCacheUsage), fmtRate(r.PreemptionsPerSecond))
	rates := fmt.Sprintf("%s req/s  tok/s in %s out %s",
		fmtRate(r.RequestsPerSecond), fmtRate(r.PromptTokensPerSecond), fmtRate(r.GenerationTokensPerSecond))
	lat := fmt.Sprintf("p50/p99 TTFT %s/%s  ITL %s/%s",
		fmtSeconds(r.TTFT.P50), fmtSeconds(r.TTFT.P99), fmtSeconds(r.ITL.P50), fmtSeconds(r.ITL.P99))
	return []string{gauges, rates, lat}
}

// compactFigures is the one figure line of a compact pane.
func compactFigures(r *analysis.ReplicaReport) string {
	return fmt.Sprintf("run %s wait %s KV %s TTFT p99 %s",
		fmtCount(r.Running), fmtCount(r.Waiting), fmtPct(r.KVCacheUsage), fmtSeconds(r.TTFT.P99))
}

// downFor says how long a replica has been down at now: the age of its
// last good scrape, or "since start" when it never answered.
func downFor(r *analysis.ReplicaReport, now time.Time) string {
	if r.LastGood.IsZero() {
		return "since start"
	}
	return fmtAge(now.Sub(r.LastGood))
}

// lastSeen dates the figures of a replica that is down: "last seen
// 14:02:11 (3m04s ago)", or "no good scrape yet".
func lastSeen(r *analysis.ReplicaReport, now time.Time, loc *time.Location) string {
	if r.LastGood.IsZero() {
		return "no good scrape yet"
	}
	return fmt.Sprintf("last seen %s (%s ago)", r.LastGood.In(loc).Format("15:04:05"), fmtAge(now.Sub(r.LastGood)))
}

// paneSparklines draw running, waiting, KV %, TTFT p99 and generation
// tokens/s over the history, several to a line in wide panes.
func (g gridScreen) paneSparklines(r *analysis.ReplicaReport, inner int) []string {
	per := sparkPerLine(inner)
	slot := inner / per
	const labelW, valueW = 5, 7
	sparkW := max(slot-labelW-valueW-3, 1) // two blanks before the next cell
	pts := pointsUntil(g.history[r.Target], sparkW, g.report.Time)
	series := [len(sparkNames)][]float64{}
	for i := range series {
		series[i] = make([]float64, len(pts))
	}
	for j, p := range pts {
		series[0][j] = float64(p.Running)
		series[1][j] = float64(p.Waiting)
		series[2][j] = float64(p.KVCacheUsage)
		series[3][j] = float64(p.TTFTP99)
		series[4][j] = float64(p.GenerationTokensPerSecond)
	}
	now := [len(sparkNames)]string{
		fmtCount(r.Running), fmtCount(r.Waiting), fmtPct(r.KVCacheUsage),
		fmtSeconds(r.TTFT.P99), fmtRate(r.GenerationTokensPerSecond),
	}
	style, value := g.theme.state(r.State), g.theme.plain
	if r.State == analysis.StateDown {
		// The figures of a replica that is down are old: faint, under
		// the "last seen" line of the pane.
		style, value = g.theme.dim, g.theme.dim
	}
	var lines []string
	var cur strings.Builder
	for i := range sparkNames {
		hi := 0.0
		if i == 2 {
			hi = 1 // KV usage is a fraction: a fixed scale makes 100% look full
		}
		cell := fmt.Sprintf("%-*s", labelW, sparkNames[i]) +
			style.Render(sparkline(series[i], sparkW, 0, hi)) +
			value.Render(fmt.Sprintf(" %*s", valueW, now[i]))
		cur.WriteString(fitWidth(cell, slot))
		if (i+1)%per == 0 || i == len(sparkNames)-1 {
			lines = append(lines, cur.String())
			cur.Reset()
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
