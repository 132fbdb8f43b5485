package command

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// writeJSON writes a --jsonl report as one line, in a single write, its
// strings escaped (a server's text cannot break the line); --json writes
// the same object indented; a report JSON cannot hold is an error and
// writes nothing, so no half line reaches the output.
func TestWriteJSONLines(t *testing.T) {
	odd := reportOf(analysis.StateFull, analysis.StateDown)
	odd.Replicas[0].Reasons = []string{"two\nlines \"quoted\" <b>&</b>", "bad \xff utf-8, \u2028 line end"}
	odd.Replicas[1].Figures.TTFT.P99 = analysis.NA

	var line writeCounter
	if err := writeJSON(&line, odd, false); err != nil {
		t.Fatal(err)
	}
	text := line.buf.String()
	if line.writes != 1 || strings.Count(text, "\n") != 1 || !strings.HasSuffix(text, "\n") {
		t.Fatalf("--jsonl wrote %q in %d writes, want one line in one write", text, line.writes)
	}
	var back analysis.Report
	if err := json.Unmarshal(line.buf.Bytes(), &back); err != nil || back.Replicas[0].Reasons[0] != odd.Replicas[0].Reasons[0] {
		t.Errorf("the line reads back as %v (%v), want the reasons unchanged", back.Replicas, err)
	}
	if !strings.Contains(text, `"p99":null`) {
		t.Errorf("an n/a figure is not null in %s", text)
	}

	var indented bytes.Buffer
	if err := writeJSON(&indented, odd, true); err != nil {
		t.Fatal(err)
	}
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, indented.Bytes()); err != nil || compacted.String()+"\n" != text || !strings.Contains(indented.String(), "\n  \"") {
		t.Errorf("--json wrote\n%s\nwant the line indented (%v)", indented.String(), err)
	}

	rejected := reportOf(analysis.StateHealthy)
	rejected.WindowSeconds = math.Inf(1)
	var none bytes.Buffer
	if err := writeJSON(&none, rejected, false); err == nil || none.Len() != 0 {
		t.Errorf("an infinite window: error %v, written %q; want an error and nothing written", err, none.String())
	}
}

// writeCounter keeps what is written to it and counts the writes.
type writeCounter struct {
	buf    bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

// A replica that sums several instances says how many in the text
// report's target column; one of a single instance does not.
func TestTextReportCountsInstances(t *testing.T) {
	r := reportOf(analysis.StateHealthy, analysis.StateHealthy)
	r.Replicas[0].Target, r.Replicas[0].Instances = "vllm", 8
	var out bytes.Buffer
	if err := writeText(&out, r); err != nil {
		t.Fatal(err)
	}
	if text := out.String(); !strings.Contains(text, "vllm ×8 ") || strings.Contains(text, "gpu-1:8000 ×") {
		t.Errorf("text report:\n%s\nwant the group's target as \"vllm ×8\" and the single one plain", text)
	}
}

// The text report names a failing source once, with its problem and the
// data's age, and marks every replica's verdict as from before.
func TestTextReportOfAFailingSource(t *testing.T) {
	r := reportOf(analysis.StateHealthy, analysis.StateFull)
	at := r.Time
	r.SetSource(&catalogue.SourceStatus{Name: "Prometheus http://prom.example:9090", Problem: "connection refused",
		Since: at.Add(10 * time.Second), LastGood: at, Checked: at.Add(42 * time.Second), DataAgeSeconds: 42})
	var out bytes.Buffer
	if err := writeText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"Prometheus http://prom.example:9090: connection refused; data 42s old (failing since 12:00:10", "HEALTHY (stale)", "FULL (stale)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if n := strings.Count(text, "prom.example"); n != 1 {
		t.Errorf("the server is named %d times, want once:\n%s", n, text)
	}
}

// The text report names the store that answered and its warnings, under
// the source line.
func TestTextReportNamesTheStore(t *testing.T) {
	r := reportOf(analysis.StateHealthy)
	r.SetSource(&catalogue.SourceStatus{Name: "Prometheus http://vm.example:8428", LastGood: r.Time, Checked: r.Time,
		Store: "VictoriaMetrics", Warnings: []string{"VictoriaMetrics evaluates MetricsQL"}})
	var out bytes.Buffer
	if err := writeText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"source Prometheus http://vm.example:8428, answered by VictoriaMetrics\n  ! VictoriaMetrics evaluates MetricsQL\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// The text report says what its req/s counts: the aborts among the
// finished requests, beside what succeeded, and the abort share in the
// table.
func TestTextReportSaysTheAborts(t *testing.T) {
	r := reportOf(analysis.StateFull)
	rep := &r.Replicas[0]
	rep.RequestsPerSecond, rep.FinishedPerSecond.Stop, rep.FinishedPerSecond.Length, rep.FinishedPerSecond.Abort = 15.1, 6.3, 0, 8.8
	rep.SuccessRate, rep.AbortShare = 6.3/15.1, 8.8/15.1
	var out bytes.Buffer
	if err := writeText(&out, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"ABORT", "58%", "15.1 req/s finished (6.3 successful, 8.8 aborted)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}
