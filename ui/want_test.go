package ui

import (
	"slices"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
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

// TestWantNamesTheDetail: the replica the detail view shows is named to
// Options.Want when the view opens, and nothing once it closes; reports
// and moves that leave it as it is name nothing again.
func TestWantNamesTheDetail(t *testing.T) {
	var calls [][]string
	opts := testOptions()
	opts.Want = func(targets []string) { calls = append(calls, targets) }
	m := sized(New(opts), 120, 40)
	step := func(msg tea.Msg) {
		next, cmd := m.Update(msg)
		m = next.(Model)
		runWant(cmd)
	}
	step(ReportMsg{Report: allStates(t0)})
	if len(calls) != 0 {
		t.Fatalf("named %v before any detail opened", calls)
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
		if !slices.EqualFunc(calls, s.want, slices.Equal) {
			t.Fatalf("step %d: named %q, want %q", i, calls, s.want)
		}
	}
}
