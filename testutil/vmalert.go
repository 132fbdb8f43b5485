package testutil

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// VMAlert is Debian's vmalert evaluating rule files against a
// VictoriaMetrics and writing what they record, and the alerts' series,
// back into it; its notifications go to a sink of the test. It is stopped
// when the test ends.
type VMAlert struct {
	t    testing.TB
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartVMAlert runs vmalert over vm every evaluation interval with the
// rule files, or skips the test when vmalert is not installed (fails it
// when RequireVictoriaMetricsEnv is set).
func StartVMAlert(t testing.TB, vm *VictoriaMetrics, evaluation time.Duration, ruleFiles ...string) *VMAlert {
	t.Helper()
	bin := VMAlertBinary(t)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(sink.Close)
	a := &VMAlert{t: t, dir: t.TempDir()}
	addr := ClosedPort(t)
	args := []string{"-datasource.url=" + vm.URL(), "-remoteWrite.url=" + vm.URL(), "-notifier.url=" + sink.URL,
		"-evaluationInterval=" + evaluation.String(), "-httpListenAddr=" + addr, "-loggerLevel=WARN",
		"-remoteWrite.flushInterval=" + (evaluation / 2).String()}
	for _, f := range ruleFiles {
		args = append(args, "-rule="+f)
	}
	log, err := os.Create(filepath.Join(a.dir, "vmalert.log"))
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(bin, args...)
	a.cmd.Stdout, a.cmd.Stderr = log, log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.done = make(chan struct{})
	go func() { _ = a.cmd.Wait(); log.Close(); close(a.done) }()
	t.Cleanup(a.Stop)
	WaitFor(t, 30*time.Second, "vmalert to answer", func() bool {
		select {
		case <-a.done:
			t.Fatalf("vmalert exited at start; its log: %s", a.Log())
		default:
		}
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return a
}

// Stop ends vmalert (SIGTERM, then SIGKILL) and waits for it.
func (a *VMAlert) Stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	select {
	case <-a.done:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// Log returns the tail of vmalert's log.
func (a *VMAlert) Log() string {
	b, _ := os.ReadFile(filepath.Join(a.dir, "vmalert.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// VMAlertBinary returns the path of Debian's vmalert, or skips the test
// (fails it when RequireVictoriaMetricsEnv is set); under -short it skips it.
func VMAlertBinary(t testing.TB) string {
	t.Helper()
	return Binary(t, "vmalert", "vmalert", RequireVictoriaMetricsEnv)
}
