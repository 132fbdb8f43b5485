package command

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitHealthy},
		{"degraded", &StatusError{Code: ExitDegraded}, ExitDegraded},
		{"down", &StatusError{Code: ExitDown}, ExitDown},
		{"usage", usagef("--interval %s is too short", time.Millisecond), ExitUsage},
		{"wrapped usage", fmt.Errorf("demo: %w", usagef("bad")), ExitUsage},
		{"data", dataf("the files look swapped"), ExitData},
		{"wrapped data", fmt.Errorf("analyze: %w", dataf("bad")), ExitData},
		{"failure", errors.New("terminal: broken"), ExitFailure},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

// reportOf is a report with one replica per state.
func reportOf(states ...analysis.State) analysis.Report {
	r := analysis.Report{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), WindowSeconds: 30}
	for i, s := range states {
		r.Replicas = append(r.Replicas, analysis.ReplicaReport{Target: fmt.Sprintf("gpu-%d:8000", i), State: s})
	}
	return r
}

// The worst replica decides the exit code, down before degraded.
func TestStatusOfReport(t *testing.T) {
	tests := []struct {
		states []analysis.State
		want   int
	}{
		{nil, ExitHealthy},
		{[]analysis.State{analysis.StateHealthy, analysis.StateIdle}, ExitHealthy},
		{[]analysis.State{analysis.StateHealthy, analysis.StateSlow}, ExitDegraded},
		{[]analysis.State{analysis.StateFull}, ExitDegraded},
		{[]analysis.State{analysis.StatePreempting, analysis.StateIdle}, ExitDegraded},
		{[]analysis.State{analysis.StateStale}, ExitDegraded},
		// Not judged is not healthy: a script must not read it as fine.
		{[]analysis.State{analysis.StateWarming}, ExitDegraded},
		{[]analysis.State{analysis.StateHealthy, analysis.StateWarming}, ExitDegraded},
		// A sleeping engine serves nothing until woken.
		{[]analysis.State{analysis.StateHealthy, analysis.StateSleeping}, ExitDegraded},
		{[]analysis.State{analysis.StateSlow, analysis.StateDown, analysis.StateFull}, ExitDown},
	}
	for _, tt := range tests {
		if got := ExitCode(status(reportOf(tt.states...))); got != tt.want {
			t.Errorf("states %v: exit code %d, want %d", tt.states, got, tt.want)
		}
	}
}

// A source that fails as a whole (Prometheus unreachable, a selector
// matching nothing) exits with its own code whatever the replicas' last
// verdicts say: they are not current. A source that works leaves the
// code to the replicas.
func TestStatusOfAFailingSource(t *testing.T) {
	tests := []struct {
		name   string
		states []analysis.State
		src    *catalogue.SourceStatus
		want   int
	}{
		{"working", []analysis.State{analysis.StateHealthy}, &catalogue.SourceStatus{Name: "Prometheus http://p:9090"}, ExitHealthy},
		{"failing, last verdicts healthy", []analysis.State{analysis.StateHealthy},
			&catalogue.SourceStatus{Name: "Prometheus http://p:9090", Problem: "connection refused"}, ExitNoData},
		{"failing, last verdicts down", []analysis.State{analysis.StateDown},
			&catalogue.SourceStatus{Name: "Prometheus http://p:9090", Problem: "connection refused"}, ExitNoData},
		{"never answered", nil, &catalogue.SourceStatus{Name: "Prometheus http://p:9090", Problem: `the selector {job="nope"} matches no vLLM series`}, ExitNoData},
	}
	for _, tt := range tests {
		r := reportOf(tt.states...)
		r.SetSource(tt.src)
		if got := ExitCode(status(r)); got != tt.want {
			t.Errorf("%s: exit code %d, want %d", tt.name, got, tt.want)
		}
	}
	if !strings.Contains(Description, "3 the source failed") {
		t.Errorf("--help does not document exit code 3:\n%s", Description)
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct {
	n   int
	buf bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.n {
		return 0, syscall.ENOSPC
	}
	return w.buf.Write(p)
}

// A report that cannot be written in full is an error naming the cause,
// whichever write fails, never a success or a silent partial report.
func TestPrintReportWriteFails(t *testing.T) {
	report := reportOf(analysis.StateHealthy, analysis.StateFull)
	var whole bytes.Buffer
	if err := printReport(&whole, report, false); ExitCode(err) != ExitDegraded {
		t.Fatalf("printReport to a buffer: %v, want the degraded status", err)
	}
	for _, asJSON := range []bool{false, true} {
		for _, room := range []int{0, 10, whole.Len() / 2, whole.Len() - 1} {
			err := printReport(&failingWriter{n: room}, report, asJSON)
			if ExitCode(err) != ExitFailure || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "writing the report") {
				t.Errorf("json %v, room for %d bytes: error %v, want a write failure", asJSON, room, err)
			}
		}
	}
}

// The text report opens with the one scaling recommendation, the line an
// engineer acts on, said once; the sentences behind it stay with the
// fleet's figures; a quantile its buckets only bound is written as the
// bound.
func TestTextReportRecommendationFirst(t *testing.T) {
	const rec = "add 6: 140 req/s arrive, 71 succeed, a full replica does 11.8: 6 up → 12"
	r := reportOf(analysis.StateFull, analysis.StateHealthy)
	r.Fleet.Advice.Recommendation = rec
	r.Fleet.Advice.Summary = []string{rec, "demand 140 req/s: what arrives at the 6 replicas counted"}
	r.Replicas[0].TTFT.P99 = 80
	r.Replicas[0].TTFT.P99Bucket = analysis.QuantileBucket{Lower: 80, Upper: analysis.Num(math.Inf(1))}
	var out bytes.Buffer
	if err := writeText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || lines[1] != "advice: "+rec {
		t.Errorf("line 2 = %q, want the recommendation:\n%s", lines[min(1, len(lines)-1)], text)
	}
	if n := strings.Count(text, rec); n != 1 {
		t.Errorf("the recommendation is written %d times, want once:\n%s", n, text)
	}
	for _, want := range []string{"  advice: demand 140 req/s: what arrives at the 6 replicas counted", "/>80s"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}
