package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

var goldenSizes = [][2]int{{80, 24}, {120, 40}, {200, 60}}

// goldenScenarios build the model of each golden frame at a size.
var goldenScenarios = []struct {
	name  string
	build func(w, h int) Model
}{
	{"first-frame", func(w, h int) Model { return newModel(w, h) }},
	{"healthy-fleet", func(w, h int) Model {
		return withHistory(newModel(w, h), 40, func(i int, at time.Time) analysis.Report {
			reps := make([]analysis.ReplicaReport, 4)
			for k := range reps {
				reps[k] = replica(fmt.Sprintf("gpu-%c:8000", 'a'+k), analysis.StateHealthy)
				reps[k].Running = analysis.Num(40 + (i*(k+1))%17)
				reps[k].Point = pointOf(reps[k], at)
			}
			return report(at, reps...)
		})
	}},
	{"all-states", func(w, h int) Model {
		return withHistory(newModel(w, h), 20, func(_ int, at time.Time) analysis.Report { return allStates(at) })
	}},
	{"down", func(w, h int) Model {
		return send(newModel(w, h), ReportMsg{Report: report(t0, replica("gpu-g:8000", analysis.StateDown))})
	}},
	{"warming-up", func(w, h int) Model {
		r := replica("localhost:8000", analysis.StateHealthy)
		f := naFigures()
		f.Running, f.Waiting, f.KVCacheUsage = 48, 3, 0.41
		r.Figures, r.WarmingUp, r.Reasons = f, true, nil
		r.Point = pointOf(r, t0)
		return send(newModel(w, h), ReportMsg{Report: report(t0, r)})
	}},
	{"detail", func(w, h int) Model {
		return press(withHistory(newModel(w, h), 60, rampingFull), "enter")
	}},
	{"table-sorted-filtered", func(w, h int) Model {
		m := withHistory(newModel(w, h), 3, func(_ int, at time.Time) analysis.Report { return allStates(at) })
		// s four times: from state to req/s; I: ascending; then keep the
		// replicas whose target, model or state contains an "e".
		return press(m, "t", "s", "s", "s", "s", "I", "/", "e", "enter")
	}},
	{"help", func(w, h int) Model {
		return press(send(newModel(w, h), ReportMsg{Report: allStates(t0)}), "?")
	}},
	{"events", func(w, h int) Model {
		return press(send(newModel(w, h), ReportMsg{Report: allStates(t0)}), "e")
	}},
	{"advice", func(w, h int) Model {
		return send(newModel(w, h), ReportMsg{Report: withAdvice(t0)})
	}},
	{"advice-view", func(w, h int) Model {
		return press(send(newModel(w, h), ReportMsg{Report: withAdvice(t0)}), "a")
	}},
}

func TestGoldenFrames(t *testing.T) {
	for _, sc := range goldenScenarios {
		for _, size := range goldenSizes {
			w, h := size[0], size[1]
			name := fmt.Sprintf("%s-%dx%d", sc.name, w, h)
			t.Run(name, func(t *testing.T) {
				frame := sc.build(w, h).View()
				checkFrame(t, frame, w, h)
				golden(t, name, frame)
			})
		}
	}
}

func TestGoldenTooSmall(t *testing.T) {
	for _, size := range [][2]int{{59, 24}, {80, 15}, {40, 10}} {
		w, h := size[0], size[1]
		name := fmt.Sprintf("too-small-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			frame := send(newModel(w, h), ReportMsg{Report: allStates(t0)}).View()
			checkFrame(t, frame, w, h)
			golden(t, name, frame)
		})
	}
}
