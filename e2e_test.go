package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The end-to-end test drives the real binary in a real terminal (tmux): it
// starts `vtop --demo`, reads the screen, sends keys and checks what is
// drawn and that q exits cleanly. It needs tmux; CI installs it and sets
// VTOP_E2E=1 so that a missing tmux fails instead of skipping.

func TestDemoInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("VTOP_E2E") != "" {
			t.Fatal("VTOP_E2E is set but tmux is not installed")
		}
		t.Skip("tmux not installed (set VTOP_E2E=1 to require it)")
	}
	bin := vtopBinary(t)
	session := fmt.Sprintf("vtop-e2e-%d", os.Getpid())
	dir := t.TempDir()
	tm := &tmuxSession{t: t, name: session, socket: filepath.Join(dir, "tmux.sock"), statusFile: filepath.Join(dir, "status")}
	tm.start(120, 40, bin+" --demo")
	defer tm.kill()

	tm.waitFor("fleet header", 10*time.Second, "replicas")
	tm.waitFor("a full replica in the demo fleet", 20*time.Second, "FULL")
	tm.waitFor("rates after warm-up", 20*time.Second, "req/s")

	tm.send("Enter")
	tm.waitFor("detail view", 5*time.Second, "running & waiting")
	tm.send("Escape")
	tm.waitFor("back on the grid", 5*time.Second, "replicas")

	tm.send("t")
	tm.waitFor("table view", 5*time.Second, "6 of 6 replicas")
	// Filter on the state every demo fleet shows (which replicas are FULL
	// at a given second varies, so the count is only known to shrink).
	tm.send("/")
	tm.sendLiteral("full")
	tm.send("Enter")
	tm.waitUntil("filter applied", 5*time.Second, func(screen string) bool {
		return strings.Contains(screen, "filter full") && strings.Contains(screen, " of 6 replicas") &&
			!strings.Contains(screen, "6 of 6 replicas") && !strings.Contains(screen, " 0 of 6 replicas") &&
			!strings.Contains(screen, "HEALTHY   ")
	})
	tm.send("Escape")
	tm.waitFor("filter cleared", 5*time.Second, "6 of 6 replicas")
	tm.send("Escape")
	tm.waitFor("back on the grid", 5*time.Second, "replicas")

	tm.send("q")
	status := tm.waitExit(5 * time.Second)
	if status != "0" {
		t.Fatalf("vtop exited with status %q after q, want 0; screen:\n%s", status, tm.capture())
	}
}

// tmuxSession is one detached tmux session on a private socket.
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

func (s *tmuxSession) start(width, height int, command string) {
	s.t.Helper()
	// The shell records the exit status and keeps the pane open, so the
	// screen after exit can still be read.
	script := fmt.Sprintf("%s; echo $? > %s; sleep 60", command, s.statusFile)
	if out, err := s.tmux("new-session", "-d", "-s", s.name,
		"-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "-e", "TERM=xterm-256color", "sh", "-c", script); err != nil {
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
	// A terminal cannot tell a lone Escape from the start of an Alt
	// sequence: a key typed right after it reads as Alt+key. Pause as a
	// person would.
	if keys[len(keys)-1] == "Escape" {
		time.Sleep(200 * time.Millisecond)
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
