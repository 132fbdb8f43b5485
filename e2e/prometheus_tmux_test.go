package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// TestPrometheusHistoryInTmux: pointed at a Prometheus that has scraped a
// fleet for a while, the dashboard's first frames already draw that past
// in the sparklines, where direct scrapes would show a single point: the
// history comes from the server, not from waiting.
func TestPrometheusHistoryInTmux(t *testing.T) {
	requireTmux(t)
	urls := simChild(t, 2, sim.Healthy)
	instances := make([]string, len(urls))
	for i, u := range urls {
		instances[i] = strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/metrics")
	}
	prom := testutil.StartPrometheus(t, time.Second, instances)
	prom.WaitForWindow(20 * time.Second)

	bin := testutil.VtopBinary(t)
	dir := t.TempDir()
	tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-prom-%d", os.Getpid()), socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	start := time.Now()
	tm.start(120, 40, testutil.CoverEnv(t), bin+" --prometheus "+prom.URL()+` --selector '{job="vllm"}' --interval 1s --window 10s --history 1m`)
	defer tm.kill()

	// The history arrives beside the first report, in either order. Live
	// scrapes draw one point per sparkline at start and one more each
	// second, so more points than the seconds since start (with a margin
	// of 8) can only be the server's past.
	var screen string
	tm.waitUntil("the replicas from Prometheus with their past", 10*time.Second, func(s string) bool {
		screen = s
		return strings.Contains(s, "source Prometheus") && strings.Count(s, "run ") >= 2 &&
			sparkPoints(s, "run") >= int(time.Since(start).Seconds())+8
	})
	if points, elapsed := sparkPoints(screen, "run"), time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the past appeared only after %.1fs (%d points): want it on the first frames", elapsed.Seconds(), points)
	}
	tm.send("q")
	if status := tm.waitExit(5 * time.Second); status != "0" {
		t.Errorf("vtop exited with status %q after q, want 0", status)
	}
}

// sparkPoints is the most sparkline cells drawn on a line that carries the
// label: each point of the history draws at least ▁ on the bottom row.
func sparkPoints(screen, label string) int {
	most := 0
	for _, line := range strings.Split(screen, "\n") {
		for _, pane := range strings.FieldsFunc(line, func(r rune) bool { return r == '│' || r == '┃' }) {
			if !strings.HasPrefix(pane, label+" ") {
				continue
			}
			n := 0
			for _, r := range pane {
				if r >= '▁' && r <= '█' {
					n++
				}
			}
			most = max(most, n)
		}
	}
	return most
}
