package ui

import (
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
)

// A report that asks for the bell puts BEL before the frame until its
// tick ends it; a report that does not leaves the frame without it.
func TestBellRingsWithTheFrameOfItsReport(t *testing.T) {
	m := New(testOptions())
	r := analysis.Report{Time: t0, Replicas: []analysis.ReplicaReport{{Target: "gpu-a:8000", State: analysis.StateDown, Figures: naFigures()}}}
	next, _ := m.Update(ReportMsg{Report: r})
	if strings.Contains(next.View(), "\a") {
		t.Fatal("BEL in the frame of a report that asked for no bell")
	}
	next, cmd := next.Update(ReportMsg{Report: r, Bell: true})
	if !strings.HasPrefix(next.View(), "\a") {
		t.Fatal("no BEL before the frame of a report that rings")
	}
	if strings.Count(next.View(), "\a") != 1 {
		t.Errorf("%d BELs in the frame, want 1", strings.Count(next.View(), "\a"))
	}
	if cmd == nil {
		t.Fatal("no tick to end the bell")
	}
	next, _ = next.Update(cmd())
	if strings.Contains(next.View(), "\a") {
		t.Error("BEL still in the frame after its tick: it would ring again with every change of the first line")
	}
}

// A notice of vtop's own (an alert not posted, a hook that failed) is in
// the event log.
func TestNoticeInTheEventLog(t *testing.T) {
	m := New(testOptions())
	r := analysis.Report{Time: t0, Replicas: []analysis.ReplicaReport{{Target: "gpu-a:8000", State: analysis.StateHealthy, Figures: naFigures()}}}
	next, _ := m.Update(ReportMsg{Report: r})
	next, _ = next.Update(NoticeMsg{Time: t0, Text: "on-change for gpu-a:8000 FULL: exit status 3"})
	next, _ = next.Update(keyMsg("e"))
	if frame := next.View(); !strings.Contains(frame, "vtop on-change for gpu-a:8000 FULL: exit status 3") {
		t.Errorf("the event log does not show the notice:\n%s", frame)
	}
}

// The event log shows the report's stream of changes from the first
// report on: a replica down when vtop starts is in it, as it is in the
// hook's changes and the alerts.
func TestEventLogFromTheFirstReport(t *testing.T) {
	m := New(testOptions())
	r := analysis.Report{Time: t0, Replicas: []analysis.ReplicaReport{
		{Target: "gpu-a:8000", State: analysis.StateDown, Reasons: []string{"scrape failing since 14:00:00 (1 failed in a row): connection refused"}, Figures: naFigures()},
		{Target: "gpu-b:8000", State: analysis.StateWarming, Reasons: []string{"warming up"}, Figures: naFigures()},
	}}
	r.FollowChanges(nil)
	next, _ := m.Update(ReportMsg{Report: r})
	next, _ = next.Update(keyMsg("e"))
	frame := next.View()
	if !strings.Contains(frame, "gpu-a:8000 DOWN: scrape failing since 14:00:00") {
		t.Errorf("the event log does not show the replica down at start:\n%s", frame)
	}
	if strings.Contains(frame, "gpu-b:8000 WARMING") {
		t.Errorf("the event log shows the WARMING every target starts in:\n%s", frame)
	}
}
