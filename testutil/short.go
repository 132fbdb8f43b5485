package testutil

import (
	"os"
	"os/exec"
	"testing"
)

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

// Binary returns the path of the server binary name on PATH, or skips
// the test, or fails it when the environment variable require is set (CI
// sets it: those tests must run there); debian names the package that
// installs it. Under -short it skips it (SkipShort).
func Binary(t testing.TB, name, debian, require string) string {
	t.Helper()
	SkipShort(t, "runs the real "+name)
	bin, err := exec.LookPath(name)
	if err != nil {
		msg := "no " + name + " binary on PATH (Debian: apt-get install " + debian + "); set " + require + "=1 to make this a failure"
		if os.Getenv(require) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}
