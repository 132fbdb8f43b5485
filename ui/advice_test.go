package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// withAdvice is the all-states fleet with an advice as the analysis
// writes it for a fleet short of replicas: an action long enough to wrap
// at 80 columns, and the sentences behind it.
func withAdvice(at time.Time) analysis.Report {
	r := allStates(at)
	a := &r.Fleet.Advice
	a.Action, a.Add, a.RecommendedReplicas = "add", 14, 54
	a.Recommendation = "add 14: 276 req/s arrive, 206 succeed, a full replica does 5.3: 40 up (2 down uncounted) → 54; backlog 23,617 clears in about 80 min"
	a.Summary = []string{a.Recommendation,
		"demand 276 req/s: what arrives at the 40 replicas counted (finished, aborts included, plus the growth of batch and queue); they finish 206 req/s successfully, 70 req/s short",
		"capacity 5.3 successful req/s per replica (stop and length, the mean of 13 FULL replicas at the cap; 2.1 req/s aborted, not counted); the demand needs 53 replicas if spread evenly (ceil(276 ÷ 5.3))",
		"backlog 23,617 waiting: clears in about 80 min at 54 replicas; 69 would clear it in about 5 min",
		"autoscaler setting, not a count to act on: an HPA would scale on vllm:num_requests_waiting with target 5.3 per replica (a 1s queue at the 5.3 successful req/s a full replica finishes); at a mean of 590 waiting it asks for 4,453 (ceil(40 × 590 ÷ 5.3))",
		"2 of 42 replicas down: not counted, neither their demand nor their capacity",
	}
	r.Fleet.Imbalance = []analysis.Imbalance{
		{Target: "gpu-c:8000", Metric: "waiting", Text: "gpu-c:8000: waiting 95 against a fleet median of 0"},
		{Target: "gpu-e:8000", Metric: "kv_cache_usage", Text: "gpu-e:8000: KV cache 99% against a fleet median of 41%"},
	}
	return r
}

// The header always shows the advice's action, wrapped rather than cut,
// on at most two lines; cut, it says where the rest is.
func TestAdviceInHeader(t *testing.T) {
	rep := withAdvice(t0)
	rec := rep.Fleet.Advice.Recommendation
	for _, size := range [][2]int{{80, 24}, {120, 40}, {220, 60}} {
		w, h := size[0], size[1]
		m := send(newModel(w, h), ReportMsg{Report: rep})
		var advice []string
		for i, l := range m.header {
			if l := ansi.Strip(l); strings.HasPrefix(l, "advice: ") {
				for _, next := range m.header[i:] {
					advice = append(advice, ansi.Strip(next))
				}
				break
			}
		}
		if len(advice) == 0 || len(advice) > maxAdviceLines {
			t.Fatalf("at %d×%d the advice takes %d header lines, want 1 to %d:\n%s", w, h, len(advice), maxAdviceLines, strings.Join(m.header, "\n"))
		}
		if got := strings.Join(advice, " "); collapse(got) != collapse("advice: "+rec) {
			t.Errorf("at %d×%d the header's advice is not the action whole: %q", w, h, got)
		}
	}
	long := rep
	long.Fleet.Advice.Recommendation = strings.Repeat("add 13 replicas and read every word of this ", 6)
	m := send(newModel(80, 24), ReportMsg{Report: long})
	head := ansi.Strip(strings.Join(m.header, "\n"))
	if !strings.Contains(head, adviceMore) || strings.Count(head, "read every word") > 4 {
		t.Errorf("an action too long for two lines is not cut with %q:\n%s", adviceMore, head)
	}
}

// Key a opens the whole advice: every sentence, each group's, and every
// replica far from the median, readable at 80×24 (scrolling) and 220×60;
// a or esc closes it, and the footer and the help name the key.
func TestAdviceView(t *testing.T) {
	rep := withAdvice(t0)
	for _, size := range [][2]int{{80, 24}, {220, 60}} {
		w, h := size[0], size[1]
		m := press(send(newModel(w, h), ReportMsg{Report: rep}), "a")
		var read []string
		for range 10 { // page down through it all
			lines := strings.Split(ansi.Strip(m.View()), "\n")
			read = append(read, lines[len(m.header):len(lines)-1]...)
			m = press(m, "pgdown")
		}
		text := collapse(strings.NewReplacer("• ", " ").Replace(strings.Join(read, " ")))
		wants := append([]string{}, rep.Fleet.Advice.Summary...)
		for _, im := range rep.Fleet.Imbalance {
			wants = append(wants, im.Text)
		}
		for _, want := range wants {
			if !strings.Contains(text, collapse(want)) {
				t.Errorf("at %d×%d the advice view lacks %q", w, h, want)
			}
		}
		if back := press(m, "a"); back.screen != screenGrid {
			t.Errorf("a does not close the advice view")
		}
		if back := press(m, "esc"); back.screen != screenGrid {
			t.Errorf("esc does not close the advice view")
		}
	}
	m := send(newModel(120, 40), ReportMsg{Report: rep})
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if footer := lines[len(lines)-1]; !strings.Contains(footer, "a advice") {
		t.Errorf("footer %q does not name the advice key", footer)
	}
	if help := ansi.Strip(press(m, "?").View()); !strings.Contains(help, "a") || !strings.Contains(help, "advice") {
		t.Errorf("help does not name the advice key:\n%s", help)
	}
}

// collapse turns every run of blanks into one, for text compared across
// wrapping.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
