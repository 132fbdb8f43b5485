package testutil

import "testing"

// RequireVictoriaMetricsEnv makes a missing victoria-metrics or vmalert
// binary a failure instead of a skip (CI sets it: the tests against a real
// VictoriaMetrics must run there).
const RequireVictoriaMetricsEnv = "VTOP_REQUIRE_VICTORIAMETRICS"

// VMAlertBinary returns the path of Debian's vmalert, or skips the test
// (fails it when RequireVictoriaMetricsEnv is set); under -short it skips it.
func VMAlertBinary(t testing.TB) string {
	t.Helper()
	return Binary(t, "vmalert", "vmalert", RequireVictoriaMetricsEnv)
}
