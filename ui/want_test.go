package ui

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// runWant runs a command and the commands of a batch it returns.
func runWant(c tea.Cmd) {
	if c == nil {
		return
	}
	if batch, ok := c().(tea.BatchMsg); ok {
		for _, c := range batch {
			runWant(c)
		}
	}
}

// namer is a sized Model whose Want or InView records what it names, and
// steps it as the program would, running the commands it returns.
type namer struct {
	m     Model
	calls [][]string
}

func newNamer(inView bool) *namer {
	n := &namer{}
	opts := testOptions()
	record := func(targets []string) { n.calls = append(n.calls, targets) }
	if inView {
		opts.InView = record
	} else {
		opts.Want = record
	}
	n.m = sized(New(opts), 120, 40)
	return n
}

func (n *namer) step(msg tea.Msg) {
	next, cmd := n.m.Update(msg)
	n.m = next.(Model)
	runWant(cmd)
}

// TestWantNamesTheDetail: the replica the detail view shows is named to
// Options.Want when the view opens, and nothing once it closes; reports
// and moves that leave it as it is name nothing again.
func TestWantNamesTheDetail(t *testing.T) {
	n := newNamer(false)
	step, m := n.step, &n.m
	step(ReportMsg{Report: allStates(t0)})
	if len(n.calls) != 0 {
		t.Fatalf("named %v before any detail opened", n.calls)
	}
	selected := m.selectedReport().Target
	steps := []struct {
		msg  tea.Msg
		want [][]string
	}{
		{keyMsg("enter"), [][]string{{selected}}},
		{ReportMsg{Report: allStates(t0.Add(1))}, [][]string{{selected}}},
		{keyMsg("esc"), [][]string{{selected}, nil}},
		{keyMsg("esc"), [][]string{{selected}, nil}},
		{keyMsg("enter"), [][]string{{selected}, nil, {selected}}},
	}
	for i, s := range steps {
		step(s.msg)
		if !slices.EqualFunc(n.calls, s.want, slices.Equal) {
			t.Fatalf("step %d: named %q, want %q", i, n.calls, s.want)
		}
	}
}

// drawnTarget is a target drawn as a pane's title or a row's first cell.
var drawnTarget = regexp.MustCompile(`(?m)(?:^|[┃│])(?:▸ |  )(r\d\d:8000)`)

// TestInViewFollowsTheScreen: the replicas named to Options.InView are
// exactly those whose panes or rows the frame draws, as the grid pages,
// the table scrolls, sorts and filters and the terminal is resized; a
// screen that draws no replica's pane or row (the detail view, whose
// replica Want names) names none, and a frame that draws the same ones
// names nothing again.
func TestInViewFollowsTheScreen(t *testing.T) {
	reps := make([]analysis.ReplicaReport, 50)
	for k := range reps {
		reps[k] = replica(fmt.Sprintf("r%02d:8000", k), analysis.StateHealthy)
		reps[k].Running = analysis.Num(k)
	}
	reps[7] = replica("r07:8000", analysis.StateFull)
	n := newNamer(true)
	step, m := n.step, &n.m
	// drawn are the targets of the panes or rows the frame draws: a
	// pane's title (after its border) or a row's first cell (after the
	// cursor column), not the header's "worst" or a hint's.
	drawn := func() []string {
		var out []string
		for _, m := range drawnTarget.FindAllStringSubmatch(ansi.Strip(m.View()), -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	step(ReportMsg{Report: report(t0, reps...)})
	steps := []struct {
		name string
		msgs []tea.Msg
		none bool // the screen draws no replica's pane or row
	}{
		{"the grid's first page", nil, false},
		{"the grid's next page", []tea.Msg{keyMsg("pgdown")}, false},
		{"the table", []tea.Msg{keyMsg("t")}, false},
		{"the table a page down", []tea.Msg{keyMsg("pgdown")}, false},
		{"a taller terminal", []tea.Msg{tea.WindowSizeMsg{Width: 120, Height: 60}}, false},
		{"a shorter terminal", []tea.Msg{tea.WindowSizeMsg{Width: 100, Height: 20}}, false},
		{"sorted by another column", []tea.Msg{keyMsg("g"), keyMsg("s")}, false},
		{"filtered", []tea.Msg{keyMsg("/"), keyMsg("r"), keyMsg("4"), keyMsg("enter")}, false},
		{"the detail view", []tea.Msg{keyMsg("enter")}, true},
		{"back to the table", []tea.Msg{keyMsg("esc")}, false},
		{"a new report, the same rows", []tea.Msg{ReportMsg{Report: report(t0.Add(time.Second), reps...)}}, false},
	}
	var prev []string
	for _, s := range steps {
		before := len(n.calls)
		for _, msg := range s.msgs {
			step(msg)
		}
		want := drawn()
		if s.none {
			want = nil
		}
		if !s.none && len(want) == 0 {
			t.Fatalf("%s: the frame draws no replica:\n%s", s.name, ansi.Strip(m.View()))
		}
		var named []string
		if len(n.calls) > 0 {
			named = n.calls[len(n.calls)-1]
		}
		got := slices.Sorted(slices.Values(named))
		if !slices.Equal(got, want) {
			t.Errorf("%s: named %v, want the %d drawn %v", s.name, got, len(want), want)
		}
		if slices.Equal(want, prev) && len(n.calls) != before {
			t.Errorf("%s: named %v again, the same replicas as before", s.name, n.calls[len(n.calls)-1])
		}
		prev = want
	}
}

// TestInViewBeforeAnyReport: the table asked for before the first report
// (an engineer pressing t at once) names nothing and does not fail; the
// first report's rows are then named. It panicked: following the worst
// first with no row scrolled the table to row -1.
func TestInViewBeforeAnyReport(t *testing.T) {
	for screen, keys := range map[string][]tea.Msg{"the table": {keyMsg("t")}, "the grid": nil} {
		n := newNamer(true)
		for _, k := range keys {
			n.step(k)
		}
		n.step(ReportMsg{Report: report(t0)})
		n.step(ReportMsg{Report: report(t0.Add(time.Second), replica("a:8000", analysis.StateHealthy), replica("b:8000", analysis.StateFull))})
		if len(n.calls) == 0 || !slices.Equal(n.calls[len(n.calls)-1], []string{"b:8000", "a:8000"}) {
			t.Errorf("%s before the first reports: named %q, want the two, worst first", screen, n.calls)
		}
	}
}
