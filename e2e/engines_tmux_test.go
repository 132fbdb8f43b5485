package e2e

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// engineRow is a table row's engine and state columns.
var engineRow = regexp.MustCompile(`\s(vllm|sglang|trtllm|tgi|llamacpp)\s+(HEALTHY|IDLE|SLEEPING|UNJUDGED|WARMING|STALE|SLOW|FULL|PREEMPTING|DOWN)\b`)

// TestEnginesFleetInTmux watches a simulated fleet of every engine (vtop
// sim --scenario engines: replica i served as the i-th engine's page, in
// the mixed scenario's state) in a real terminal: the table names each
// replica's engine, and each is judged on its own page, none of them DOWN.
func TestEnginesFleetInTmux(t *testing.T) {
	requireTmux(t)
	bin := testutil.VtopBinary(t)
	urls := testutil.StartVtop(t, []string{"sim", "--scenario", "engines", "--replicas", "5", "--seed", "1"}, 5)
	dir := t.TempDir()
	term := &tmuxSession{t: t, name: "engines", socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	term.start(160, 30, testutil.CoverEnv(t), bin+" --interval 500ms "+strings.Join(urls, " "))
	t.Cleanup(term.kill)

	term.send("t")
	// What each engine's replica plays (sim's mixed order) and may be
	// judged: the TensorRT-LLM replica's p99 TTFT hovers about the SLO;
	// TGI's KV cache, too small for its batch, holds a queue (FULL); no
	// latency histograms on llama.cpp's page leave it UNJUDGED.
	want := map[string][]string{
		"vllm":     {"HEALTHY"},
		"sglang":   {"FULL"},
		"trtllm":   {"SLOW", "HEALTHY"},
		"tgi":      {"FULL"},
		"llamacpp": {"UNJUDGED"},
	}
	term.waitUntil("every engine in the table in its state", 40*time.Second, func(screen string) bool {
		if !strings.Contains(screen, "sorted by") || strings.Contains(screen, "warming up") {
			return false
		}
		last := map[string]string{}
		for _, m := range engineRow.FindAllStringSubmatch(screen, -1) {
			last[m[1]] = m[2]
		}
		for engine, states := range want {
			if !slices.Contains(states, last[engine]) {
				return false
			}
		}
		return true
	})
	screen := term.capture()
	if !strings.Contains(screen, " engine ") {
		t.Errorf("no engine column in the table:\n%s", screen)
	}
	if strings.Contains(screen, "DOWN") {
		t.Errorf("a replica is DOWN:\n%s", screen)
	}
	term.send("q")
	if status := term.waitExit(5 * time.Second); status != "0" {
		t.Errorf("vtop exited with status %q after q, want 0", status)
	}
}
