package testutil

import "testing"

// SkipShort skips the test under -short; why says where its time goes.
// It is for tests slow for reasons of their own, not of vtop's
// goroutines: a real Prometheus or promtool to wait on, long simulated
// stretches, answers or files of tens of MiB. .ci/run's race stage runs
// with -short (what it looks for is in the goroutines the other tests
// drive); its last stage runs every test in full.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why + "; skipped with -short, run in full without it")
	}
}
