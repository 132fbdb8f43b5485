package testutil

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// RequireAlertmanagerEnv makes a missing prometheus-alertmanager binary a
// failure instead of a skip (CI sets it: the test of --alertmanager
// against the real server must run there).
const RequireAlertmanagerEnv = "VTOP_REQUIRE_ALERTMANAGER"

// alertmanagerBinary is the name of Debian's Alertmanager binary.
const alertmanagerBinary = "prometheus-alertmanager"

// Alertmanager is a real Alertmanager run by a test on a free loopback
// port, clustering off, with a receiver that sends nowhere: what it holds
// is read back through its API.
type Alertmanager struct {
	t    testing.TB
	dir  string
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartAlertmanager runs Debian's prometheus-alertmanager until the test
// ends, or skips the test when it is not installed (fails it when
// RequireAlertmanagerEnv is set) or under -short.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := Binary(t, alertmanagerBinary, "prometheus-alertmanager", RequireAlertmanagerEnv)
	a := &Alertmanager{t: t, dir: t.TempDir(), addr: ClosedPort(t)}
	config := "route:\n  receiver: nowhere\nreceivers:\n  - name: nowhere\n"
	if err := os.WriteFile(filepath.Join(a.dir, "alertmanager.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(a.dir, "alertmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(bin, "--config.file="+filepath.Join(a.dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(a.dir, "data"), "--web.listen-address="+a.addr,
		"--cluster.listen-address=")
	a.cmd.Stdout, a.cmd.Stderr = log, log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.done = make(chan struct{})
	go func() { _ = a.cmd.Wait(); log.Close(); close(a.done) }()
	t.Cleanup(a.stop)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(a.URL() + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return a
			}
		}
		select {
		case <-a.done:
			t.Fatalf("alertmanager exited at start; its log: %s", a.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("alertmanager not ready within 30s; its log: %s", a.Log())
	return nil
}

// URL is the server's base URL.
func (a *Alertmanager) URL() string { return "http://" + a.addr }

// Log returns the tail of the server's log.
func (a *Alertmanager) Log() string {
	b, _ := os.ReadFile(filepath.Join(a.dir, "alertmanager.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (a *Alertmanager) stop() {
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// HeldAlert is an alert as GET /api/v2/alerts returns it.
type HeldAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// Alerts returns the alerts the server holds and has not resolved.
func (a *Alertmanager) Alerts() []HeldAlert {
	a.t.Helper()
	resp, err := http.Get(a.URL() + "/api/v2/alerts")
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET /api/v2/alerts: %s", resp.Status)
	}
	var alerts []HeldAlert
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		a.t.Fatalf("GET /api/v2/alerts: %v", err)
	}
	return alerts
}

// String writes the alert's labels and times, for failure messages.
func (h HeldAlert) String() string {
	return fmt.Sprintf("%v %s startsAt %s endsAt %s", h.Labels, h.Status.State, h.StartsAt.Format(time.RFC3339Nano), h.EndsAt.Format(time.RFC3339Nano))
}
