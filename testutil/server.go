package testutil

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Server is a real server binary run by a test: its output in a log in
// Dir, a directory of the test, stopped when the test ends. Prometheus,
// VictoriaMetrics, vmalert and Alertmanager each are one.
type Server struct {
	T    testing.TB
	Dir  string
	name string // the binary's, in messages and the log's file name
	cmd  *exec.Cmd
	done chan struct{}
}

// NewServer is the server of binary name, not yet started.
func NewServer(t testing.TB, name string) Server {
	return Server{T: t, name: name, Dir: t.TempDir()}
}

// Run runs bin with args (again, after Stop: the log is appended to) and
// waits until GET ready answers 200, failing the test if the server exits
// first or is not ready within limit.
func (s *Server) Run(bin string, args []string, ready string, limit time.Duration) {
	s.T.Helper()
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		s.T.Fatal(err)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.T.Fatal(err)
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); log.Close(); close(s.done) }()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-s.done:
			s.T.Fatalf("%s exited at start; its log: %s", s.name, s.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.T.Fatalf("%s not ready within %s; its log: %s", s.name, limit, s.Log())
}

// Stop ends the server (SIGTERM, then SIGKILL) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Log returns the tail of the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (s *Server) logPath() string { return filepath.Join(s.Dir, s.name+".log") }
