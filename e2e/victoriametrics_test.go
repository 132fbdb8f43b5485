package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// VictoriaMetricsBinary returns the path of Debian's victoria-metrics (the
// single-node server), or skips the test (fails it when
// testutil.RequireVictoriaMetricsEnv is set); under -short it skips it.
func VictoriaMetricsBinary(t testing.TB) string {
	t.Helper()
	return testutil.Binary(t, "victoria-metrics", "victoria-metrics", testutil.RequireVictoriaMetricsEnv)
}

// VictoriaMetrics is a real single-node VictoriaMetrics run by a test on a
// free loopback port, its data in a directory of the test, keeping
// samples of any age (retention 100 years) and caching no answer, so
// that what was imported is what a query reads.
type VictoriaMetrics struct {
	testutil.Server
	addr string
}

// StartVictoriaMetrics runs an empty VictoriaMetrics until the test ends
// and waits until it answers; extra are further flags.
func StartVictoriaMetrics(t testing.TB, extra ...string) *VictoriaMetrics {
	t.Helper()
	bin := VictoriaMetricsBinary(t)
	v := &VictoriaMetrics{Server: testutil.NewServer(t, "victoria-metrics"), addr: testutil.ClosedPort(t)}
	t.Cleanup(v.Stop)
	v.Run(bin, append([]string{"-storageDataPath=" + filepath.Join(v.Dir, "data"), "-httpListenAddr=" + v.addr,
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
	v.T.Helper()
	f, err := os.Open(path)
	if err != nil {
		v.T.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Post(v.URL()+"/api/v1/import/prometheus", "text/plain", f)
	if err != nil {
		v.T.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		v.T.Fatalf("victoria-metrics import of %s: %s; its log: %s", path, resp.Status, v.Log())
	}
	testutil.WaitFor(v.T, 30*time.Second, fmt.Sprintf("victoria-metrics to show what %s imported", path), ready)
}

// VMAlert is Debian's vmalert evaluating rule files against a
// VictoriaMetrics and writing what they record, and the alerts' series,
// back into it; its notifications go to a sink of the test. It is stopped
// when the test ends.
type VMAlert struct {
	testutil.Server
}

// StartVMAlert runs vmalert over vm every evaluation interval with the
// rule files, or skips the test when vmalert is not installed (fails it
// when RequireVictoriaMetricsEnv is set).
func StartVMAlert(t testing.TB, vm *VictoriaMetrics, evaluation time.Duration, ruleFiles ...string) *VMAlert {
	t.Helper()
	bin := testutil.VMAlertBinary(t)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(sink.Close)
	a := &VMAlert{Server: testutil.NewServer(t, "vmalert")}
	addr := testutil.ClosedPort(t)
	args := []string{"-datasource.url=" + vm.URL(), "-remoteWrite.url=" + vm.URL(), "-notifier.url=" + sink.URL,
		"-evaluationInterval=" + evaluation.String(), "-httpListenAddr=" + addr, "-loggerLevel=WARN",
		"-remoteWrite.flushInterval=" + (evaluation / 2).String()}
	for _, f := range ruleFiles {
		args = append(args, "-rule="+f)
	}
	t.Cleanup(a.Stop)
	a.Run(bin, args, "http://"+addr+"/health", 30*time.Second)
	return a
}
