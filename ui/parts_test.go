package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

func TestFormatters(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"count n/a", fmtCount(nan), "n/a"},
		{"count zero is zero", fmtCount(0), "0"},
		{"count", fmtCount(256), "256"},
		{"count large", fmtCount(430000), "430k"},
		{"rate n/a", fmtRate(nan), "n/a"},
		{"rate small", fmtRate(0.4), "0.40"},
		{"rate", fmtRate(11.84), "11.8"},
		{"rate k", fmtRate(1800), "1.8k"},
		{"rate M", fmtRate(2.5e6), "2.5M"},
		{"rate rounding to 1", fmtRate(0.996), "1.0"},
		{"rate rounding to 100", fmtRate(99.96), "100"},
		{"rate rounding to 1k", fmtRate(999.6), "1.0k"},
		{"rate rounding to 10k", fmtRate(9960), "10k"},
		{"rate rounding to 1M", fmtRate(999_600), "1.0M"},
		{"rate just below 1", fmtRate(0.994), "0.99"},
		{"seconds n/a", fmtSeconds(nan), "n/a"},
		{"seconds µs", fmtSeconds(0.00042), "420µs"},
		{"seconds ms", fmtSeconds(0.027), "27ms"},
		{"seconds", fmtSeconds(2.31), "2.3s"},
		{"seconds long", fmtSeconds(312), "312s"},
		{"pct n/a", nan.Percent(), "n/a"},
		{"pct", analysis.Num(0.97).Percent(), "97%"},
		{"pct small", analysis.Num(0.08).Percent(), "8%"},
		{"pct small, a decimal", analysis.Num(0.016).Percent(), "1.6%"},
		{"bytes", fmtBytes(3.2 * (1 << 30)), "3.2GiB"},
		{"age s", fmtAge(12 * time.Second), "12s"},
		{"age m", fmtAge(2*time.Minute + 4*time.Second), "2m04s"},
		{"age h", fmtAge(2*time.Hour + 3*time.Minute), "2h03m"},
		{"duration", fmtDuration(30 * time.Second), "30s"},
		{"duration m", fmtDuration(5 * time.Minute), "5m"},
		{"inf is n/a", fmtRate(analysis.Num(math.Inf(1))), "n/a"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		name   string
		vals   []float64
		width  int
		lo, hi float64
		want   string
	}{
		{"scaled to max", []float64{0, 1, 2, 3, 4, 5, 6, 7}, 8, 0, 0, "▁▂▃▄▅▆▇█"},
		{"right aligned", []float64{7, 7}, 4, 0, 0, "  ██"},
		{"newest kept", []float64{0, 0, 0, 7}, 2, 0, 0, "▁█"},
		{"nan is a gap not zero", []float64{0, math.NaN(), 7}, 3, 0, 0, "▁ █"},
		{"fixed scale", []float64{0.5, 1}, 2, 0, 1, "▅█"},
		{"all zero is flat", []float64{0, 0}, 2, 0, 0, "▁▁"},
		{"clamped above", []float64{2}, 1, 0, 1, "█"},
		{"zero width", []float64{1}, 0, 0, 0, ""},
	}
	for _, tt := range tests {
		if got := sparkline(tt.vals, tt.width, tt.lo, tt.hi); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPointsUntil(t *testing.T) {
	h := newPointHistory(3)
	for i := 0; i < 5; i++ {
		h.Push(analysis.Point{Time: t0.Add(time.Duration(i) * time.Second), Running: float32(i)})
	}
	running := func(pts []analysis.Point) []float32 {
		out := []float32{}
		for _, p := range pts {
			out = append(out, p.Running)
		}
		return out
	}
	tests := []struct {
		name  string
		h     *pointHistory
		n     int
		until time.Time
		want  []float32
	}{
		{"bounded, oldest first", h, 10, t0.Add(time.Hour), []float32{2, 3, 4}},
		{"paused: nothing after until", h, 10, t0.Add(3 * time.Second), []float32{2, 3}},
		{"the newest n", h, 2, t0.Add(time.Hour), []float32{3, 4}},
		{"no history", nil, 10, t0, []float32{}},
	}
	for _, tt := range tests {
		if got := running(pointsUntil(tt.h, tt.n, tt.until)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEventLogKeepsNewest(t *testing.T) {
	l := &eventLog{limit: 3}
	for i := 0; i < 5; i++ {
		l.add([]analysis.Event{{Time: t0.Add(time.Duration(i) * time.Second), Text: fmt.Sprint(i)}}, t0.Add(time.Duration(i)*time.Second))
	}
	got := l.newest(10, t0.Add(time.Hour))
	if len(got) != 3 || got[0].Text != "4" || got[2].Text != "2" {
		t.Fatalf("newest = %v, want 4, 3, 2", got)
	}
}

func TestModelHistoryIsBoundedAndForgetsLeavers(t *testing.T) {
	opts := testOptions()
	opts.History = 5
	m := sized(New(opts), 120, 40)
	for i := 0; i < 12; i++ {
		m = send(m, ReportMsg{Report: report(t0.Add(time.Duration(i)*time.Second), replica("a", analysis.StateHealthy), replica("b", analysis.StateHealthy))})
	}
	if n := m.history["a"].Len(); n != 5 {
		t.Fatalf("history of a holds %d points, want 5", n)
	}
	m = send(m, ReportMsg{Report: report(t0.Add(time.Minute), replica("a", analysis.StateHealthy))})
	if _, ok := m.history["b"]; ok {
		t.Fatal("history of b kept after b left the fleet")
	}
}

func TestTableSortUnknownLast(t *testing.T) {
	a, b, c := replica("a", analysis.StateHealthy), replica("b", analysis.StateHealthy), replica("c", analysis.StateHealthy)
	a.TTFT.P99, b.TTFT.P99, c.TTFT.P99 = 0.5, nan, 2
	ttft := -1
	for i, col := range tableColumns {
		if col.title == "TTFT p99" {
			ttft = i
		}
	}
	for _, desc := range []bool{false, true} {
		rows := []*analysis.ReplicaReport{&a, &b, &c}
		sortRows(rows, ttft, desc)
		got := rows[0].Target + rows[1].Target + rows[2].Target
		want := map[bool]string{false: "acb", true: "cab"}[desc]
		if got != want {
			t.Errorf("desc=%v: order %s, want %s (n/a last both ways)", desc, got, want)
		}
	}
}

func TestSortKeyCyclesAndShowsArrow(t *testing.T) {
	m := press(send(newModel(200, 60), ReportMsg{Report: allStates(t0)}), "t", "s")
	if m.table.sortCol != colState+1 {
		t.Fatalf("sort column %d after s, want %d", m.table.sortCol, colState+1)
	}
	if !strings.Contains(m.View(), "run▼") {
		t.Error("the sorted column has no ▼")
	}
	m = press(m, "I")
	if !strings.Contains(m.View(), "run▲") {
		t.Error("I did not reverse the sort")
	}
	if m.table.rows[0].Target != "gpu-b:8000" { // idle, running 0
		t.Errorf("ascending by running: first row %s, want gpu-b (0 running)", m.table.rows[0].Target)
	}
}

// TestEveryFrameFitsItsTerminal resizes through many sizes on every screen
// and checks each frame is exactly the terminal's size.
func TestEveryFrameFitsItsTerminal(t *testing.T) {
	base := withHistory(newModel(80, 24), 30, rampingFull)
	base = send(base, ReportMsg{Report: allStates(t0.Add(time.Second))})
	screens := map[string][]string{"grid": nil, "detail": {"enter"}, "table": {"t"}, "events": {"e"}, "help": {"?"}, "filter": {"t", "/", "x"}}
	for name, keys := range screens {
		m := press(base, keys...)
		for _, w := range []int{20, 59, 60, 61, 79, 80, 81, 99, 100, 133, 200, 257} {
			for _, h := range []int{5, 15, 16, 17, 24, 31, 40, 60} {
				m = sized(m, w, h)
				f := m.View()
				lines := strings.Split(f, "\n")
				if len(lines) != h {
					t.Fatalf("%s at %dx%d: %d lines", name, w, h, len(lines))
				}
				for i, l := range lines {
					if ansi.StringWidth(l) != w {
						t.Fatalf("%s at %dx%d: line %d is %d wide", name, w, h, i, ansi.StringWidth(l))
					}
				}
			}
		}
	}
}

func TestUnknownIsNeverZero(t *testing.T) {
	r := replica("gpu-x:8000", analysis.StateHealthy)
	r.Figures = naFigures()
	r.Point = pointOf(r, t0)
	f := send(newModel(120, 40), ReportMsg{Report: report(t0, r)}).View()
	for _, want := range []string{"run n/a", "wait n/a", "KV n/a", "n/a req/s"} {
		if !strings.Contains(f, want) {
			t.Errorf("frame lacks %q:\n%s", want, f)
		}
	}
	if strings.Contains(f, "run 0") || strings.Contains(f, "KV 0%") {
		t.Errorf("an unknown figure was drawn as 0:\n%s", f)
	}
}

// paneLines returns the inner lines of the pane whose title holds target:
// the text between its borders, from its title to its last line.
func paneLines(t *testing.T, frame, target string, paneW int) []string {
	t.Helper()
	lines := strings.Split(ansi.Strip(frame), "\n")
	for i, l := range lines {
		col := strings.Index(l, target)
		if col < 0 || !strings.Contains(l, "▸ "+target) {
			continue
		}
		// The pane starts at the last border before the title.
		left := len([]rune(l[:col])) - 2 - 1
		var out []string
		for _, pl := range lines[i:] {
			r := []rune(pl)
			if r[left] != '┃' && r[left] != '│' {
				break
			}
			out = append(out, string(r[left+1:left+paneW-1]))
		}
		return out
	}
	t.Fatalf("no selected pane titled %s in the frame:\n%s", target, frame)
	return nil
}

func TestDownPaneShowsErrorAndAge(t *testing.T) {
	down := replica("gpu-g:8000", analysis.StateDown)
	tests := []struct {
		name string
		w, h int
		want func(inner int) []string // lines of the DOWN pane, in order
	}{
		{"compact at 80x24", 80, 24, func(inner int) []string {
			return []string{ansi.Truncate("down for 2m03s since 13:59:02: "+down.Error, inner, "…")}
		}},
		{"full at 200x60", 200, 60, func(inner int) []string {
			return []string{ansi.Truncate("down for 2m03s since 13:59:02: "+down.Error, inner, "…"), "last seen 13:59:01 (2m04s ago):"}
		}},
	}
	for _, tt := range tests {
		m := send(newModel(tt.w, tt.h), ReportMsg{Report: allStates(t0)})
		paneW := m.grid.layout.width(0)
		pane := paneLines(t, m.View(), "gpu-g:8000", paneW)
		if len(pane) < 1+len(tt.want(paneW-2)) {
			t.Fatalf("%s: the DOWN pane has %d lines: %q", tt.name, len(pane), pane)
		}
		for i, want := range tt.want(paneW - 2) {
			if got := strings.TrimRight(pane[1+i], " "); got != strings.TrimRight(want, " ") {
				t.Errorf("%s: DOWN pane line %d = %q, want %q", tt.name, 1+i, got, want)
			}
		}
	}
}

// A target that never answered is DOWN with no second scrape; it has its
// own badge and must not keep the whole header "warming up".
func TestDownReplicaDoesNotKeepFleetWarmingUp(t *testing.T) {
	never := replica("gpu-x:8000", analysis.StateDown)
	never.WarmingUp, never.Figures, never.LastGood = true, naFigures(), time.Time{}
	settled := replica("gpu-a:8000", analysis.StateHealthy)
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, never, settled)})
	if strings.Contains(m.View(), "warming up") {
		t.Errorf("header says warming up with one settled replica and one down:\n%s", m.View())
	}
	warming := settled
	warming.WarmingUp = true
	m = send(newModel(120, 40), ReportMsg{Report: report(t0, never, warming)})
	if !strings.Contains(m.View(), "warming up") {
		t.Errorf("header does not say warming up while an answering replica lacks its second scrape:\n%s", m.View())
	}
}

// A scrape warning (a cardinality cap, say) is flagged on the pane and
// spelled out in the detail view.
func TestWarningsAreVisible(t *testing.T) {
	r := replica("gpu-a:8000", analysis.StateHealthy)
	r.Warnings = []string{"more than 2000 series of the families vtop reads; the rest were ignored"}
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, r)})
	if !strings.Contains(m.View(), "WARN") {
		t.Errorf("grid does not flag the warning:\n%s", m.View())
	}
	m = press(m, "enter")
	if !strings.Contains(m.View(), "more than 2000 series") {
		t.Errorf("detail view does not show the warning:\n%s", m.View())
	}
}

// The hint replaces the empty event log while no replica has answered, and
// goes once one does.
func TestHintWhileNothingAnswers(t *testing.T) {
	opts := testOptions()
	opts.Hint = "nothing answers at http://localhost:8000/metrics"
	m := sized(New(opts), 80, 24)
	down := replica("localhost:8000", analysis.StateDown)
	m = send(m, ReportMsg{Report: report(t0, down)})
	if !strings.Contains(m.View(), opts.Hint) {
		t.Errorf("hint not shown while every replica is down:\n%s", m.View())
	}
	m = send(m, ReportMsg{Report: report(t0.Add(time.Second), replica("localhost:8000", analysis.StateHealthy))})
	if strings.Contains(m.View(), opts.Hint) {
		t.Errorf("hint still shown after the replica answered:\n%s", m.View())
	}
}

// History preloaded before or after the first report ends up before the
// live points, in time order, without duplicates and within the bound.
func TestHistoryPreload(t *testing.T) {
	past := func(from, n int) []analysis.Point {
		var pts []analysis.Point
		for i := range n {
			pts = append(pts, analysis.Point{Time: t0.Add(time.Duration(from+i) * time.Second), Running: float32(from + i)})
		}
		return pts
	}
	live := ReportMsg{Report: report(t0, replica("a", analysis.StateHealthy))}
	tests := []struct {
		name string
		msgs []tea.Msg
		want []float32 // Running of each point, oldest first (the live point of a healthy replica runs 48)
	}{
		{"before the report", []tea.Msg{HistoryMsg{Points: map[string][]analysis.Point{"a": past(-3, 3)}}, live}, []float32{-3, -2, -1, 48}},
		{"after the report", []tea.Msg{live, HistoryMsg{Points: map[string][]analysis.Point{"a": past(-3, 3)}}}, []float32{-3, -2, -1, 48}},
		{"overlapping the live point", []tea.Msg{live, HistoryMsg{Points: map[string][]analysis.Point{"a": past(-2, 4)}}}, []float32{-2, -1, 48}},
		{"over the bound", []tea.Msg{HistoryMsg{Points: map[string][]analysis.Point{"a": past(-9, 9)}}, live}, []float32{-4, -3, -2, -1, 48}},
	}
	for _, tt := range tests {
		opts := testOptions()
		opts.History = 5
		m := send(sized(New(opts), 120, 40), tt.msgs...)
		pts := pointsUntil(m.history["a"], 100, t0.Add(time.Hour))
		var got []float32
		for _, p := range pts {
			got = append(got, p.Running)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: running %v, want %v", tt.name, got, tt.want)
		}
	}
}
