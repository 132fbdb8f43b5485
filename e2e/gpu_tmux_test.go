package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// stripTitle is the GPU strip's first line when it draws a cell per GPU.
var stripTitle = regexp.MustCompile(`(?m)^GPUs \d+  from dcgm-exporter ×6`)

// gpuCell is one GPU's cell: name, bars, power, temperature, clock.
var gpuCell = regexp.MustCompile(`sim-node-\d/\d util [█░]{8} +\d+% mem [█░]{8} +\d+% +\d+/700W +\d+°C +\d+MHz`)

// stripLine is the strip folded into one line.
var stripLine = regexp.MustCompile(`(?m)^GPUs \d+  (XID \d+ on \S+  )*util \d+% avg \d+% max  mem \d+%`)

// TestDemoGPUStripInTmux: `vtop --demo` shows the GPUs of its simulated
// replicas: at 200×60 a strip with a cell per GPU, the XID of the GPU put
// into that fault, GPU columns in the table and the GPU lines of the
// detail view; at 80×24 the strip is one line.
func TestDemoGPUStripInTmux(t *testing.T) {
	requireTmux(t)
	bin := testutil.VtopBinary(t)
	dir := t.TempDir()
	tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-gpu-%d", os.Getpid()), socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(200, 60, testutil.CoverEnv(t), bin+" --demo --demo-gpu-fault xid@2")
	defer tm.kill()

	tm.waitUntil("the GPU strip with a cell per GPU and the XID", 20*time.Second, func(screen string) bool {
		return stripTitle.MatchString(screen) && len(gpuCell.FindAllString(screen, -1)) >= 6 && strings.Contains(screen, "XID 79")
	})

	tm.send("t")
	tm.waitUntil("the table's GPU columns", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "sorted by") && strings.Contains(screen, "GPU%") && strings.Contains(screen, "GMEM%")
	})
	tm.send("Escape")
	tm.waitUntil("back on the grid", 5*time.Second, onGrid)
	tm.send("Enter")
	tm.waitFor("the detail's GPU lines", 5*time.Second, "(joined by pod vllm-")
	tm.send("Escape")
	tm.waitUntil("back on the grid", 5*time.Second, onGrid)

	if out, err := tm.tmux("resize-window", "-t", tm.name, "-x", "80", "-y", "24"); err != nil {
		t.Fatalf("tmux resize-window: %v\n%s", err, out)
	}
	tm.waitUntil("the strip folded into one line at 80×24", 5*time.Second, func(screen string) bool {
		return stripLine.MatchString(screen) && !gpuCell.MatchString(screen) && onGrid(screen)
	})

	tm.send("q")
	if status := tm.waitExit(5 * time.Second); status != "0" {
		t.Fatalf("vtop exited with status %q after q, want 0; screen:\n%s", status, tm.capture())
	}
}
