package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
)

// View draws the frame, exactly width × height, from the model alone.
func (m Model) View() string {
	w, h := m.width, m.height
	if m.tooSmall() {
		return m.tooSmallView()
	}
	// fitBlock fits every line to the width.
	bodyH := max(h-len(m.header)-1, 0)
	lines := make([]string, 0, h)
	lines = append(lines, m.header...)
	lines = append(lines, fitHeight(m.body(bodyH), bodyH)...)
	lines = append(lines, m.footerLine())
	frame := fitBlock(strings.Join(lines, "\n"), w, h)
	if m.bell != 0 {
		// BEL takes no cell; the terminal rings once, when the renderer
		// writes this first line, which the next frames change.
		frame = "\a" + frame
	}
	return frame
}

// body is the view of the screen shown, laid out for the body's height.
func (m Model) body(h int) []string {
	switch {
	case m.showHelp:
		return m.help.view()
	case !m.hasReport:
		return waitingBody(m.width, h)
	case m.screen == screenDetail:
		return m.detail.view()
	case m.screen == screenTable:
		return m.table.view()
	case m.screen == screenEvents:
		return m.log.view()
	case m.screen == screenAdvice:
		return m.advice.view()
	default:
		strip := m.strip.view()
		return append(strip[:min(len(strip), m.stripH)], m.grid.view()...)
	}
}

// tooSmallView says what size is needed, centred; q still quits.
func (m Model) tooSmallView() string {
	w, h := max(m.width, 1), max(m.height, 1)
	msg := []string{
		"terminal too small:",
		fmt.Sprintf("need %d×%d, have %d×%d", MinWidth, MinHeight, m.width, m.height),
		"q to quit",
	}
	lines := make([]string, h)
	top := max((h-len(msg))/2, 0)
	for i, l := range msg {
		if top+i < h {
			lines[top+i] = center(l, w)
		}
	}
	return fitBlock(strings.Join(lines, "\n"), w, h)
}

// waitingBody is the body of the first frame, before any report.
func waitingBody(w, h int) []string {
	lines := make([]string, h)
	if h > 0 {
		lines[h/2] = center("waiting for the first scrape…", w)
	}
	return lines
}

// headerLines are the title with its badges, then the fleet totals and the
// state counts packed into the width.
func (m Model) headerLines(w int) []string {
	lines := m.withFound(packSegments(m.titleSegments(), w, "  "), w)
	lines = append(lines, m.replayLines(w)...)
	if !m.hasReport {
		return lines
	}
	lines = append(lines, m.sourceLines(w)...)
	if round := m.shown.Fleet.LateRound; round != "" {
		// Most targets late at once: vtop's side, said before the counts.
		lines = append(lines, wrapIn(m.theme.alert, round, w, 2)...)
	}
	lines = append(lines, packSegments(m.fleetSegments(), w, "  ")...)
	lines = append(lines, m.groupLines()...)
	if imb := m.shown.Fleet.Imbalance; len(imb) > 0 {
		lines = append(lines, m.imbalanceLine(imb, w))
	}
	return append(lines, m.adviceLines(w)...)
}

// titleSegments are the header's title: vtop's version, the window, the
// interval and the report's time, with the badges of what holds now.
func (m Model) titleSegments() []string {
	th := m.theme
	title := []string{th.title.Render("vtop " + m.opts.Version)}
	title = append(title, "window "+fmtDuration(m.window)+m.coverage(), "every "+fmtDuration(m.opts.Interval))
	if m.hasReport {
		title = append(title, m.shown.Time.In(m.opts.Location).Format(human.Clock))
	}
	if m.paused {
		title = append(title, th.alert.Render(" PAUSED "))
	}
	if m.opts.Insecure {
		title = append(title, th.downBadge.Render(" INSECURE TLS "))
	}
	if m.opts.Demo {
		title = append(title, th.warn.Render("DEMO"))
	}
	if m.warmingUp() {
		title = append(title, th.warn.Render("warming up: rates after the 2nd scrape"))
	}
	if v := m.filter.Value(); v != "" && !m.filtering {
		title = append(title, "filter: "+v)
	}
	return append(title, m.recordingBadge()...)
}

// withFound adds what discovery found to the title's lines: on the last
// one when it fits, else wrapped on at most two lines of its own.
func (m Model) withFound(lines []string, w int) []string {
	found := m.opts.Found
	if found == "" {
		return lines
	}
	if ansi.StringWidth(lines[len(lines)-1]+"  "+found) <= w {
		lines[len(lines)-1] += "  " + m.theme.dim.Render(found)
		return lines
	}
	return append(lines, wrapIn(m.theme.dim, found, w, 2)...)
}

// imbalanceLine is the header's line of the first imbalance, with how
// many other replicas the list names.
func (m Model) imbalanceLine(imb []analysis.Imbalance, w int) string {
	th := m.theme
	line := th.warn.Render("imbalance: ") + imb[0].Text
	// A replica far from the median in several figures is one replica.
	seen := map[string]bool{}
	for _, im := range imb {
		seen[im.Target] = true
	}
	more := len(seen) - 1
	if more == 0 {
		return line
	}
	// The count is said whole, ahead of the text when the line would be
	// cut: not "(+49 mor…" at its end.
	suffix := fmt.Sprintf(" (+%d more %s)", more, plural(more, "replica"))
	if ansi.StringWidth(line+suffix) <= w {
		return line + th.dim.Render(suffix)
	}
	return th.warn.Render("imbalance") + th.dim.Render(fmt.Sprintf(" (+%d more)", more)) + th.warn.Render(": ") + imb[0].Text
}

// pathWords say which path a store's source read (catalogue.SourceStatus.Path).
var pathWords = map[string]string{"rules": ", via vtop's rules", "raw": ", via raw series"}

// sourceLines name a source that reads the whole fleet and, when it
// fails, the age of the data still drawn: the replicas' last verdicts,
// marked stale, must not pass for live ones. The lines wrap, not cut.
func (m Model) sourceLines(w int) []string {
	src := m.shown.Source
	if src == nil {
		return nil
	}
	if !src.Failing() {
		line := "source " + src.Name
		if store := src.StoreLabel(); store != "" {
			line += ", answered by " + store
		}
		return []string{line + pathWords[src.Path]}
	}
	age := "no data yet"
	if !src.LastGood.IsZero() {
		age = "data " + fmtDuration(time.Duration(src.DataAgeSeconds*float64(time.Second)).Round(time.Second)) + " old"
	}
	when := "failing since " + src.Since.In(m.opts.Location).Format(human.Clock)
	if !src.LastGood.IsZero() {
		when += ", verdicts as of " + src.LastGood.In(m.opts.Location).Format(human.Clock)
	}
	return wrapIn(m.theme.alert, src.Name+": "+src.Problem+"; "+age+" ("+when+")", w, 3)
}

// coverage is " (1m40s so far)" while the readings reach back less than
// the window (after ], or after start): the figures are over the time
// covered. It is the time the fullest replica's good scrapes span, not
// their count: on a loaded host fewer scrapes fit in the window.
func (m Model) coverage() string {
	if !m.hasReport || m.opts.Interval <= 0 || m.shown.Source != nil {
		// A store (Prometheus) has the whole window at once.
		return ""
	}
	most, covered := 0, time.Duration(0)
	for i := range m.shown.Replicas {
		r := &m.shown.Replicas[i]
		most = max(most, r.Samples)
		covered = max(covered, time.Duration(r.CoveredSeconds*float64(time.Second)))
	}
	// One interval of slack: where the scrapes fall moves the count by one.
	if most < 2 || covered+m.opts.Interval >= m.window {
		return ""
	}
	return " (" + fmtAge(covered) + " so far)"
}

// warmingUp reports whether any replica that answers still lacks its
// second scrape; a down one must not keep the fleet "warming up".
func (m Model) warmingUp() bool {
	for i := range m.shown.Replicas {
		if r := &m.shown.Replicas[i]; r.WarmingUp && r.State != analysis.StateDown {
			return true
		}
	}
	return false
}

// fleetSegments are the totals and the state counts, worst state first.
func (m Model) fleetSegments() []string {
	th := m.theme
	f := m.shown.Fleet
	n := len(m.shown.Replicas)
	var counts [len(stateWords)]int
	instances := 0 // the scrape targets the replicas stand for (--group-by)
	for i := range m.shown.Replicas {
		r := &m.shown.Replicas[i]
		instances += max(r.Instances, 1)
		if int(r.State) < len(counts) {
			counts[r.State]++
		}
	}
	down := counts[analysis.StateDown]
	segs := []string{fmt.Sprintf("up %d/%d", n-down, n)}
	if instances > n {
		segs[0] += fmt.Sprintf(" (%d instances)", instances)
	}
	segs = append(segs,
		fmtRate(f.RequestsPerSecond)+" req/s",
		"prompt "+fmtRate(f.PromptTokensPerSecond)+" tok/s",
		"gen "+fmtRate(f.GenerationTokensPerSecond)+" tok/s",
		"running "+fmtCount(f.Running),
		"waiting "+fmtCount(f.Waiting),
		"worst TTFT p99 "+m.worstTTFT(),
		"success "+f.SuccessRate.Percent(),
	)
	for s := len(counts) - 1; s >= 0; s-- {
		if counts[s] > 0 {
			segs = append(segs, fmt.Sprintf("%s %d", th.badge(analysis.State(s)), counts[s]))
		}
	}
	if f.Restarted > 0 {
		segs = append(segs, th.warn.Render(fmt.Sprintf("restarted %d", f.Restarted)))
	}
	if f.Late > 0 { // counted up at their last figures: the panes say why
		segs = append(segs, th.warn.Render(fmt.Sprintf("late %d", f.Late)))
	}
	if worst := m.worstOf(nil); worst != nil {
		segs = append(segs, "worst "+th.title.Render(worst.Target)+" "+th.badge(worst.State))
	}
	return segs
}

// worstTTFT is the fleet's worst TTFT p99, drawn as the bucket of the
// replica it is read from allows (">80s").
func (m Model) worstTTFT() string {
	worst := m.shown.Fleet.WorstTTFTP99
	for i := range m.shown.Replicas {
		if r := &m.shown.Replicas[i]; r.TTFT.P99 == worst {
			return fmtQuantile(r.TTFT, p99)
		}
	}
	return fmtSeconds(worst)
}

// worstOf is the worst replica of the fleet among targets (all when nil),
// filter or not, in the grid's order; nil when there is none.
func (m Model) worstOf(targets []string) *analysis.ReplicaReport {
	var in map[string]bool // a set: a group of a large fleet is read on every layout
	if targets != nil {
		in = make(map[string]bool, len(targets))
		for _, t := range targets {
			in[t] = true
		}
	}
	var worst *analysis.ReplicaReport
	for i := range m.shown.Replicas {
		r := &m.shown.Replicas[i]
		if (in == nil || in[r.Target]) && (worst == nil || analysis.CompareSeverity(r, worst) < 0) {
			worst = r
		}
	}
	return worst
}

// footerLine is the filter input and its keys while it is open, else the
// screen's keys.
func (m Model) footerLine() string {
	if m.filtering {
		return m.filter.View() + m.theme.dim.Render("  "+inlineHelp(m.fkeys.Keep, m.fkeys.Clear))
	}
	return m.footer.ShortHelpView(m.withReplayKeys(m.footerKeys()))
}

// footerKeys are the keys of the screen shown, most needed first: the
// footer shows what fits.
func (m Model) footerKeys() []key.Binding {
	k, l, s := m.keys, m.grid.keys, m.table.sortKeys
	// Every screen that scrolls or pages says so in the same words.
	scroll, page := short(m.help.keys.Down, "↑/↓", "scroll"), short(l.PageDown, "pgdn", "page")
	window := short(k.Longer, "[ ]", "window")
	switch {
	case m.showHelp && m.help.scrolls():
		return []key.Binding{k.Help, k.Quit, scroll, page}
	case m.showHelp:
		return []key.Binding{k.Help, k.Quit}
	case m.screen == screenDetail:
		return []key.Binding{k.Help, k.Quit, k.Back, scroll, page, k.Pause, window}
	case m.screen == screenTable:
		return []key.Binding{k.Help, k.Quit, k.Detail, short(s.Sort, "s/S", "sort"), short(s.Reverse, "I", "reverse"),
			k.Filter, k.Back, page, k.Pause, k.Events, window, k.ScrapeNow}
	case m.screen == screenEvents:
		return []key.Binding{k.Help, k.Quit, k.Back, k.Table, k.Pause}
	case m.screen == screenAdvice:
		return []key.Binding{k.Help, k.Quit, k.Back, scroll, page, k.Pause}
	}
	return []key.Binding{k.Help, k.Quit, k.Detail, k.Table, page, k.Advice, k.Filter, k.Events, k.Pause, window, k.ScrapeNow}
}

// short is a binding with a shorter help, for the footer.
func short(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// inlineHelp is "enter keep · esc clear": bindings in a line of text.
func inlineHelp(bindings ...key.Binding) string {
	parts := make([]string, len(bindings))
	for i, b := range bindings {
		parts[i] = b.Help().Key + " " + b.Help().Desc
	}
	return strings.Join(parts, " · ")
}
