package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// tableFrame is the table of the given replicas at a size, as plain lines.
func tableFrame(w, h int, reps []analysis.ReplicaReport, keys ...string) (Model, []string) {
	m := press(send(newModel(w, h), ReportMsg{Report: report(t0, reps...)}), append([]string{"t"}, keys...)...)
	return m, strings.Split(ansi.Strip(m.View()), "\n")
}

// targetCells is the target cell of every row drawn: the text between the
// cursor column and the next blank.
func targetCells(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "▸ ") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(l, "▸ "), "  "), " ")
		if cell != "" && cell != "target" && !strings.HasPrefix(cell, "target") {
			out = append(out, cell)
		}
	}
	return out
}

// Targets that share a long prefix are shortened in the middle: what
// tells them apart (the port, the pod suffix) stays.
func TestTableTargetsStayDistinguishable(t *testing.T) {
	names := map[string]func(k int) string{
		"ports": func(k int) string { return fmt.Sprintf("127.0.0.1:%d", 18000+k) },
		"pods": func(k int) string {
			return fmt.Sprintf("vllm-llama-8b-7f9c6d8b5-%c%c%dp.inference.svc.cluster.local:8000", 'a'+k%26, 'k'+k%7, k%10)
		},
		"hosts": func(k int) string { return fmt.Sprintf("http://gpu-node-%02d.us-east-1.example.internal:8000", k) },
	}
	for name, mk := range names {
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s at %d", name, w), func(t *testing.T) {
				reps := make([]analysis.ReplicaReport, 18)
				for k := range reps {
					reps[k] = replica(mk(k), analysis.StateHealthy)
				}
				_, lines := tableFrame(w, 24, reps)
				cells := targetCells(lines)
				if len(cells) < 10 {
					t.Fatalf("%d rows drawn:\n%s", len(cells), strings.Join(lines, "\n"))
				}
				seen := map[string]bool{}
				for _, c := range cells {
					if seen[c] {
						t.Errorf("two rows drawn as %q:\n%s", c, strings.Join(lines, "\n"))
					}
					seen[c] = true
				}
			})
		}
	}
}

func TestShortenMiddle(t *testing.T) {
	tests := []struct {
		s, prefix, suffix string
		w                 int
		want              string
	}{
		{"127.0.0.1:18013", "127.0.0.1:180", "", 12, "…0.0.1:18013"},
		{"127.0.0.1:18013", "", "", 20, "127.0.0.1:18013"},
		{"vllm-7f9c-x2k4p.ns.svc:8000", "vllm-7f9c-", ".ns.svc:8000", 14, "…9c-x2k4p.ns.…"},
		{"abcdefghij", "", "", 5, "ab…ij"},
	}
	for _, tt := range tests {
		if got := shortenMiddle(tt.s, len(tt.prefix), len(tt.suffix), tt.w); got != tt.want {
			t.Errorf("shortenMiddle(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.want)
		}
		if got := shortenMiddle(tt.s, len(tt.prefix), len(tt.suffix), tt.w); ansi.StringWidth(got) > tt.w {
			t.Errorf("shortenMiddle(%q, %d) is %d wide", tt.s, tt.w, ansi.StringWidth(got))
		}
	}
}

// The error column is there when a row is DOWN, and the model column takes
// the room of a wide terminal.
func TestTableColumnsFitTheirContent(t *testing.T) {
	down := replica("gpu-g:8000", analysis.StateDown)
	up := replica("gpu-a:8000", analysis.StateHealthy)
	tests := []struct {
		name string
		w    int
		reps []analysis.ReplicaReport
		want []string
		not  []string
	}{
		{"no error column when all answer", 120, []analysis.ReplicaReport{up}, []string{"target"}, []string{"error"}},
		{"error column for a DOWN row at 80", 80, []analysis.ReplicaReport{up, down}, []string{"error", "2m04s ago: …", "refused"}, nil},
		{"the model in full at 220", 220, []analysis.ReplicaReport{up, down}, []string{"meta-llama/Llama-3.1-8B-Instruct", "connection refused"}, nil},
		{"one replica", 120, []analysis.ReplicaReport{up}, []string{"1 of 1 replica "}, []string{"1 replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, lines := tableFrame(tt.w, 24, tt.reps)
			frame := strings.Join(lines, "\n")
			for _, w := range tt.want {
				if !strings.Contains(frame, w) {
					t.Errorf("table lacks %q:\n%s", w, frame)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(frame, n) {
					t.Errorf("table has %q:\n%s", n, frame)
				}
			}
		})
	}
}

// At 80 columns with long targets and a DOWN row, the error column takes
// the room left instead of pushing every row past the edge: no row is cut
// (a cut row ends in "…", which on an up row reads as a hidden error), and
// the DOWN row keeps the end of its reason.
func TestTableErrorColumnFitsTheWidth(t *testing.T) {
	var reps []analysis.ReplicaReport
	for k := range 12 {
		reps = append(reps, replica(fmt.Sprintf("127.0.0.1:%d", 40100+k), []analysis.State{analysis.StateFull, analysis.StatePreempting, analysis.StateHealthy}[k%3]))
	}
	reps = append(reps, replica("127.0.0.1:40117", analysis.StateDown))
	_, lines := tableFrame(80, 24, reps)
	frame := strings.Join(lines, "\n")
	rows := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "  127.") && !strings.HasPrefix(l, "▸ 127.") {
			continue
		}
		rows++
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("row %d wide:\n%s", w, l)
		}
		if strings.Contains(l, "DOWN") {
			if !strings.HasSuffix(strings.TrimRight(l, " "), "refused") {
				t.Errorf("the DOWN row lost the end of its reason:\n%s", frame)
			}
		} else if strings.HasSuffix(strings.TrimRight(l, " "), "…") {
			t.Errorf("an up row is cut at the edge:\n%s", frame)
		}
	}
	if rows < 10 {
		t.Fatalf("%d rows drawn:\n%s", rows, frame)
	}
}

// s and S step forwards and backwards through the columns drawn, and the
// sorted column's header always shows its arrow.
func TestSortKeysStepThroughVisibleColumns(t *testing.T) {
	for _, w := range []int{80, 120, 220} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			m, _ := tableFrame(w, 24, allStates(t0).Replicas)
			visible := map[int]bool{}
			for _, c := range m.table.columns {
				visible[c] = true
			}
			seen := 0
			for range len(m.table.columns) + 2 {
				m = press(m, "s")
				if !visible[m.table.sortCol] {
					t.Errorf("s sorted by %q, which is not drawn", tableColumns[m.table.sortCol].title)
				}
				head := strings.Split(ansi.Strip(m.View()), "\n")[len(m.header)+1]
				if !strings.Contains(head, tableColumns[m.table.sortCol].title+"▼") {
					t.Errorf("header %q lacks %s▼", head, tableColumns[m.table.sortCol].title)
				}
				seen++
			}
			before := m.table.sortCol
			m = press(m, "s", "S")
			if m.table.sortCol != before {
				t.Errorf("s then S sorts by %q, want %q back", tableColumns[m.table.sortCol].title, tableColumns[before].title)
			}
			if m = press(m, "I"); m.table.sortDesc {
				t.Error("I did not reverse the order")
			}
		})
	}
}

// After s the table shows the sort's top rows, and the selection in view:
// following the worst, the selection is the first row of the table's
// order; a selection the user picked stays picked, and the title says
// where it went. Rows off the screen are counted: "N above", "N below".
func TestTableSortKeepsTopRowsInView(t *testing.T) {
	reps := make([]analysis.ReplicaReport, 50)
	for k := range reps {
		reps[k] = replica(fmt.Sprintf("r%02d:8000", k), analysis.StateHealthy)
		reps[k].Running = analysis.Num(k) // r49 runs the most
	}
	// The worst replica runs the least: sorted by run it is the last row.
	reps[0] = replica("r00:8000", analysis.StateFull)
	reps[0].Running, reps[0].Waiting = 0, 1900
	tests := []struct {
		name      string
		keys      []string
		wantFirst string // the first row drawn
		wantSel   string
		wantHint  []string
	}{
		{"default order: the worst first", nil, "r00:8000", "r00:8000", []string{"below"}},
		{"s: the most running first, selected", []string{"s"}, "r49:8000", "r49:8000", []string{"below"}},
		{"s, then a page down: rows above", []string{"s", "pgdown"}, "", "", []string{"above"}},
		{"a picked selection stays picked; the top rows show", []string{"down", "down", "s"}, "r49:8000", "r02:8000", []string{"below"}},
	}
	for _, size := range [][2]int{{80, 24}, {220, 60}} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s at %dx%d", tt.name, size[0], size[1]), func(t *testing.T) {
				m, lines := tableFrame(size[0], size[1], reps, tt.keys...)
				frame := strings.Join(lines, "\n")
				cells := targetCells(lines)
				if tt.wantFirst != "" && (len(cells) == 0 || cells[0] != tt.wantFirst) {
					t.Errorf("first row %v, want %s:\n%s", cells[:min(len(cells), 1)], tt.wantFirst, frame)
				}
				if tt.wantSel != "" && m.selected != tt.wantSel {
					t.Errorf("selected %s, want %s", m.selected, tt.wantSel)
				}
				if !strings.Contains(frame, "▸ ") {
					t.Errorf("the selection is not in view:\n%s", frame)
				}
				title := ""
				for _, l := range lines {
					if strings.Contains(l, "sorted by") {
						title = l
					}
				}
				if size[1] >= 60 {
					// Every row fits: nothing to count.
					if strings.Contains(title, "above") || strings.Contains(title, "below") {
						t.Errorf("title %q counts rows off a screen they all fit", title)
					}
				} else {
					for _, h := range tt.wantHint {
						if !strings.Contains(title, h) {
							t.Errorf("title %q lacks %q", title, h)
						}
					}
				}
				// A new report does not scroll the table away.
				m2 := send(m, ReportMsg{Report: report(t0.Add(time.Second), reps...)})
				if got := targetCells(strings.Split(ansi.Strip(m2.View()), "\n")); tt.wantFirst != "" && (len(got) == 0 || got[0] != tt.wantFirst) {
					t.Errorf("after the next report the first row is %v, want %s", got[:min(len(got), 1)], tt.wantFirst)
				}
			})
		}
	}
}

// Aborts are counted in a replica's req/s: where they are a material
// share of what finished, the pane says so beside the req/s, and the
// table's abort column shows the share whatever it is.
func TestAbortsBesideTheThroughput(t *testing.T) {
	r := replica("gpu-a:8000", analysis.StateFull)
	r.RequestsPerSecond, r.FinishedPerSecond.Stop, r.FinishedPerSecond.Abort = 15.1, 6.3, 8.8
	r.SuccessRate, r.AbortShare = 6.3/15.1, 8.8/15.1
	calm := replica("gpu-b:8000", analysis.StateHealthy)
	calm.FinishedPerSecond.Abort, calm.AbortShare = 0.1, 0.02
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := ansi.Strip(send(newModel(size[0], size[1]), ReportMsg{Report: report(t0, r, calm)}).View())
		if !strings.Contains(f, "15.1 req/s 58% abort") {
			t.Errorf("%dx%d: the pane of a replica whose clients abort 58%% does not say so:\n%s", size[0], size[1], f)
		}
		if strings.Contains(f, "2% abort") {
			t.Errorf("%dx%d: 2%% aborted is said on the pane:\n%s", size[0], size[1], f)
		}
	}
	_, lines := tableFrame(160, 24, []analysis.ReplicaReport{r, calm})
	frame := strings.Join(lines, "\n")
	if !strings.Contains(frame, "abort") || !strings.Contains(frame, "58%") {
		t.Errorf("the table has no abort share:\n%s", frame)
	}
}
