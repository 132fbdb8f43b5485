package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// rowOf is the table row of target, or "" when none is drawn.
func rowOf(lines []string, target string) string {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "▸ "), "  "), target+" ") {
			return l
		}
	}
	return ""
}

// A SLOW row whose p99 TTFT is within the SLO says why it is SLOW: the
// ITL over its SLO, the exit margin a p99 must pass under, or the return
// to health the hysteresis holds. A row over the SLO needs no word more.
func TestTableSaysWhySlowUnderItsSLO(t *testing.T) {
	itl := replica("gpu-itl:8000", analysis.StateSlow)
	itl.TTFT.P99, itl.ITL.P99 = 0.245, 0.15
	margin := replica("gpu-margin:8000", analysis.StateSlow)
	margin.TTFT.P99 = 0.95
	held := replica("gpu-held:8000", analysis.StateSlow)
	held.TTFT.P99, held.Pending, held.PendingCount = 0.245, analysis.StateHealthy, 1
	over := replica("gpu-over:8000", analysis.StateSlow)
	tests := []struct {
		target, want string
		not          []string
	}{
		{"gpu-itl:8000", "SLOW ITL 150ms", nil},
		{"gpu-margin:8000", "SLOW until TTFT <900ms", nil},
		{"gpu-held:8000", "SLOW pending healthy 1/2", nil},
		{"gpu-over:8000", "SLOW", []string{"until", "pending", "ITL 1"}},
	}
	for _, w := range []int{80, 120} {
		_, lines := tableFrame(w, 24, []analysis.ReplicaReport{itl, margin, held, over})
		for _, tt := range tests {
			row := rowOf(lines, tt.target)
			if !strings.Contains(row, tt.want) {
				t.Errorf("at %d the row of %s lacks %q:\n%s", w, tt.target, tt.want, strings.Join(lines, "\n"))
			}
			for _, n := range tt.not {
				if strings.Contains(row, n) {
					t.Errorf("at %d the row of %s says %q: %s", w, tt.target, n, row)
				}
			}
		}
	}
}

// The table's default order is the severity score, worst first, and its
// title and the help say so, not "state".
func TestTableSaysItSortsBySeverity(t *testing.T) {
	title := func(m Model) string {
		for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
			if strings.Contains(l, "replicas · sorted by") {
				return l
			}
		}
		return ""
	}
	m, _ := tableFrame(120, 40, allStates(t0).Replicas)
	if got := title(m); !strings.Contains(got, "sorted by severity ▼ (worst first)") || strings.Contains(got, "sorted by state") {
		t.Errorf("title %q, want it to say sorted by severity, worst first", got)
	}
	if got := title(press(m, "I")); !strings.Contains(got, "sorted by severity ▲ (best first)") {
		t.Errorf("reversed, title %q, want it to say best first", got)
	}
	help := ansi.Strip(press(send(newModel(200, 60), ReportMsg{Report: allStates(t0)}), "?").View())
	if !strings.Contains(help, "sorted by severity, worst first") {
		t.Errorf("the help does not say the table's first order:\n%s", help)
	}
}

// The README's key table says what the key map does: every key of the
// sort bindings is in a row that says that binding's action, and no
// other row claims it.
func TestREADMEKeysAgreeWithKeyMap(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, keysSection, _ := strings.Cut(string(b), "\n## Keys\n")
	keysSection, _, _ = strings.Cut(keysSection, "\n## ")
	rows := map[string]string{} // key → the action of its row
	for _, l := range strings.Split(keysSection, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			continue
		}
		for _, k := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows[k[1]] = cells[2]
		}
	}
	s := newSortKeys()
	for _, tt := range []struct {
		keys []string
		says string
	}{
		{s.Sort.Keys(), "next column"},
		{s.SortBack.Keys(), "previous column"},
		{s.Reverse.Keys(), "reverse"},
	} {
		for _, k := range tt.keys {
			if !strings.Contains(rows[k], tt.says) {
				t.Errorf("README: key %s does %q in the key map, the README says %q", k, tt.says, rows[k])
			}
		}
	}
	for k, action := range rows {
		if strings.Contains(action, "reverse") && !strings.Contains(strings.Join(s.Reverse.Keys(), " "), k) {
			t.Errorf("README: %s is said to reverse the sort (%q); the key map reverses with %v", k, action, s.Reverse.Keys())
		}
	}
}

// noGPUsFound is a report whose one GPU source found nothing: a host
// without nvidia-smi.
func noGPUsFound(r analysis.Report) analysis.Report {
	analysis.ApplyGPUs(&r, nil, []analysis.GPUSource{{Name: "nvidia-smi", Note: "nvidia-smi not found on PATH: no GPU figures from this host"}})
	return r
}

// bodyTop is the index of the first line of the grid's panes.
func bodyTop(frame string) int {
	for i, l := range strings.Split(ansi.Strip(frame), "\n") {
		if strings.HasPrefix(l, "┏") || strings.HasPrefix(l, "╭") {
			return i
		}
	}
	return -1
}

// At 80×24 a GPU source that found no GPU takes no line above the grid:
// it is said once in the event log, and on the help; a tall terminal
// keeps its line. What discovery found joins the title line when it
// fits. The state counts, the worst replica and the advice stay.
func TestShortHeaderAt80x24(t *testing.T) {
	opts := testOptions()
	opts.Found = "3 vLLM servers found on this host"
	rep := noGPUsFound(withAdvice(t0))
	// Four reports: the note has held for three (a source that is
	// starting says so, then reports its GPUs).
	m := sized(New(opts), 80, 24)
	for range 4 {
		m = send(m, ReportMsg{Report: rep})
	}
	frame := ansi.Strip(m.View())
	if strings.Contains(frame, "GPUs none") {
		t.Errorf("at 80×24 a line says no GPU was found:\n%s", frame)
	}
	if top := bodyTop(frame); top < 0 || top > 7 {
		t.Errorf("the panes start on line %d at 80×24, want at most 7 lines above them:\n%s", top+1, frame)
	}
	for _, want := range []string{"3 vLLM servers found on this host", "DOWN 1", "HEALTHY 1", "worst gpu-g:8000 DOWN", "advice: add 14"} {
		if !strings.Contains(strings.Join(strings.Fields(frame), " "), want) {
			t.Errorf("at 80×24 the header lacks %q:\n%s", want, frame)
		}
	}
	events := ansi.Strip(press(m, "e").View())
	if n := strings.Count(events, "nvidia-smi not found on PATH"); n != 1 {
		t.Errorf("the event log says the GPU source's note %d times, want once:\n%s", n, events)
	}
	help := strings.Join(strings.Fields(ansi.Strip(press(m, "?", "end").View())), " ")
	if !strings.Contains(help, "GPUs none: nvidia-smi not found on PATH") {
		t.Errorf("the help does not say why there are no GPU figures:\n%s", help)
	}
	tall := ansi.Strip(send(sized(New(testOptions()), 200, 60), ReportMsg{Report: rep}).View())
	if !strings.Contains(tall, "GPUs none") {
		t.Errorf("at 200×60 the GPU line is gone:\n%s", tall)
	}
}

// The help fits 80×24: what does not fit scrolls, no line is cut, and a
// legend gives each state its meaning (from the analysis) in one line.
func TestHelpFitsWithLegend(t *testing.T) {
	// Live, with every key enabled: [ ] change the window, r scrapes.
	live := testOptions()
	live.SetWindow, live.ScrapeNow = func(time.Duration) {}, func() {}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {-80, 24}} {
		w, h := size[0], size[1]
		opts := testOptions()
		if w < 0 {
			w, opts = -w, live
		}
		m := press(send(sized(New(opts), w, h), ReportMsg{Report: allStates(t0)}), "?")
		seen := map[string]bool{}
		var all []string
		for range 10 {
			frame := m.View()
			checkFrame(t, frame, w, h)
			lines := strings.Split(ansi.Strip(frame), "\n")
			for _, l := range lines[len(m.header) : len(lines)-1] {
				if strings.Contains(l, "…") {
					t.Errorf("at %dx%d a help line is cut: %q", w, h, l)
				}
				if !seen[l] {
					seen[l] = true
					all = append(all, l)
				}
			}
			m = press(m, "pgdown")
		}
		text := strings.Join(all, "\n")
		for s := analysis.StateHealthy; s <= analysis.StateDown; s++ {
			line := regexp.MustCompile(regexp.QuoteMeta(stateWords[s]) + ` +` + regexp.QuoteMeta(analysis.StateMeaning(s)))
			if analysis.StateMeaning(s) == "" || !line.MatchString(text) {
				t.Errorf("at %dx%d the legend has no line %s: %s\n%s", w, h, stateWords[s], analysis.StateMeaning(s), text)
			}
			if a := analysis.FirstAction(s, catalogue.EngineVLLM, analysis.DefaultConfig()); a != "" {
				first := strings.Fields(a)
				if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(first[:min(4, len(first))], " ")) {
					t.Errorf("at %dx%d the legend lacks %s's first action %q", w, h, stateWords[s], a)
				}
			}
		}
		for _, want := range []string{"vtop keys", "I", "reverse sort", "esc or ? closes this help"} {
			if !strings.Contains(text, want) {
				t.Errorf("at %dx%d the help lacks %q:\n%s", w, h, want, text)
			}
		}
	}
}
