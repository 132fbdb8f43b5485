package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
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
	testutil.Server
	addr string
}

// StartAlertmanager runs Debian's prometheus-alertmanager until the test
// ends, or skips the test when it is not installed (fails it when
// RequireAlertmanagerEnv is set) or under -short.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := testutil.Binary(t, alertmanagerBinary, "prometheus-alertmanager", RequireAlertmanagerEnv)
	a := &Alertmanager{Server: testutil.NewServer(t, "alertmanager"), addr: testutil.ClosedPort(t)}
	config := "route:\n  receiver: nowhere\nreceivers:\n  - name: nowhere\n"
	if err := os.WriteFile(filepath.Join(a.Dir, "alertmanager.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	a.Run(bin, []string{"--config.file=" + filepath.Join(a.Dir, "alertmanager.yml"),
		"--storage.path=" + filepath.Join(a.Dir, "data"), "--web.listen-address=" + a.addr,
		"--cluster.listen-address="}, a.URL()+"/-/ready", 30*time.Second)
	return a
}

// URL is the server's base URL.
func (a *Alertmanager) URL() string { return "http://" + a.addr }

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
	a.T.Helper()
	resp, err := http.Get(a.URL() + "/api/v2/alerts")
	if err != nil {
		a.T.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.T.Fatalf("GET /api/v2/alerts: %s", resp.Status)
	}
	var alerts []HeldAlert
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		a.T.Fatalf("GET /api/v2/alerts: %v", err)
	}
	return alerts
}

// String writes the alert's labels and times, for failure messages.
func (h HeldAlert) String() string {
	return fmt.Sprintf("%v %s startsAt %s endsAt %s", h.Labels, h.Status.State, h.StartsAt.Format(time.RFC3339Nano), h.EndsAt.Format(time.RFC3339Nano))
}
