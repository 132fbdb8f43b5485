package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/vtop-dev/vtop/analysis"
)

// isQuit reports whether a command quits the program. Only commands that
// return at once are run: the ui's own commands never block.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func updateKey(m Model, k string) (Model, tea.Cmd) {
	next, cmd := m.Update(keyMsg(k))
	return next.(Model), cmd
}

func TestEscNeverQuits(t *testing.T) {
	base := withHistory(newModel(120, 40), 3, func(_ int, at time.Time) analysis.Report { return allStates(at) })
	for _, path := range [][]string{
		{},                       // grid
		{"?"},                    // help
		{"enter"},                // detail
		{"t"},                    // table
		{"t", "/", "g"},          // filter input open
		{"t", "/", "g", "enter"}, // filter kept
		{"e"},                    // events
		{"t", "enter", "?"},      // help over detail over table
	} {
		m := press(base, path...)
		for i := 0; i < 5; i++ {
			var cmd tea.Cmd
			m, cmd = updateKey(m, "esc")
			if isQuit(cmd) {
				t.Fatalf("after %v, esc #%d quit", path, i+1)
			}
		}
		if m.screen != screenGrid || m.showHelp || m.filtering || m.filter.Value() != "" {
			t.Errorf("after %v and esc×5: screen %d help %v filtering %v filter %q, want the plain grid",
				path, m.screen, m.showHelp, m.filtering, m.filter.Value())
		}
	}
}

func TestEscStepsBackOneLevel(t *testing.T) {
	m := press(send(newModel(120, 40), ReportMsg{Report: allStates(t0)}), "t", "/", "g", "enter", "enter")
	if m.screen != screenDetail {
		t.Fatalf("enter in the table: screen %d, want detail", m.screen)
	}
	m = press(m, "esc")
	if m.screen != screenTable || m.filter.Value() != "g" {
		t.Fatalf("esc from detail: screen %d filter %q, want the filtered table", m.screen, m.filter.Value())
	}
	m = press(m, "esc")
	if m.screen != screenTable || m.filter.Value() != "" {
		t.Fatalf("esc in a filtered table: screen %d filter %q, want the table unfiltered", m.screen, m.filter.Value())
	}
	m = press(m, "esc")
	if m.screen != screenGrid {
		t.Fatalf("esc in the table: screen %d, want the grid", m.screen)
	}
}

func TestQuitKeys(t *testing.T) {
	m := send(newModel(120, 40), ReportMsg{Report: allStates(t0)})
	for _, k := range []string{"q", "ctrl+c"} {
		if _, cmd := updateKey(m, k); !isQuit(cmd) {
			t.Errorf("%s did not quit", k)
		}
	}
	small := newModel(40, 10)
	if _, cmd := updateKey(small, "q"); !isQuit(cmd) {
		t.Error("q did not quit on the too-small screen")
	}
}

func TestQInFilterIsTyped(t *testing.T) {
	m := press(send(newModel(120, 40), ReportMsg{Report: allStates(t0)}), "t", "/")
	for _, k := range []string{"q", "u", "i", "t"} {
		var cmd tea.Cmd
		m, cmd = updateKey(m, k)
		if isQuit(cmd) {
			t.Fatalf("%q in the filter quit", k)
		}
	}
	if got := m.filter.Value(); got != "quit" {
		t.Fatalf("filter = %q, want %q", got, "quit")
	}
	if !strings.Contains(m.View(), "/quit") {
		t.Error("the filter input does not show what was typed")
	}
	// Keys that are bindings elsewhere are text too: p does not pause.
	m = press(m, "p")
	if m.paused {
		t.Error("p typed in the filter paused the display")
	}
}

func TestFilterNarrowsRows(t *testing.T) {
	m := press(send(newModel(120, 40), ReportMsg{Report: allStates(t0)}), "t", "/", "f", "u", "l", "l", "enter")
	if len(m.table.rows) != 1 || m.table.rows[0].State != analysis.StateFull {
		t.Fatalf("filter full: %d rows, want the one FULL replica", len(m.table.rows))
	}
	if len(m.panes) != 1 {
		t.Errorf("the grid ignores the filter: %d panes", len(m.panes))
	}
}

func TestPauseFreezesTheFrame(t *testing.T) {
	first := allStates(t0)
	m := press(send(newModel(120, 40), ReportMsg{Report: first}), "p")
	frozen := m.View()
	if !strings.Contains(frozen, "PAUSED") {
		t.Fatal("no PAUSED badge")
	}
	second := allStates(t0.Add(time.Second))
	second.Replicas[3].Running = 233 // gpu-c, FULL
	second.Replicas[3].Point.Running = 233
	m = send(m, ReportMsg{Report: second})
	if got := m.View(); got != frozen {
		t.Fatalf("the frame changed while paused:\n%s", got)
	}
	if n := m.history["gpu-c:8000"].Len(); n != 2 {
		t.Errorf("history holds %d points while paused, want 2 (reports keep arriving)", n)
	}
	m = press(m, "p")
	thawed := m.View()
	if strings.Contains(thawed, "PAUSED") || !strings.Contains(thawed, "run 233") {
		t.Errorf("after unpausing the newest report is not shown:\n%s", thawed)
	}
}

func TestWindowKeysCallSetWindow(t *testing.T) {
	var got []time.Duration
	opts := testOptions()
	opts.SetWindow = func(d time.Duration) { got = append(got, d) }
	m := sized(New(opts), 120, 40)
	for _, k := range []string{"]", "]", "]", "[", "[", "[", "[", "["} {
		var cmd tea.Cmd
		m, cmd = updateKey(m, k)
		if cmd != nil {
			cmd()
		}
	}
	want := []time.Duration{time.Minute, 5 * time.Minute, time.Minute, 30 * time.Second, 10 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("SetWindow calls %v, want %v (no call past either end)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SetWindow calls %v, want %v", got, want)
		}
	}
	if !strings.Contains(m.View(), "window 10s") {
		t.Error("the header does not show the new window")
	}
}

func TestWindowKeysDoNotCallFromUpdate(t *testing.T) {
	called := false
	opts := testOptions()
	opts.SetWindow = func(time.Duration) { called = true }
	m := sized(New(opts), 120, 40)
	_, cmd := updateKey(m, "]")
	if called {
		t.Fatal("SetWindow ran inside Update")
	}
	if cmd == nil {
		t.Fatal("no command for ]")
	}
	cmd()
	if !called {
		t.Fatal("the command did not call SetWindow")
	}
}

func TestScrapeNowKey(t *testing.T) {
	calls := 0
	opts := testOptions()
	opts.ScrapeNow = func() { calls++ }
	m := sized(New(opts), 120, 40)
	_, cmd := updateKey(m, "r")
	if calls != 0 || cmd == nil {
		t.Fatalf("r: %d calls inside Update, command %v", calls, cmd != nil)
	}
	cmd()
	if calls != 1 {
		t.Fatalf("ScrapeNow called %d times, want 1", calls)
	}
}

func TestNavigationFollowsTheReplica(t *testing.T) {
	m := send(newModel(120, 40), ReportMsg{Report: allStates(t0)})
	if m.selected != "gpu-g:8000" {
		t.Fatalf("first selection %q, want the worst replica (DOWN gpu-g)", m.selected)
	}
	m = press(m, "l")
	if m.selected != "gpu-e:8000" {
		t.Fatalf("l selected %q, want gpu-e (PREEMPTING, second)", m.selected)
	}
	m = press(m, "j") // three columns at 120: down one row
	if m.selected != "gpu-d:8000" {
		t.Fatalf("j selected %q, want gpu-d (fifth)", m.selected)
	}
	// The selected replica turns healthy: it moves, the selection follows it.
	next := allStates(t0.Add(time.Second))
	for i := range next.Replicas {
		if next.Replicas[i].Target == "gpu-d:8000" {
			next.Replicas[i].State = analysis.StateHealthy
		}
	}
	m = send(m, ReportMsg{Report: next})
	if m.selected != "gpu-d:8000" {
		t.Fatalf("selection jumped to %q after a re-sort", m.selected)
	}
}

func TestPanesWorstFirstStable(t *testing.T) {
	r := report(t0,
		replica("b", analysis.StateHealthy), replica("a", analysis.StateHealthy),
		replica("z", analysis.StateFull), replica("c", analysis.StateDown), replica("y", analysis.StateFull))
	m := send(newModel(200, 60), ReportMsg{Report: r})
	var got []string
	for _, p := range m.panes {
		got = append(got, p.Target)
	}
	if want := "c y z a b"; strings.Join(got, " ") != want {
		t.Fatalf("pane order %v, want %s", got, want)
	}
}

// Reports carry text that was made safe where it entered vtop; the ui
// draws it as it is, in every screen and colour profile, and adds no
// escape sequence of its own under the plain profile.
func TestSanitizedTextIsDrawnAsItIs(t *testing.T) {
	// What a sanitizer leaves of "\x1b]0;owned\x07llama": printable text,
	// some of it not ASCII.
	const clean = "owned·llama «3.1»"
	r := allStates(t0)
	for i := range r.Replicas {
		r.Replicas[i].Model = clean
		r.Replicas[i].Reasons = append([]string{"reason " + clean}, r.Replicas[i].Reasons...)
	}
	r.Replicas[1].Error = "boom " + clean
	r.Replicas[0].Target = "gpu-a:" + clean
	r.Replicas[0].Engines = []analysis.EngineReport{{Engine: clean, Figures: busyFigures()}, {Engine: "1", Figures: busyFigures()}}
	r.Events = append(r.Events, analysis.Event{Time: t0, Target: "gpu-a:" + clean, Text: "event " + clean})
	for _, profile := range []termenv.Profile{termenv.Ascii, termenv.TrueColor} {
		opts := testOptions()
		opts.Theme = themeFor(profile)
		m := send(sized(New(opts), 200, 60), ReportMsg{Report: r})
		frames := map[string]string{"grid": m.View()}
		for _, path := range []string{"t", "e", "enter"} {
			frames[path] = ansi.Strip(press(m, path).View())
		}
		frames["detail of gpu-a"] = ansi.Strip(press(m, "t", "/", "g", "p", "u", "-", "a", "enter", "enter").View()) + ansi.Strip(press(m, "t", "/", "g", "p", "u", "-", "a", "enter", "enter", "f").View())
		for name, want := range map[string]string{"t": clean, "e": "event " + clean, "detail of gpu-a": "engines"} {
			if !strings.Contains(frames[name], want) {
				t.Errorf("profile %v, %s: %q is not drawn as it is", profile, name, want)
			}
		}
		if !strings.Contains(frames["detail of gpu-a"], "reason "+clean) {
			t.Errorf("profile %v: the detail view does not draw the reason as it is", profile)
		}
		if profile == termenv.Ascii && strings.Contains(frames["grid"], "\x1b") {
			t.Errorf("an escape byte in a plain frame")
		}
	}
}

// themeFor is a theme drawn in a colour profile, whatever the terminal.
func themeFor(p termenv.Profile) *Theme {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	r.SetHasDarkBackground(true)
	return NewTheme(r)
}

// Worst first is by severity, not by state alone: at 80×24 the FULL
// replicas with 1,900 waiting and a 159 s p99 TTFT come before PREEMPTING
// ones with 30 waiting, in the grid, the table's default order and the
// header's worst replica.
func TestWorstFirstBySeverity(t *testing.T) {
	var reps []analysis.ReplicaReport
	for i := range 6 {
		r := replica(fmt.Sprintf("pre-%d:8000", i), analysis.StatePreempting)
		r.Waiting, r.PreemptionsPerSecond, r.TTFT.P99 = 30, 0.5, 2.1
		reps = append(reps, r)
	}
	for i := range 13 {
		r := replica(fmt.Sprintf("full-%02d:8000", i), analysis.StateFull)
		r.Waiting, r.PreemptionsPerSecond, r.TTFT.P99 = analysis.Num(1900+i), 0, 159
		reps = append(reps, r)
	}
	m := send(newModel(80, 24), ReportMsg{Report: report(t0, reps...)})
	if got := m.panes[0].Target; got != "full-12:8000" {
		t.Errorf("first pane %s, want full-12:8000 (the longest queue of the FULL ones)", got)
	}
	for i, p := range m.panes[:13] {
		if p.State != analysis.StateFull {
			t.Fatalf("pane %d is %s %s: a PREEMPTING replica with 30 waiting before a FULL one with 1,900", i+1, p.Target, p.State)
		}
	}
	if tb := press(m, "t"); tb.table.rows[0].Target != "full-12:8000" || tb.table.rows[12].State != analysis.StateFull {
		t.Errorf("the table's default order: %s first, row 13 %s", tb.table.rows[0].Target, tb.table.rows[12].State)
	}
	if head := ansi.Strip(strings.Join(m.header, "\n")); !strings.Contains(head, "worst full-12:8000") {
		t.Errorf("the header's worst is not the grid's first:\n%s", head)
	}
}
