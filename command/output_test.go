package command

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/reportjson"
)

// writeJSON writes what encoding/json's Encoder writes, one line or
// indented, through the report's own writer or, for a report that writer
// leaves to encoding/json, through the Encoder; a report encoding/json
// rejects fails alike.
func TestWriteJSONAsEncoder(t *testing.T) {
	odd := reportOf(analysis.StateFull, analysis.StateDown, analysis.StateWarming)
	odd.Replicas[0].Reasons = []string{`"quoted" <b>&</b>`, "bad \xff utf-8, \u2028 line end"}
	odd.Replicas[1].Derived = map[string]string{"z": "last", "a": "first"}
	odd.Replicas[2].Figures.TTFT.P99 = analysis.NA
	odd.Fleet.States = map[string]int{"full": 1, "down": 1}

	// Groups nested deeper than the fast writer goes: encoding/json's.
	deep := reportOf(analysis.StateHealthy)
	groups := []analysis.FleetGroup{{Model: "innermost"}}
	for range 600 {
		groups = []analysis.FleetGroup{{Model: "m", FleetFigures: analysis.FleetFigures{Groups: groups}}}
	}
	deep.Fleet.Groups = groups
	if _, err := reportjson.Append(nil, &deep); err == nil {
		t.Fatal("the deep report was written by the fast writer: it no longer tests the Encoder's path")
	}

	rejected := reportOf(analysis.StateHealthy)
	rejected.WindowSeconds = math.Inf(1)

	for name, r := range map[string]analysis.Report{"odd": odd, "empty": {}, "deep": deep, "rejected": rejected} {
		for _, indent := range []bool{false, true} {
			var got, want bytes.Buffer
			err := writeJSON(&got, r, indent)
			wantErr := encodeJSON(&want, r, indent)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Errorf("%s, indented %v: error %v, want %v", name, indent, err, wantErr)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, indented %v: written\n%s\nwant\n%s", name, indent, got.Bytes(), want.Bytes())
			}
			if name != "rejected" && (want.Len() == 0 || want.Bytes()[want.Len()-1] != '\n') {
				t.Errorf("%s, indented %v: the Encoder wrote %q, not a line", name, indent, want.Bytes())
			}
		}
	}
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
	r.SetSource(&analysis.SourceStatus{Name: "Prometheus http://prom.example:9090", Problem: "connection refused",
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
	r.SetSource(&analysis.SourceStatus{Name: "Prometheus http://vm.example:8428", LastGood: r.Time, Checked: r.Time,
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
