package ui

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

var benchStates = []analysis.State{analysis.StateHealthy, analysis.StateIdle, analysis.StateStale,
	analysis.StateSlow, analysis.StateFull, analysis.StatePreempting, analysis.StateDown}

// fleet returns n replicas in mixed states whose gauges move with i.
func fleet(n, i int, at time.Time) analysis.Report {
	reps := make([]analysis.ReplicaReport, n)
	for k := range reps {
		reps[k] = replica(fmt.Sprintf("gpu-%03d:8000", k), benchStates[k%len(benchStates)])
		if reps[k].Running.Known() {
			reps[k].Running = analysis.Num(40 + 20*math.Sin(float64(i+k)/7))
		}
		reps[k].Point = pointOf(reps[k], at)
	}
	return report(at, reps...)
}

// filled returns a model at a size with history points for n replicas.
func filled(b *testing.B, n, points, w, h int) Model {
	b.Helper()
	m := newModel(w, h)
	for i := 0; i < points; i++ {
		m = send(m, ReportMsg{Report: fleet(n, i, t0.Add(time.Duration(i-points)*time.Second))})
	}
	return m
}

func BenchmarkViewGrid16(b *testing.B) {
	m := filled(b, 16, 900, 200, 60)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

func BenchmarkViewTable200(b *testing.B) {
	m := press(filled(b, 200, 3, 200, 60), "t")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

func BenchmarkViewDetail(b *testing.B) {
	m := press(filled(b, 4, 900, 200, 60), "enter")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkUpdateReport100 is the cost of one ReportMsg for 100 replicas on
// the grid (history append, sorting).
func BenchmarkUpdateReport100(b *testing.B) {
	m := filled(b, 100, 10, 200, 60)
	reports := make([]ReportMsg, 64)
	for i := range reports {
		reports[i] = ReportMsg{Report: fleet(100, i, t0.Add(time.Duration(i)*time.Second))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, _ := m.Update(reports[i%len(reports)])
		m = next.(Model)
	}
}

// BenchmarkUpdateReportDetail is one report while the detail view is open:
// the charts are rebuilt in Update.
func BenchmarkUpdateReportDetail(b *testing.B) {
	m := press(filled(b, 4, 900, 200, 60), "enter")
	reports := make([]ReportMsg, 64)
	for i := range reports {
		reports[i] = ReportMsg{Report: fleet(4, i, t0.Add(time.Duration(i)*time.Second))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next, _ := m.Update(reports[i%len(reports)])
		m = next.(Model)
	}
}
