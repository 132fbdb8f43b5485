package ui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// healthyFour is the healthy-fleet golden scenario: four replicas with 40
// seconds of history.
func healthyFour(w, h int) Model {
	return withHistory(newModel(w, h), 40, func(i int, at time.Time) analysis.Report {
		reps := make([]analysis.ReplicaReport, 4)
		for k := range reps {
			reps[k] = replica(fmt.Sprintf("gpu-%c:8000", 'a'+k), analysis.StateHealthy)
			reps[k].Running = analysis.Num(40 + (i*(k+1))%17)
			reps[k].Point = pointOf(reps[k], at)
		}
		return report(at, reps...)
	})
}

// Panes fill the width of the terminal and grow into its height: no
// strip of blank columns at the right, no screenful of blank rows under
// a few panes.
func TestPanesFillTheScreen(t *testing.T) {
	tests := []struct {
		name string
		m    Model
	}{
		{"four at 203x60", healthyFour(203, 60)},
		{"four at 220x60", healthyFour(220, 60)},
		{"seven at 200x60", withHistory(newModel(200, 60), 20, func(_ int, at time.Time) analysis.Report { return allStates(at) })},
		{"four at 120x40", healthyFour(120, 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := strings.Split(ansi.Strip(tt.m.View()), "\n")
			top := lines[len(tt.m.header)]
			if r := []rune(top); r[len(r)-1] != '╮' && r[len(r)-1] != '┓' {
				t.Errorf("the first row of panes does not reach the right edge: %q", top)
			}
			blank := 0
			for _, l := range lines[len(tt.m.header) : len(lines)-1] {
				if strings.TrimSpace(l) == "" {
					blank++
				}
			}
			// What stays blank is the unused part of the event log's
			// reserve and less than one step of sparkline growth.
			if blank > eventReserve+len(sparks) {
				t.Errorf("%d blank rows under the panes:\n%s", blank, strings.Join(lines, "\n"))
			}
		})
	}
}

// cutNumber is a figure cut short: a digit, or a digit and a point,
// followed by the ellipsis (and not inside a name, like a model's
// "Llama-3.…").
var cutNumber = regexp.MustCompile(`(^|[^A-Za-z0-9-])[0-9.]*[0-9]\.?…`)

// Figures are never cut, and the evidence and first action are drawn in
// full (on a second line when they must) while the screen has room.
func TestPaneFiguresAndEvidenceAreNotCut(t *testing.T) {
	full := replica("10.0.0.1:18001", analysis.StateFull)
	full.Running, full.Waiting, full.TTFT.P99, full.ITL.P50, full.ITL.P99 = 255, 1159, 79.6, 0.288, 0.365
	tests := []struct {
		name string
		w, h int
		want []string
	}{
		{"80x24", 80, 24, nil},
		{"120x40", 120, 40, []string{"max_num_seqs", "(target 12 per replica)"}},
		{"200x60", 200, 60, []string{"max_num_seqs", "(target 12 per replica)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := allStates(t0)
			rep.Replicas[3] = full
			f := ansi.Strip(send(newModel(tt.w, tt.h), ReportMsg{Report: rep}).View())
			for _, l := range strings.Split(f, "\n") {
				if cutNumber.MatchString(l) {
					t.Errorf("a figure is cut: %q", l)
				}
			}
			flat := strings.Join(strings.Fields(strings.Join(paneText(f, full.Target), " ")), " ")
			for _, w := range tt.want {
				if !strings.Contains(flat, w) {
					t.Errorf("the FULL pane's evidence lacks %q:\n%s", w, f)
				}
			}
		})
	}
}

// The detail view wraps every sentence instead of cutting it.
func TestDetailWrapsSentences(t *testing.T) {
	r := replica("gpu-c:8000", analysis.StateFull)
	r.Reasons = append(r.Reasons, "a long sentence of evidence that goes on and on past the edge of a terminal eighty columns wide, ending here")
	m := press(send(newModel(80, 40), ReportMsg{Report: report(t0, r)}), "enter")
	f := ansi.Strip(m.View())
	flat := strings.Join(strings.Fields(f), " ")
	for _, want := range []string{"ending here", r.Action} {
		if !strings.Contains(flat, want) {
			t.Errorf("the detail view cut %q:\n%s", want, f)
		}
	}
}

// paneText is the inner lines of the pane titled with target in a plain
// frame, whether selected or not.
func paneText(frame, target string) []string {
	lines := strings.Split(frame, "\n")
	isBorder := func(r rune) bool { return r == '│' || r == '┃' }
	for i, l := range lines {
		r := []rune(l)
		at := strings.Index(l, target)
		if at < 0 {
			continue
		}
		col := len([]rune(l[:at]))
		left := col
		for left > 0 && !isBorder(r[left]) {
			left--
		}
		right := col
		for right < len(r) && !isBorder(r[right]) {
			right++
		}
		var out []string
		for _, pl := range lines[i:] {
			pr := []rune(pl)
			if right >= len(pr) || !isBorder(pr[left]) {
				break
			}
			out = append(out, string(pr[left+1:right]))
		}
		return out
	}
	return nil
}

// smallCounts is a replica whose running count stays between 0 and 4: the
// axis that read "4, 3, 1, 0".
func smallCounts(i int, at time.Time) analysis.Report {
	r := replica("gpu-a:8000", analysis.StateHealthy)
	r.Running, r.Waiting = analysis.Num(i%5), 0
	r.Point = pointOf(r, at)
	return report(at, r)
}

// yLabel is a Y axis label at the start of a chart line: "  4│".
var yLabel = regexp.MustCompile(`^\s*([0-9.]+)[a-z%]*[│└]`)

// The Y axis of the detail charts is labelled at even, round steps.
func TestChartTicksAreEven(t *testing.T) {
	m := press(withHistory(newModel(80, 60), 30, smallCounts), "enter")
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	var labels []float64
	for _, l := range lines {
		if strings.HasPrefix(l, "KV cache") {
			break // the first chart only: running & waiting
		}
		if mm := yLabel.FindStringSubmatch(l); mm != nil {
			var v float64
			fmt.Sscan(mm[1], &v)
			labels = append(labels, v)
		}
	}
	if len(labels) < 3 {
		t.Fatalf("labels %v:\n%s", labels, strings.Join(lines, "\n"))
	}
	step := labels[0] - labels[1]
	for i := 1; i < len(labels); i++ {
		if d := labels[i-1] - labels[i]; d != step || d <= 0 {
			t.Errorf("uneven Y labels %v", labels)
			break
		}
	}
}

// Without colour, two lines of one chart are told apart by a mark at the
// end of each, named in the legend.
func TestPlainChartsMarkTheirLines(t *testing.T) {
	m := press(withHistory(newModel(120, 60), 60, rampingFull), "enter")
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	var chart []string
	for i, l := range lines {
		if strings.HasPrefix(l, "running & waiting") {
			chart = lines[i : i+chartHeight+1]
		}
	}
	if chart == nil {
		t.Fatalf("no running & waiting chart:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(chart[0], "r running") || !strings.Contains(chart[0], "w waiting") {
		t.Errorf("legend %q does not name the marks", chart[0])
	}
	body := strings.Join(chart[1:], "\n")
	for _, mark := range []string{"r", "w"} {
		if !regexp.MustCompile(`[⠀-⣿ ]` + mark + `[ │]`).MatchString(body) {
			t.Errorf("no %q mark at a line end:\n%s", mark, body)
		}
	}
}

// Long evidence does not push the sparklines out of the panes: the minutes
// before now matter more than the evidence's later lines, which the detail
// view holds in full. Six panes at 120×40 with six lines of evidence each
// keep every sparkline.
func TestSparklinesOutrankLongEvidence(t *testing.T) {
	long := strings.Repeat("a long sentence of evidence that wraps in a pane ", 6)
	m := withHistory(newModel(120, 40), 20, func(_ int, at time.Time) analysis.Report {
		rep := allStates(at)
		rep.Replicas = rep.Replicas[:6]
		for i := range rep.Replicas {
			rep.Replicas[i].Reasons = []string{long}
		}
		return rep
	})
	f := ansi.Strip(m.View())
	for _, r := range m.shown.Replicas {
		if r.State == analysis.StateDown {
			continue // its last figures are drawn dated, without sparklines
		}
		pane := paneText(f, r.Target)
		for _, spark := range sparks {
			name := spark.name
			found := false
			for _, l := range pane {
				if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no %q sparkline:\n%s", r.Target, name, strings.Join(pane, "\n"))
			}
		}
	}
}

// A pane that stands for a group of instances (a Prometheus source's
// --group-by) says how many it holds, in the grid, the table and the
// detail view; a replica of one instance says nothing of it.
func TestGroupsSayHowManyInstances(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	group := replica("vllm", analysis.StateFull) // worst first: enter opens it
	group.Instances = 8
	single := replica("gpu-a:8000", analysis.StateHealthy)
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"grid", nil, "vllm 8 instances"},
		{"header", nil, "up 2/2 (9 instances)"},
		{"table", []string{"t"}, "vllm ×8"},
		{"detail", []string{"enter"}, "vllm  8 instances"},
	}
	for _, tt := range tests {
		m := press(send(newModel(120, 40), ReportMsg{Report: report(at, group, single)}), tt.keys...)
		frame := ansi.Strip(m.View())
		if !strings.Contains(frame, tt.want) {
			t.Errorf("%s: no %q in\n%s", tt.name, tt.want, frame)
		}
		if strings.Contains(frame, "1 instance") || strings.Contains(frame, "gpu-a:8000 ×") {
			t.Errorf("%s: a replica of one instance counts it:\n%s", tt.name, frame)
		}
	}
}

// While the source fails, the header says so once, with the data's age,
// and names the server once; every pane keeps its verdict, marked stale,
// in the grid and the table. When the source works, nothing is marked.
func TestSourceFailureIsSaidOnceWithTheAge(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const name = "Prometheus http://prom.example:9090"
	failing := &catalogue.SourceStatus{Name: name, Problem: "connection refused", Since: at.Add(10 * time.Second),
		LastGood: at, Checked: at.Add(42 * time.Second), DataAgeSeconds: 42}
	tests := []struct {
		name      string
		src       *catalogue.SourceStatus
		keys      []string
		want      []string
		wantStale bool
	}{
		{"grid", failing, nil, []string{name + ": connection refused; data 42s old", "failing since 12:00:10"}, true},
		{"table", failing, []string{"t"}, []string{name + ": connection refused; data 42s old"}, true},
		{"detail", failing, []string{"enter"}, []string{name + ": connection refused; data 42s old", "FULL  stale"}, false},
		{"working", &catalogue.SourceStatus{Name: name, LastGood: at, Checked: at}, nil, []string{"source " + name}, false},
	}
	for _, tt := range tests {
		r := report(at, replica("gpu-a:8000", analysis.StateHealthy), replica("gpu-b:8000", analysis.StateFull))
		r.SetSource(tt.src)
		m := press(send(newModel(160, 40), ReportMsg{Report: r}), tt.keys...)
		frame := ansi.Strip(m.View())
		for _, w := range tt.want {
			if !strings.Contains(frame, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, frame)
			}
		}
		if n := strings.Count(frame, "prom.example"); n != 1 {
			t.Errorf("%s: the server is named %d times, want once:\n%s", tt.name, n, frame)
		}
		if got := strings.Count(frame, "stale"); tt.name != "detail" && ((got >= 2) != tt.wantStale || (!tt.wantStale && got > 0)) {
			t.Errorf("%s: %d panes or rows marked stale, want both %v:\n%s", tt.name, got, tt.wantStale, frame)
		}
		if strings.Contains(frame, "DOWN") {
			t.Errorf("%s: a replica is DOWN for the source's failure:\n%s", tt.name, frame)
		}
	}
}

// A source that has given no replica yet (a selector that matches
// nothing, a server that never answered) is not a filter that hides them
// all: the screen says there is nothing to show, and why, in the grid and
// the table.
func TestNoReplicaIsNoFilter(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := report(at)
	r.SetSource(&catalogue.SourceStatus{Name: "Prometheus http://prom.example:9090", Problem: `the selector {job="nope"} matches no vLLM series`, Since: at, Checked: at})
	for _, keys := range [][]string{nil, {"t"}} {
		frame := ansi.Strip(press(send(newModel(120, 30), ReportMsg{Report: r}), keys...).View())
		if strings.Contains(frame, "filter (esc") || !strings.Contains(frame, "no replica to show: the source has given none (see above)") {
			t.Errorf("keys %v: want no replica to show, not a filter:\n%s", keys, frame)
		}
	}
}

// The source line names the store that answered, with its version where
// it reports one, and nothing more when it did not say; and the path it
// read, where it has a choice (vtop's recording rules or the raw series).
func TestSourceLineNamesTheStore(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		store, version, path, want string
	}{
		{"VictoriaMetrics", "", "", "source Prometheus http://vm.example:8428, answered by VictoriaMetrics"},
		{"Prometheus", "2.42.0+ds", "", "source Prometheus http://vm.example:8428, answered by Prometheus 2.42.0+ds"},
		{"", "", "", "source Prometheus http://vm.example:8428"},
		{"Prometheus", "", "rules", "source Prometheus http://vm.example:8428, answered by Prometheus, via vtop's rules"},
		{"", "", "raw", "source Prometheus http://vm.example:8428, via raw series"},
	}
	for _, tt := range tests {
		r := report(at)
		r.SetSource(&catalogue.SourceStatus{Name: "Prometheus http://vm.example:8428", LastGood: at, Checked: at, Store: tt.store, StoreVersion: tt.version, Path: tt.path})
		frame := ansi.Strip(send(newModel(120, 30), ReportMsg{Report: r}).View())
		if !slices.ContainsFunc(strings.Split(frame, "\n"), func(l string) bool { return strings.TrimSpace(l) == tt.want }) {
			t.Errorf("store %q %q: want the line %q in\n%s", tt.store, tt.version, tt.want, frame)
		}
	}
}

// A late replica keeps its verdict, marked late with the note that says
// what failed and whose figures these are, in the grid, the table and the
// detail view; the header counts it late, not down, and says when most
// of the fleet timed out at once that vtop's side is the likely cause.
func TestLateReplicaIsMarkedNotDown(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	late := replica("gpu-b:8000", analysis.StateFull)
	late.Late, late.Error, late.FailedScrapes, late.LastGood = true, "no answer within 800ms", 1, at.Add(-time.Second)
	const round = "2 of 3 targets at once: no answer within 800ms; likely this host or its network, not the replicas"
	note := "late: no answer within 800ms (1 in a row); figures of 11:59:59"
	tests := []struct {
		name string
		keys []string
		want []string
	}{
		{"grid", nil, []string{"late 1", round, note}},
		{"table", []string{"t"}, []string{"late 1", "FULL late"}},
		{"detail", []string{"enter"}, []string{"FULL  late", note}},
	}
	for _, tt := range tests {
		r := report(at, replica("gpu-a:8000", analysis.StateHealthy), late)
		r.Fleet.Late, r.Fleet.LateRound = 1, round
		frame := ansi.Strip(press(send(newModel(200, 50), ReportMsg{Report: r}), tt.keys...).View())
		for _, w := range tt.want {
			if !strings.Contains(frame, w) {
				t.Errorf("%s: no %q in\n%s", tt.name, w, frame)
			}
		}
		if strings.Contains(frame, "DOWN") || strings.Contains(frame, "down for") {
			t.Errorf("%s: a late replica is shown down:\n%s", tt.name, frame)
		}
	}
}

// A target that never answered stays in view, DOWN, but the header's
// worst and the first pane are the live replica in trouble.
func TestNeverAnsweredTargetIsNotFirst(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	never := replica("127.0.0.1:31502", analysis.StateDown)
	never.LastGood = time.Time{}
	r := report(at, never, replica("gpu-b:8000", analysis.StateFull), replica("gpu-c:8000", analysis.StateHealthy))
	frame := ansi.Strip(send(newModel(80, 24), ReportMsg{Report: r}).View())
	if !strings.Contains(frame, "worst gpu-b:8000 FULL") {
		t.Fatalf("the header's worst is not the FULL replica:\n%s", frame)
	}
	// The panes, below the header's line that names the worst.
	panes := frame[strings.Index(frame, "worst gpu-b:8000"):]
	full, down := strings.Index(panes, "gpu-b:8000 "), strings.Index(panes, "127.0.0.1:31502")
	if down < 0 || full < 0 || down < full {
		t.Errorf("the never-answered target is not in view after the FULL pane (full at %d, down at %d):\n%s", full, down, frame)
	}
}
