package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/vtop-dev/vtop/analysis"
)

// The panes are ordered by severity (analysis.SeverityOf): the state's
// rank first, but within and across PREEMPTING, FULL and SLOW the
// evidence decides (the queue, the p99 TTFT beyond the SLO), and only
// then the name.
func TestPanesBySeverity(t *testing.T) {
	full := func(name string, waiting, ttft float64) analysis.ReplicaReport {
		r := replica(name, analysis.StateFull)
		r.Waiting, r.TTFT.P99 = analysis.Num(waiting), analysis.Num(ttft)
		return r
	}
	slow := func(name string, ttft float64) analysis.ReplicaReport {
		r := replica(name, analysis.StateSlow)
		r.Waiting, r.TTFT.P99 = 0, analysis.Num(ttft)
		return r
	}
	stale := func(name string, waiting float64) analysis.ReplicaReport {
		r := replica(name, analysis.StateStale)
		r.Waiting = analysis.Num(waiting)
		return r
	}
	tests := []struct {
		name string
		reps []analysis.ReplicaReport
		want string
	}{
		{"longer queue first", []analysis.ReplicaReport{full("a", 10, 9), full("b", 900, 9), full("c", 50, 9)}, "b c a"},
		{"then higher TTFT", []analysis.ReplicaReport{full("a", 10, 2), full("b", 10, 8), full("c", 10, 5)}, "b c a"},
		{"queue before TTFT", []analysis.ReplicaReport{full("a", 5, 80), full("b", 500, 2)}, "b a"},
		{"an unknown queue counts as none", []analysis.ReplicaReport{full("a", nan.Float(), 1), full("b", 1, 1)}, "b a"},
		{"slow by TTFT", []analysis.ReplicaReport{slow("a", 1.2), slow("b", 7.5), slow("c", 2.5)}, "b c a"},
		{"evidence across the urgent states", []analysis.ReplicaReport{full("b", 1, 1), slow("a", 99)}, "a b"},
		{"the state's rank still first", []analysis.ReplicaReport{stale("a", 900), slow("b", 1.2)}, "b a"},
		{"ties by name", []analysis.ReplicaReport{full("b", 1, 1), full("a", 1, 1)}, "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := send(newModel(200, 60), ReportMsg{Report: report(t0, tt.reps...)})
			if got := targets(m.panes); got != tt.want {
				t.Errorf("grid order %q, want %q", got, tt.want)
			}
			m = press(m, "t")
			if got := targets(m.table.rows); got != tt.want {
				t.Errorf("table order %q, want %q", got, tt.want)
			}
		})
	}
}

func targets(list []*analysis.ReplicaReport) string {
	names := make([]string, len(list))
	for i, r := range list {
		names[i] = r.Target
	}
	return strings.Join(names, " ")
}

// spikeFleet is n replicas, every one SLOW (as during warm-up), except the
// ones named in worse, which are in the given state with a long queue.
func spikeFleet(n int, at time.Time, worse map[int]analysis.State) analysis.Report {
	reps := make([]analysis.ReplicaReport, n)
	for k := range reps {
		s := analysis.StateSlow
		if w, ok := worse[k]; ok {
			s = w
		}
		reps[k] = replica(fmt.Sprintf("10.0.0.1:%d", 18000+k), s)
		reps[k].Point = pointOf(reps[k], at)
	}
	return report(at, reps...)
}

// Until the user moves, the selection is the worst replica and the view is
// the top of the worst-first order, whatever the selection was when the
// fleet first showed.
func TestSelectionIsTheWorstUntilTheUserMoves(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := send(newModel(size[0], size[1]), ReportMsg{Report: spikeFleet(50, t0, nil)})
			next := spikeFleet(50, t0.Add(time.Second), map[int]analysis.State{30: analysis.StateFull, 44: analysis.StatePreempting})
			m = send(m, ReportMsg{Report: next})
			if want := "10.0.0.1:18044"; m.selected != want {
				t.Errorf("selected %s, want the PREEMPTING %s", m.selected, want)
			}
			if f := ansi.Strip(m.View()); !strings.Contains(f, "▸ 10.0.0.1:18044") {
				t.Errorf("the worst replica is not on the first screen:\n%s", f)
			}
			if d := ansi.Strip(press(m, "enter").View()); !strings.Contains(d, "10.0.0.1:18044") || !strings.Contains(d, "PREEMPTING") {
				t.Errorf("enter did not open the worst replica:\n%s", d)
			}
			if tb := press(m, "t"); tb.selected != "10.0.0.1:18044" {
				t.Errorf("table selects %s, want the worst", tb.selected)
			}
		})
	}
}

// Once the user has moved, the selection follows the replica, the page
// stays where the user put it, and the frame says where the selection went
// when it re-sorts out of view. g goes back to following the worst.
func TestMovedSelectionFollowsTheReplicaAndSaysSo(t *testing.T) {
	first := spikeFleet(50, t0, map[int]analysis.State{3: analysis.StateFull, 4: analysis.StateFull})
	m := press(send(newModel(80, 24), ReportMsg{Report: first}), "l")
	if m.selected != "10.0.0.1:18004" {
		t.Fatalf("l selected %s, want the second FULL", m.selected)
	}
	// The selected replica recovers: it sorts to the end, out of view.
	next := spikeFleet(50, t0.Add(time.Second), map[int]analysis.State{3: analysis.StateFull, 4: analysis.StateHealthy})
	m = send(m, ReportMsg{Report: next})
	if m.selected != "10.0.0.1:18004" {
		t.Fatalf("selection jumped to %s after a re-sort", m.selected)
	}
	f := ansi.Strip(m.View())
	if !strings.Contains(f, "10.0.0.1:18003") {
		t.Errorf("the page moved away from the top after a re-sort:\n%s", f)
	}
	if !strings.Contains(f, "18004") || !strings.Contains(f, "#50") {
		t.Errorf("the frame does not say the selection re-sorted out of view to #50:\n%s", f)
	}
	m = press(m, "g")
	next = spikeFleet(50, t0.Add(2*time.Second), map[int]analysis.State{7: analysis.StateDown})
	if m = send(m, ReportMsg{Report: next}); m.selected != "10.0.0.1:18007" {
		t.Errorf("after g the selection is %s, want the worst again", m.selected)
	}
}

// Opening a replica's detail view is choosing it: while it is open the
// view stays on that replica when another turns worse (or the replica
// itself recovers), and back on the grid the selection is still it.
func TestDetailStaysOnTheReplicaOpened(t *testing.T) {
	first := spikeFleet(50, t0, map[int]analysis.State{30: analysis.StateDown})
	m := press(send(newModel(120, 40), ReportMsg{Report: first}), "enter")
	if d := ansi.Strip(m.View()); !strings.Contains(d, "10.0.0.1:18030") {
		t.Fatalf("enter did not open the worst replica:\n%s", d)
	}
	// It comes back up, and another replica turns PREEMPTING.
	next := spikeFleet(50, t0.Add(5*time.Second), map[int]analysis.State{44: analysis.StatePreempting})
	m = send(m, ReportMsg{Report: next})
	// The header names the new worst; the detail's title is the replica's.
	if d := ansi.Strip(m.View()); !regexp.MustCompile(`(?m)^\s*10\.0\.0\.1:18030\s`).MatchString(d) {
		t.Errorf("the detail view left the replica opened for the new worst:\n%s", d)
	}
	if m = press(m, "esc"); m.selected != "10.0.0.1:18030" {
		t.Errorf("back on the grid the selection is %s, want the replica opened", m.selected)
	}
}

// The hint under the grid names keys that do what it says: PgDn shows the
// next page of panes.
func TestMoreHintIsTruthful(t *testing.T) {
	m := send(newModel(80, 24), ReportMsg{Report: spikeFleet(50, t0, nil)})
	per := m.grid.layout.perPage
	f := ansi.Strip(m.View())
	want := fmt.Sprintf("+%d more (t table, PgDn page)", 50-per)
	if !strings.Contains(f, want) {
		t.Fatalf("frame lacks %q:\n%s", want, f)
	}
	m = press(m, "pgdown")
	if got, want := m.selected, m.panes[per].Target; got != want {
		t.Errorf("PgDn selected %s, want %s, the first pane of the next page", got, want)
	}
	f = strings.Join(strings.Split(ansi.Strip(m.View()), "\n")[len(m.header):], "\n") // the body
	if !strings.Contains(f, "▸ "+m.panes[per].Target) || strings.Contains(f, m.panes[0].Target+" ") {
		t.Errorf("PgDn did not show the next page:\n%s", f)
	}
	if tb := press(m, "t"); !strings.Contains(ansi.Strip(tb.View()), "▸ ") {
		t.Errorf("t did not show the table with the selection")
	}
}

// downWithOldFigures is a replica that went down three minutes ago, whose
// report still carries the figures of its last good scrape.
func downWithOldFigures() analysis.ReplicaReport {
	r := replica("gpu-g:8000", analysis.StateDown)
	r.Figures = busyFigures()
	r.Running, r.Waiting, r.KVCacheUsage, r.RequestsPerSecond = 255, 1159, 0.45, 4.2
	r.LastGood = t0.Add(-3 * time.Minute)
	r.Point = pointOf(r, t0)
	return r
}

// A DOWN replica's figures are those of its last good scrape: every screen
// says when that was before drawing them, and draws them faint.
func TestDownFiguresAreMarkedOld(t *testing.T) {
	rep := report(t0, downWithOldFigures(), replica("gpu-a:8000", analysis.StateHealthy))
	tests := []struct {
		name string
		w, h int
		keys []string
	}{
		{"grid 120x40", 120, 40, nil},
		{"grid 200x60", 200, 60, nil},
		{"grid 80x24", 80, 24, nil},
		{"table 80x24", 80, 24, []string{"t"}},
		{"table 200x60", 200, 60, []string{"t"}},
		{"detail 120x40", 120, 40, []string{"enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, colour := range []bool{false, true} {
				opts := testOptions()
				if colour {
					opts.Theme = themeFor(termenv.TrueColor)
				}
				m := press(send(sized(New(opts), tt.w, tt.h), ReportMsg{Report: rep}), tt.keys...)
				checkOldFigures(t, m.View(), colour)
			}
		})
	}
}

// running255 is the figure 255 as text, not inside an escape sequence.
var running255 = regexp.MustCompile(`(^|[^0-9;])255([^0-9;m]|$)`)

// checkOldFigures fails when the DOWN replica's running count (255) is
// drawn before any "last seen" or "ago" of the frame's DOWN lines, or,
// in colour, not faint.
func checkOldFigures(t *testing.T, frame string, colour bool) {
	t.Helper()
	dated := false
	for _, raw := range strings.Split(frame, "\n") {
		line := ansi.Strip(raw)
		if strings.Contains(line, "last seen") || (strings.Contains(line, "gpu-g") && strings.Contains(line, " ago")) {
			dated = true
		}
		if !running255.MatchString(line) {
			continue
		}
		if !dated {
			t.Errorf("the DOWN replica's old figures are drawn as current: %q\n%s", line, ansi.Strip(frame))
		}
		at := running255.FindStringIndex(raw)
		if colour && !strings.Contains(raw[:at[0]], "\x1b[2") && !strings.Contains(raw[:at[0]], ";2m") {
			t.Errorf("old figures not faint: %q", raw)
		}
	}
}

// The header names the worst replica and, when the fleet has one, the
// replica far from the fleet median (the analysis lists the most extreme
// first), with how many other replicas are far from it: replicas, not
// replica × metric pairs.
func TestHeaderNamesWorstAndImbalance(t *testing.T) {
	rep := allStates(t0)
	rep.Fleet.Worst = "gpu-c:8000" // the analysis may name another; the header follows the grid
	rep.Fleet.Imbalance = []analysis.Imbalance{
		{Target: "gpu-c:8000", Metric: "waiting", Text: "gpu-c:8000: waiting 95 against a fleet median of 0"},
		{Target: "gpu-e:8000", Metric: "kv", Text: "gpu-e:8000: KV 99% against a fleet median of 41%"},
		{Target: "gpu-c:8000", Metric: "kv", Text: "gpu-c:8000: KV 97% against a fleet median of 41%"},
		{Target: "gpu-e:8000", Metric: "requests_per_second", Text: "gpu-e:8000: requests/s 9 against a fleet median of 2"},
	}
	for _, w := range []int{80, 120, 200} {
		m := send(newModel(w, 40), ReportMsg{Report: rep})
		head := ansi.Strip(strings.Join(m.header, "\n"))
		for _, want := range []string{"worst gpu-g:8000 DOWN", "imbalance: gpu-c:8000: waiting 95 against a fleet median of 0", "(+1 more replica)"} {
			if !strings.Contains(head, want) {
				t.Errorf("at %d the header lacks %q:\n%s", w, want, head)
			}
		}
	}
	long := rep
	long.Fleet.Imbalance = append([]analysis.Imbalance{{Target: "127.0.0.1:45247", Metric: "waiting",
		Text: "127.0.0.1:45247: waiting 2,962 against a fleet median of 14"}}, rep.Fleet.Imbalance...)
	head := ansi.Strip(strings.Join(send(newModel(80, 24), ReportMsg{Report: long}).header, "\n"))
	if !strings.Contains(head, "imbalance (+2 more): 127.0.0.1:45247: waiting 2,962 against a fleet median of 14") {
		t.Errorf("at 80 columns the count of other replicas is cut:\n%s", head)
	}
	m := send(newModel(120, 40), ReportMsg{Report: allStates(t0)})
	if head := strings.Join(m.header, "\n"); strings.Contains(head, "imbalance") {
		t.Errorf("an imbalance line without imbalance:\n%s", head)
	}
}

// The footer shows what fits, most needed first, for the screen shown:
// help always, and the keys the screen's hints name.
func TestFooterByPriority(t *testing.T) {
	base := send(newModel(80, 24), ReportMsg{Report: spikeFleet(50, t0, nil)})
	tests := []struct {
		name string
		keys []string
		w    int
		want []string
	}{
		{"grid at 60", nil, 60, []string{"? help", "q quit"}},
		{"grid at 80", nil, 80, []string{"? help", "enter detail", "t table", "pgdn page"}},
		{"table at 80", []string{"t"}, 80, []string{"? help", "enter detail", "s/S sort", "I reverse"}},
		{"detail at 60", []string{"enter"}, 60, []string{"? help", "esc back"}},
		{"events at 80", []string{"e"}, 80, []string{"? help", "esc back"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sized(press(base, tt.keys...), tt.w, 24)
			lines := strings.Split(ansi.Strip(m.View()), "\n")
			footer := lines[len(lines)-1]
			if !strings.HasPrefix(footer, "? help") {
				t.Errorf("footer %q does not start with ? help", footer)
			}
			for _, want := range tt.want {
				if !strings.Contains(footer, want) {
					t.Errorf("footer %q lacks %q", footer, want)
				}
			}
		})
	}
}
