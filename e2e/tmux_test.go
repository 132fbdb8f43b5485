package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// The end-to-end test drives the real binary in a real terminal (tmux): it
// starts `vtop --demo`, reads the screen, sends keys and checks what is
// drawn and that q exits cleanly. It needs tmux; CI installs it and sets
// VTOP_E2E=1 so that a missing tmux fails instead of skipping.

func TestDemoInTmux(t *testing.T) {
	requireTmux(t)
	bin := testutil.VtopBinary(t)
	session := fmt.Sprintf("vtop-e2e-%d", os.Getpid())
	dir := t.TempDir()
	tm := &tmuxSession{t: t, name: session, socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(120, 40, testutil.CoverEnv(t), bin+" --demo")
	defer tm.kill()

	// Each key is sent only once the screen shows what the key before it
	// led to, and each wait looks for something only that screen shows:
	// a key sent early would reach vtop glued to the one before (Escape
	// and q read as Alt+q, / and "full" as one key).
	tm.waitUntil("the grid", 10*time.Second, onGrid)
	tm.waitFor("a full replica in the demo fleet", 20*time.Second, "FULL")
	tm.waitFor("rates after warm-up", 20*time.Second, "req/s")

	tm.send("Enter")
	tm.waitFor("detail view", 5*time.Second, "running & waiting")
	tm.send("Escape")
	tm.waitUntil("back on the grid from the detail", 5*time.Second, onGrid)

	tm.send("t")
	tm.waitFor("table view", 5*time.Second, "6 of 6 replicas · sorted by")
	// Filter on the state every demo fleet shows (which replicas are FULL
	// at a given second varies, so the count is only known to shrink).
	tm.send("/")
	tm.waitFor("the filter prompt", 5*time.Second, "enter keep · esc clear")
	tm.sendLiteral("full")
	tm.waitFor("the filter typed", 5*time.Second, "/full")
	tm.send("Enter")
	tm.waitUntil("filter applied", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "filter full") && strings.Contains(screen, " of 6 replicas") &&
			!strings.Contains(screen, "6 of 6 replicas") && !strings.Contains(screen, " 0 of 6 replicas") &&
			!strings.Contains(screen, "HEALTHY   ") && !strings.Contains(screen, "enter keep · esc clear")
	})
	tm.send("Escape")
	tm.waitUntil("filter cleared", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "6 of 6 replicas · sorted by") && !strings.Contains(screen, "filter full")
	})
	tm.send("Escape")
	tm.waitUntil("back on the grid from the table", 5*time.Second, onGrid)

	tm.send("q")
	status := tm.waitExit(5 * time.Second)
	if status != "0" {
		t.Fatalf("vtop exited with status %q after q, want 0; screen:\n%s", status, tm.capture())
	}
}

// onGrid reports whether the screen is the grid: the only screen that
// draws replica panes in rounded boxes and has neither the detail's nor
// the table's header.
func onGrid(screen string) bool {
	return strings.Contains(screen, "╭─") && !strings.Contains(screen, "(esc back") && !strings.Contains(screen, " replicas · sorted by")
}

// tmuxSession is one detached tmux session on a private socket.
// requireTmux skips an end-to-end test under -short, or when tmux is
// missing, unless VTOP_E2E says it must run (CI sets it): then a missing
// tmux fails it.
func requireTmux(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test; skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("VTOP_E2E") != "" {
			t.Fatal("VTOP_E2E is set but tmux is not installed")
		}
		t.Skip("tmux not installed (set VTOP_E2E=1 to require it)")
	}
}

type tmuxSession struct {
	t          *testing.T
	name       string
	socket     string
	statusFile string // where the shell writes vtop's exit status
}

func (s *tmuxSession) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// start runs command in a new detached session of that size, with env
// (NAME=value) added to its environment.
func (s *tmuxSession) start(width, height int, env []string, command string) {
	s.t.Helper()
	// The shell records the exit status and keeps the pane open, so the
	// screen after exit can still be read.
	script := fmt.Sprintf("%s; echo $? > %s; sleep 60", command, s.statusFile)
	args := []string{"new-session", "-d", "-s", s.name, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-e", "TERM=xterm-256color"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	if out, err := s.tmux(append(args, "sh", "-c", script)...); err != nil {
		s.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
}

func (s *tmuxSession) capture() string {
	out, _ := s.tmux("capture-pane", "-p", "-t", s.name)
	return out
}

func (s *tmuxSession) send(keys ...string) {
	s.t.Helper()
	if out, err := s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...); err != nil {
		s.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

func (s *tmuxSession) sendLiteral(text string) {
	s.t.Helper()
	if out, err := s.tmux("send-keys", "-t", s.name, "-l", text); err != nil {
		s.t.Fatalf("tmux send-keys -l %q: %v\n%s", text, err, out)
	}
}

// waitFor polls the screen until it contains want, or fails with the screen.
func (s *tmuxSession) waitFor(what string, timeout time.Duration, want string) {
	s.t.Helper()
	s.waitUntil(what+": "+strconv.Quote(want), timeout, func(screen string) bool { return strings.Contains(screen, want) })
}

// waitUntil polls the screen until ok says yes, or fails with the screen.
func (s *tmuxSession) waitUntil(what string, timeout time.Duration, ok func(screen string) bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := s.capture()
		if ok(screen) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not on screen after %s; screen:\n%s", what, timeout, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits for the pane's process to end and returns its exit status.
func (s *tmuxSession) waitExit(timeout time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if status, err := os.ReadFile(s.statusFile); err == nil && len(status) > 0 {
			return strings.TrimSpace(string(status))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("vtop still running %s after q; screen:\n%s", timeout, s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tmuxSession) kill() {
	_, _ = s.tmux("kill-server")
}

// TestDashboardTerminalInTmux checks what the dashboard asks of the
// terminal it runs in: mouse reports (click, wheel) turned on, and colour
// as --color says whatever NO_COLOR says (always), or none at all (never).
func TestDashboardTerminalInTmux(t *testing.T) {
	requireTmux(t)
	tests := []struct {
		name   string
		args   string
		env    []string
		colour bool // SGR sequences on screen
	}{
		{"default", "", nil, true},
		{"--color never", "--color never", nil, false},
		{"--color always beats NO_COLOR", "--color always", []string{"NO_COLOR=1"}, true},
		{"NO_COLOR alone", "", []string{"NO_COLOR=1"}, false},
	}
	bin := testutil.VtopBinary(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-term-%d-%d", os.Getpid(), i),
				socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
			// CI emptied: termenv takes a set CI for "no terminal" and
			// would colour nothing, whatever the terminal can do.
			env := append(append(testutil.CoverEnv(t), "CI="), tt.env...)
			tm.start(100, 30, env, bin+" --demo --demo-fleet 2 "+tt.args)
			defer tm.kill()
			tm.waitUntil("the grid", 10*time.Second, onGrid)
			if flag, _ := tm.tmux("display-message", "-p", "-t", tm.name, "#{mouse_button_flag}"); strings.TrimSpace(flag) != "1" {
				t.Errorf("mouse button reports %q, want 1 (tea.WithMouseCellMotion)", strings.TrimSpace(flag))
			}
			screen, _ := tm.tmux("capture-pane", "-p", "-e", "-t", tm.name)
			if got := strings.Contains(screen, "\x1b["); got != tt.colour {
				t.Errorf("escape sequences on screen: %v, want %v:\n%q", got, tt.colour, screen)
			}
			tm.send("q")
			if status := tm.waitExit(5 * time.Second); status != "0" {
				t.Errorf("exit status %q after q, want 0; screen:\n%s", status, tm.capture())
			}
		})
	}
}

// `vtop --once` waits a whole window before it prints anything: on a
// terminal, stderr counts the wait down, and the count is gone when the
// report comes (TestOnceExitCodes checks that a stderr that is not a
// terminal gets nothing).
func TestOnceProgressInTmux(t *testing.T) {
	requireTmux(t)
	url := serveScenario(t, "healthy")
	bin := testutil.VtopBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.txt")
	tm := &tmuxSession{t: t, name: fmt.Sprintf("vtop-once-%d", os.Getpid()),
		socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(80, 24, testutil.CoverEnv(t), fmt.Sprintf("%s --once --window 8s %s > %s", bin, url, out))
	defer tm.kill()
	tm.waitFor("the countdown", 5*time.Second, "s left")
	if status := tm.waitExit(30 * time.Second); status != "0" {
		t.Fatalf("exit status %q, want 0; screen:\n%s", status, tm.capture())
	}
	if screen := tm.capture(); strings.Contains(screen, "left") {
		t.Errorf("the countdown stayed on screen after the report:\n%s", screen)
	}
	if report, err := os.ReadFile(out); err != nil || !strings.Contains(string(report), "HEALTHY") || strings.Contains(string(report), "left") {
		t.Errorf("report %q (%v), want the report alone", report, err)
	}
}
