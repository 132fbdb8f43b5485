package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// TestFleetFirstScreenInTmux runs the demo fleet of 50 replicas in a real
// 80×24 terminal and checks what an on-call engineer sees first: the
// worst replicas, worst first, and a table whose rows can be told apart.
func TestFleetFirstScreenInTmux(t *testing.T) {
	requireTmux(t)
	bin := testutil.VtopBinary(t)
	dir := t.TempDir()
	term := &tmuxSession{t: t, name: "fleet", socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	term.start(80, 24, testutil.CoverEnv(t), bin+" --demo --demo-fleet 50 --demo-scenario mixed")
	t.Cleanup(term.kill)

	// Warm-up is over when every replica has its rates: the header stops
	// saying so and counts 50 replicas in their states.
	term.waitUntil("the fleet after warm-up", 30*time.Second, func(s string) bool {
		return !strings.Contains(s, "warming up") && fleetCounted(s) == 50
	})
	// Several frames in a row, each consistent (a frame captured in the
	// middle of a redraw does not count 50 replicas and is taken again).
	deadline := time.Now().Add(20 * time.Second)
	for checked := 0; checked < 5; {
		screen := term.capture()
		if fleetCounted(screen) != 50 {
			if time.Now().After(deadline) {
				t.Fatalf("no consistent frame:\n%s", screen)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		checkWorstFirst(t, screen)
		checked++
		time.Sleep(300 * time.Millisecond)
	}

	term.send("t")
	term.waitUntil("the table", 5*time.Second, func(s string) bool { return strings.Contains(s, "sorted by") })
	checkRowsDistinct(t, term.capture())

	term.send("q")
	if status := term.waitExit(5 * time.Second); status != "0" {
		t.Errorf("vtop exited with status %q after q, want 0", status)
	}
}

// fleetRanks are the state words by their rank in the worst-first order
// (analysis.SeverityOf): the urgent states share one, so that the
// evidence orders them.
var fleetRanks = [][]string{{"DOWN"}, {"PREEMPTING", "FULL", "SLOW"}, {"STALE"}, {"WARMING", "UNJUDGED"}, {"SLEEPING"}, {"IDLE"}, {"HEALTHY"}}

var (
	headerCount = regexp.MustCompile(`\b(DOWN|PREEMPTING|FULL|SLOW|STALE|WARMING|UNJUDGED|SLEEPING|IDLE|HEALTHY) (\d+)\b`)
	headerWorst = regexp.MustCompile(`\bworst \S+ (DOWN|PREEMPTING|FULL|SLOW|STALE|WARMING|UNJUDGED|SLEEPING|IDLE|HEALTHY)\b`)
	paneBadge   = regexp.MustCompile(`(DOWN|PREEMPTING|FULL|SLOW|STALE|WARMING|UNJUDGED|SLEEPING|IDLE|HEALTHY)[│┃]`)
)

// headerLines are the lines above the first pane or table.
func headerLines(screen string) []string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "╭") || strings.HasPrefix(l, "┏") || strings.Contains(l, "sorted by") {
			return lines[:i]
		}
	}
	return lines
}

// headerCounts are the replicas the header counts per state.
func headerCounts(screen string) map[string]int {
	counts := map[string]int{}
	for _, m := range headerCount.FindAllStringSubmatch(strings.Join(headerLines(screen), "\n"), -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] = n
	}
	return counts
}

// fleetCounted is how many replicas the header counts.
func fleetCounted(screen string) int {
	total := 0
	for _, n := range headerCounts(screen) {
		total += n
	}
	return total
}

// severity is a state's rank, 0 for the worst.
func severity(state string) int {
	for i, rank := range fleetRanks {
		for _, s := range rank {
			if s == state {
				return i
			}
		}
	}
	return len(fleetRanks)
}

// checkWorstFirst fails unless the panes drawn start with the replica the
// header names worst, the first pane's rank is the worst rank the header
// counts, and the panes go on worst first.
func checkWorstFirst(t *testing.T, screen string) {
	t.Helper()
	counts := headerCounts(screen)
	worstRank := len(fleetRanks)
	for s, n := range counts {
		if n > 0 {
			worstRank = min(worstRank, severity(s))
		}
	}
	m := headerWorst.FindStringSubmatch(strings.Join(headerLines(screen), "\n"))
	if m == nil {
		t.Fatalf("the header names no worst replica:\n%s", screen)
	}
	worst := m[1]
	var panes []string
	for _, l := range strings.Split(screen, "\n")[len(headerLines(screen)):] {
		for _, m := range paneBadge.FindAllStringSubmatch(l, -1) {
			panes = append(panes, m[1])
		}
	}
	if len(panes) == 0 {
		t.Fatalf("no pane on the first screen:\n%s", screen)
	}
	if panes[0] != worst || severity(worst) != worstRank {
		t.Errorf("the first pane is %s while the header names %s worst, of rank %d; the worst rank counted is %d:\n%s", panes[0], worst, severity(worst), worstRank, screen)
	}
	for i := 1; i < len(panes); i++ {
		if severity(panes[i]) < severity(panes[i-1]) {
			t.Errorf("panes not worst first: %v\n%s", panes, screen)
			break
		}
	}
}

// checkRowsDistinct fails when two rows of the table draw the same target.
func checkRowsDistinct(t *testing.T, screen string) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	seen := map[string]bool{}
	rows := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "▸ ") && !strings.HasPrefix(l, "  ") {
			continue
		}
		target, _, _ := strings.Cut(strings.TrimLeft(strings.TrimPrefix(l, "▸"), " "), " ")
		if target == "" || target == "target" {
			continue
		}
		if seen[target] {
			t.Errorf("two rows drawn as %q:\n%s", target, screen)
		}
		seen[target] = true
		rows++
	}
	if rows < 10 {
		t.Errorf("only %d table rows at 80×24:\n%s", rows, screen)
	}
}
