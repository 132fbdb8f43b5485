package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// VtopPackage is the import path of the vtop command, built by its tests.
const VtopPackage = "github.com/vtop-dev/vtop"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// coverDir, from $VTOP_COVERDIR, builds the binary with coverage counters
// and has every run of it write them there: CI measures the command line's
// coverage this way (go tool covdata percent -i DIR).
var coverDir = os.Getenv("VTOP_COVERDIR")

// VtopBinary builds the command once per test binary, static as the
// README builds it, with coverage counters when $VTOP_COVERDIR is set.
func VtopBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vtop-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "vtop")
		args := []string{"build", "-o", binPath}
		if coverDir != "" {
			args = append(args, "-cover", "-coverpkg="+VtopPackage+"/...")
		}
		build := exec.Command("go", append(args, VtopPackage)...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// CoverEnv is the environment a run of the binary needs to write its
// coverage counters: none unless $VTOP_COVERDIR is set.
func CoverEnv(t testing.TB) []string {
	t.Helper()
	if coverDir == "" {
		return nil
	}
	dir, err := filepath.Abs(coverDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("VTOP_COVERDIR: %v", err)
	}
	return []string{"GOCOVERDIR=" + dir}
}

// VtopCommand prepares a run of the binary.
func VtopCommand(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(VtopBinary(t), args...)
	cmd.Env = append(os.Environ(), CoverEnv(t)...)
	return cmd
}

// RunVtop runs the binary and returns stdout, stderr and the exit code.
func RunVtop(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := VtopCommand(t, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code = ExitStatus(t, cmd.Run(), args)
	return out.String(), errOut.String(), code
}

// ExitStatus is the exit code of a finished run whose Wait or Run returned
// err.
func ExitStatus(t testing.TB, err error, args []string) int {
	t.Helper()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("vtop %v: %v", args, err)
	}
	return 0
}

// RunWithin runs cmd and fails the test if it has not ended after limit:
// a run that should stop by itself must not hang the test.
func RunWithin(t testing.TB, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return WaitWithin(t, cmd, limit)
}

// WaitWithin waits for a started cmd, killing it after limit.
func WaitWithin(t testing.TB, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("vtop %v still running after %v", cmd.Args[1:], limit)
		return nil
	}
}

// StartVtop runs `vtop ARGS` (a sim command) until the test ends and
// returns the n URLs it prints.
func StartVtop(t testing.TB, args []string, n int) []string {
	t.Helper()
	cmd := VtopCommand(t, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	var urls []string
	for len(urls) < n && lines.Scan() {
		urls = append(urls, lines.Text())
	}
	if len(urls) < n {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("vtop %v printed %d URLs, want %d; stderr: %s", args, len(urls), n, stderr.String())
	}
	return urls
}
