package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// TestPrometheusSourceFailures runs `vtop --once --prometheus` where the
// source itself fails: a server that refuses, and a real Prometheus asked
// for a selector that matches nothing. Each exits 3 with the problem said
// once, naming the server (and the selector, and what the server has),
// and no replica: none is DOWN for the source's failure, none is named
// after the server.
func TestPrometheusSourceFailures(t *testing.T) {
	testutil.PrometheusTool(t, "prometheus")
	replica := serveScenario(t, sim.Healthy)
	u, err := url.Parse(replica)
	if err != nil {
		t.Fatal(err)
	}
	prom := testutil.StartPrometheus(t, time.Second, []string{u.Host})
	prom.WaitForWindow(3 * time.Second)
	closed := "http://" + testutil.ClosedPort(t)

	tests := []struct {
		name   string
		args   []string
		server string
		want   []string // in the problem
	}{
		{"refused", []string{"--prometheus", closed}, closed, []string{"connection refused"}},
		{"empty selector", []string{"--prometheus", prom.URL(), "--selector", `{job="nope"}`}, prom.URL(),
			[]string{`the selector {job="nope"} matches no vLLM series`, `vLLM series exist under job="vllm"`}},
	}
	for _, tt := range tests {
		stdout, stderr, code := testutil.RunVtop(t, append([]string{"--once", "--json", "--window", "10s"}, tt.args...)...)
		if code != command.ExitNoData {
			t.Errorf("%s: exit code %d, want %d\nstdout %s\nstderr %s", tt.name, code, command.ExitNoData, stdout, stderr)
		}
		var r struct {
			Replicas []struct{ Target, State string }
			Source   struct{ Name, Problem string }
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%s: %v\n%s", tt.name, err, stdout)
		}
		if r.Source.Name != "Prometheus "+tt.server || strings.Contains(r.Source.Problem, tt.server) {
			t.Errorf("%s: source %+v: want the server named once, by the source", tt.name, r.Source)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.Source.Problem, w) {
				t.Errorf("%s: problem %q lacks %q", tt.name, r.Source.Problem, w)
			}
		}
		if len(r.Replicas) != 0 {
			t.Errorf("%s: replicas %+v: a source that never answered has none", tt.name, r.Replicas)
		}
		text, _, code := testutil.RunVtop(t, append([]string{"--once", "--window", "10s"}, tt.args...)...)
		if code != command.ExitNoData || !strings.Contains(text, "no data yet") || strings.Contains(text, "DOWN") {
			t.Errorf("%s: text report, exit code %d:\n%s\nwant exit %d, the problem and no data yet, no DOWN", tt.name, code, text, command.ExitNoData)
		}
	}
}
