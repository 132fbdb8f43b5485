package testutil

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// VMAlert is Debian's vmalert evaluating rule files against a
// VictoriaMetrics and writing what they record, and the alerts' series,
// back into it; its notifications go to a sink of the test. It is stopped
// when the test ends.
type VMAlert struct {
	server
}

// StartVMAlert runs vmalert over vm every evaluation interval with the
// rule files, or skips the test when vmalert is not installed (fails it
// when RequireVictoriaMetricsEnv is set).
func StartVMAlert(t testing.TB, vm *VictoriaMetrics, evaluation time.Duration, ruleFiles ...string) *VMAlert {
	t.Helper()
	bin := VMAlertBinary(t)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(sink.Close)
	a := &VMAlert{server: newServer(t, "vmalert")}
	addr := ClosedPort(t)
	args := []string{"-datasource.url=" + vm.URL(), "-remoteWrite.url=" + vm.URL(), "-notifier.url=" + sink.URL,
		"-evaluationInterval=" + evaluation.String(), "-httpListenAddr=" + addr, "-loggerLevel=WARN",
		"-remoteWrite.flushInterval=" + (evaluation / 2).String()}
	for _, f := range ruleFiles {
		args = append(args, "-rule="+f)
	}
	t.Cleanup(a.Stop)
	a.start(bin, args, "http://"+addr+"/health", 30*time.Second)
	return a
}

// VMAlertBinary returns the path of Debian's vmalert, or skips the test
// (fails it when RequireVictoriaMetricsEnv is set); under -short it skips it.
func VMAlertBinary(t testing.TB) string {
	t.Helper()
	return Binary(t, "vmalert", "vmalert", RequireVictoriaMetricsEnv)
}
