package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// TestReplayKeysInTmux drives `vtop replay` in a real terminal: a fleet
// recorded live by the binary is replayed, and each key of the replay
// (pause, step back and forth, next and previous state change, start and
// end, speed) moves the header's position where the recording says it
// must: the state changes are found in `vtop replay --jsonl`'s reports.
func TestReplayKeysInTmux(t *testing.T) {
	requireTmux(t)
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.vtrec")
	urls := simChild(t, 3, sim.Mixed)
	runOK(t, append([]string{"--jsonl", "--record", path, "--duration", "12s", "--window", "3s"}, urls...)...)
	reports, _ := runOK(t, "replay", path, "--jsonl")
	at, changes := replayPlan(t, reports)
	if len(changes) == 0 {
		t.Fatalf("no state change in the recording (the first report warms up, the next has states):\n%s", reports)
	}
	length := at[len(at)-1]
	t.Logf("%d reports over %s; state changes at reports %v", len(at), length, changes)

	tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-replay-%d", os.Getpid()), socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(80, 24, testutil.CoverEnv(t), testutil.VtopBinary(t)+" replay "+path)
	defer tm.kill()
	pos := func(i int) string { return "(" + at[i] + " of " + length + ")" }

	tm.waitFor("the replay line", 10*time.Second, "REPLAY ")
	tm.send("Space")
	tm.waitFor("paused", 5*time.Second, " paused")
	tm.send("g")
	tm.waitFor("the start", 5*time.Second, pos(0)+" ×1 paused")
	tm.send(".")
	tm.waitFor("one scrape forward", 5*time.Second, pos(1)+" ×1 paused")
	tm.send(",")
	tm.waitFor("one scrape back", 5*time.Second, pos(0)+" ×1 paused")
	tm.send("n")
	tm.waitFor("the first state change", 5*time.Second, pos(changes[0]))
	tm.send("n")
	if len(changes) > 1 {
		tm.waitFor("the second state change", 10*time.Second, pos(changes[1]))
		tm.send("N")
		tm.waitFor("back to the first state change", 5*time.Second, pos(changes[0]))
	} else {
		tm.waitFor("no second state change", 10*time.Second, "no later state change")
		tm.send("N")
		tm.waitFor("no state change before the first", 5*time.Second, "no earlier state change")
	}
	tm.send("G")
	tm.waitFor("the end", 5*time.Second, pos(len(at)-1)+" ×1 paused")
	tm.send(">")
	tm.waitFor("faster", 5*time.Second, pos(len(at)-1)+" ×10 paused")
	tm.send("<")
	tm.waitFor("slower", 5*time.Second, pos(len(at)-1)+" ×1 paused")
	tm.send("?")
	tm.waitUntil("the replay's keys in the help", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "replay") && strings.Contains(screen, "space pause") && strings.Contains(screen, "n N   change")
	})
	tm.send("Escape")
	tm.waitUntil("back on the grid", 5*time.Second, onGrid)
	tm.send("q")
	if status := tm.waitExit(5 * time.Second); status != "0" {
		t.Fatalf("vtop replay exited with status %q after q, want 0; screen:\n%s", status, tm.capture())
	}
}

// replayPlan reads the replayed reports: each one's offset from the first
// as the replay line writes it, and the reports where some replica's
// state differs from the report before.
func replayPlan(t *testing.T, jsonl string) (at []string, changes []int) {
	t.Helper()
	var first time.Time
	var prev []string
	for i, line := range lines(jsonl) {
		var r struct {
			Time     time.Time `json:"time"`
			Replicas []struct {
				State string `json:"state"`
			} `json:"replicas"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("report %d: %v", i+1, err)
		}
		if i == 0 {
			first = r.Time
		}
		d := r.Time.Sub(first).Round(time.Second)
		at = append(at, fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60))
		var states []string
		for _, rep := range r.Replicas {
			states = append(states, rep.State)
		}
		if i > 0 && !slices.Equal(states, prev) {
			changes = append(changes, i)
		}
		prev = states
	}
	return at, changes
}
