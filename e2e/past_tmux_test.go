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

// TestPastInTmux: the past of a fleet going into a spike, read from a
// real Prometheus on a real terminal in another zone than UTC: --from
// and --to given as local clock times, the replay line says the day and
// the zone, the screen's clock is local, and the time keys move through
// the stretch to the replicas turning FULL. The past is back-filled from
// the simulator's history, so that what the stretch holds does not hang
// on how fast a loaded machine scraped it.
func TestPastInTmux(t *testing.T) {
	requireTmux(t)
	testutil.PrometheusTool(t, "promtool")
	const zone = "Asia/Kolkata" // UTC+05:30: a half-hour zone shows any mix-up
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Skipf("no zone database: %v", err)
	}
	// 50 s of warm-up: both replicas are FULL from about 40 s into the
	// history on.
	history := filepath.Join(t.TempDir(), "history.om")
	if out, errOut, code := testutil.RunVtop(t, "sim", "--replicas", "2", "--scenario", string(sim.Spike), "--warm-up", "50s",
		"--history", "60s", "--step", "1s", "--end", "now-5s", "-o", history); code != 0 {
		t.Fatalf("vtop sim --history: exit %d\n%s%s", code, out, errOut)
	}
	prom := testutil.ServeBlocks(t, testutil.Backfill(t, history))

	from := scrapeTimes(t, history)[0].Add(14 * time.Second).In(loc).Truncate(time.Second)
	to := from.Add(30 * time.Second)
	dir := t.TempDir()
	tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-past-%d", os.Getpid()), socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(120, 40, append(testutil.CoverEnv(t), "TZ="+zone), testutil.VtopBinary(t)+" --prometheus "+prom.URL()+
		` --selector '{job="vllm"}' --window 12s --interval 2s --from `+from.Format("15:04:05")+" --to "+to.Format("15:04:05"))
	defer tm.kill()

	note := from.Format("2006-01-02") + " UTC+05:30 local (IST), from Prometheus"
	tm.waitFor("the replay line with the day and the zone", 15*time.Second, note)
	tm.send("Space")
	tm.waitFor("paused", 5*time.Second, " paused")
	tm.send("g")
	tm.waitFor("the start, at --from in local time", 5*time.Second, "REPLAY "+from.Format("15:04:05")+" (0m00s of 0m30s) ×1 paused")
	tm.send(".")
	tm.waitFor("one report forward", 5*time.Second, "REPLAY "+from.Add(2*time.Second).Format("15:04:05")+" (0m02s of 0m30s)")
	tm.send("G")
	tm.waitFor("the end, at --to", 5*time.Second, "REPLAY "+to.Format("15:04:05")+" (0m30s of 0m30s)")
	tm.waitUntil("the spike: a replica FULL at the end", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "FULL 1") || strings.Contains(s, "FULL 2")
	})
	tm.send("g")
	tm.waitFor("back at the start", 5*time.Second, "(0m00s of 0m30s)")
	tm.send("n")
	tm.waitUntil("a state change forward", 10*time.Second, func(s string) bool {
		return strings.Contains(s, " paused") && !strings.Contains(s, "(0m00s of") && strings.Contains(s, "events")
	})
	t.Logf("at the first change of the fleet's picture:\n%s", tm.capture())
	first := firstEventLine(tm.capture())
	if first == "" {
		t.Fatalf("no event at the first change:\n%s", tm.capture())
	}
	// The event log is the stretch's, read once: a jump forward keeps what
	// came before the new position.
	tm.send("G")
	tm.waitFor("the end again", 5*time.Second, "(0m30s of 0m30s)")
	tm.waitFor("the events before the end, kept across the jump", 5*time.Second, first)
	tm.send("N")
	tm.waitUntil("a change of the picture back from the end", 10*time.Second, func(s string) bool {
		return strings.Contains(s, " paused") && !strings.Contains(s, "(0m30s of") && !strings.Contains(s, "computing;")
	})
	tm.send("q")
	if status := tm.waitExit(5 * time.Second); status != "0" {
		t.Fatalf("vtop exited with status %q after q, want 0; screen:\n%s", status, tm.capture())
	}
}

// firstEventLine is the newest line of the event panel under the grid,
// without its clock time and colours: "vllm-0:8000 SLOW: …".
func firstEventLine(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "events") && i+1 < len(lines) {
			f := strings.Fields(lines[i+1])
			if len(f) >= 3 {
				return f[1] + " " + f[2]
			}
		}
	}
	return ""
}
