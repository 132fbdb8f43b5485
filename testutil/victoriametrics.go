package testutil

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// RequireVictoriaMetricsEnv makes a missing victoria-metrics binary a
// failure instead of a skip (CI sets it: the tests against a real
// VictoriaMetrics must run there).
const RequireVictoriaMetricsEnv = "VTOP_REQUIRE_VICTORIAMETRICS"

// VictoriaMetricsBinary returns the path of Debian's victoria-metrics (the
// single-node server), or skips the test (fails it when
// RequireVictoriaMetricsEnv is set); under -short it skips it.
func VictoriaMetricsBinary(t testing.TB) string {
	t.Helper()
	return Binary(t, "victoria-metrics", "victoria-metrics", RequireVictoriaMetricsEnv)
}

// VictoriaMetrics is a real single-node VictoriaMetrics run by a test on a
// free loopback port, its data in a directory of the test, keeping
// samples of any age (retention 100 years) and caching no answer, so
// that what was imported is what a query reads.
type VictoriaMetrics struct {
	server
	addr string
}

// StartVictoriaMetrics runs an empty VictoriaMetrics until the test ends
// and waits until it answers; extra are further flags.
func StartVictoriaMetrics(t testing.TB, extra ...string) *VictoriaMetrics {
	t.Helper()
	bin := VictoriaMetricsBinary(t)
	v := &VictoriaMetrics{server: newServer(t, "victoria-metrics"), addr: ClosedPort(t)}
	t.Cleanup(v.Stop)
	v.start(bin, append([]string{"-storageDataPath=" + filepath.Join(v.dir, "data"), "-httpListenAddr=" + v.addr,
		"-retentionPeriod=100y", "-search.disableCache", "-loggerLevel=WARN"}, extra...), v.URL()+"/health", 30*time.Second)
	return v
}

// URL is the server's base URL (its Prometheus query API is under it).
func (v *VictoriaMetrics) URL() string { return "http://" + v.addr }

// Import posts a file of Prometheus text or OpenMetrics with timestamps
// (vtop sim --history's output) to /api/v1/import/prometheus, then waits
// until a query sees the newest series: VictoriaMetrics makes imported
// rows searchable about a second later.
func (v *VictoriaMetrics) Import(path string, ready func() bool) {
	v.t.Helper()
	f, err := os.Open(path)
	if err != nil {
		v.t.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Post(v.URL()+"/api/v1/import/prometheus", "text/plain", f)
	if err != nil {
		v.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		v.t.Fatalf("victoria-metrics import of %s: %s; its log: %s", path, resp.Status, v.Log())
	}
	WaitFor(v.t, 30*time.Second, fmt.Sprintf("victoria-metrics to show what %s imported", path), ready)
}
