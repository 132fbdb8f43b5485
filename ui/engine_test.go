package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// mixedEngines is a fleet of vLLM, SGLang and TGI replicas and a router.
func mixedEngines() []analysis.ReplicaReport {
	v := replica("gpu-a:8000", analysis.StateHealthy)
	sg := replica("gpu-b:30000", analysis.StateFull)
	sg.EngineKind = catalogue.EngineSGLang
	tgi := replica("gpu-c:8080", analysis.StateHealthy)
	tgi.EngineKind, tgi.Model = catalogue.EngineTGI, ""
	router := replica("router:8001", analysis.StateHealthy)
	router.EngineKind, router.Router, router.Backends = catalogue.EngineVLLM, catalogue.RouterProductionStack, []string{"gpu-a:8000", "gpu-d:8000"}
	return []analysis.ReplicaReport{v, sg, tgi, router}
}

// The table names each replica's engine in a column of its own, which
// goes when the terminal is narrow, after the model.
func TestTableEngineColumn(t *testing.T) {
	for _, tt := range []struct {
		w      int
		engine bool
	}{{80, false}, {120, true}, {200, true}} {
		_, lines := tableFrame(tt.w, 24, mixedEngines())
		frame := strings.Join(lines, "\n")
		rows := map[string]string{"gpu-a:8000": "vllm", "gpu-b:30000": "sglang", "gpu-c:8080": "tgi", "router:8001": "router"}
		for target, engine := range rows {
			var row string
			for _, l := range lines {
				if strings.Contains(l, target+" ") {
					row = l
				}
			}
			if row == "" {
				t.Fatalf("%d columns: no row of %s:\n%s", tt.w, target, frame)
			}
			if got := strings.Contains(row, " "+engine+" "); got != tt.engine {
				t.Errorf("%d columns: row %q names %s: %v, want %v", tt.w, row, engine, got, tt.engine)
			}
		}
	}
}

// A pane names every engine but vLLM, and a router with its backends.
func TestPaneTitleNamesTheEngine(t *testing.T) {
	th := PlainTheme()
	for _, r := range mixedEngines() {
		title := ansi.Strip(paneTitle(th, &r, 60, false))
		want := map[string]string{"gpu-a:8000": "", "gpu-b:30000": "sglang", "gpu-c:8080": "tgi", "router:8001": "router (2 backends)"}[r.Target]
		if want == "" {
			if strings.Contains(title, "vllm") {
				t.Errorf("vLLM pane %q names vllm", title)
			}
			continue
		}
		if !strings.Contains(title, r.Target+" "+want) {
			t.Errorf("pane title %q lacks %q", title, want)
		}
	}
}

// The detail view shows the engine, how derived figures were computed and
// the newest signals the page has; none of a family it lacks.
func TestDetailEngineFigures(t *testing.T) {
	th := PlainTheme()
	r := replica("gpu-c:8080", analysis.StateHealthy)
	r.EngineKind = catalogue.EngineTGI
	r.Derived = map[string]string{"ttft_seconds": "derived mean only: mean queue time + mean prefill batch time"}
	lines := strings.Join(engineFigures(th, &r), "\n")
	for _, want := range []string{"engine tgi", "derived ttft_seconds: derived mean only"} {
		if !strings.Contains(lines, want) {
			t.Errorf("detail lacks %q:\n%s", want, lines)
		}
	}
	for _, not := range []string{"sleep", "NIXL", "LoRA", "waiting by reason"} {
		if strings.Contains(lines, not) {
			t.Errorf("detail shows %q for a page without it:\n%s", not, lines)
		}
	}

	v := replica("gpu-a:8000", analysis.StateFull)
	v.WaitingCapacity, v.WaitingDeferred, v.SleepLevel = 40, 12, 0
	v.AdmissionRejectionsPerSecond = 3.5
	v.SpecDecodeAcceptanceRate, v.SpecDecodeMeanAcceptanceLength = 0.3, 1.9
	v.SpecDecodeAcceptanceByPosition = []analysis.Num{0.6, 0.2, 0.1}
	v.NIXLFailedPerSecond, v.NIXLBytesPerSecond = 2, 1.5e9
	v.LoRA = &analysis.LoRAReport{MaxLoRAs: 4, Running: []string{"sql-lora"}, Waiting: []string{}}
	lines = strings.Join(engineFigures(th, &v), "\n")
	for _, want := range []string{
		"waiting by reason: capacity 40, deferred 12",
		"sleep level 0",
		"admissions refused 3.5/s",
		"acceptance α 30%, mean acceptance length 1.9, by position 60% 20% 10%",
		"NIXL KV transfers: p99 n/a, 1.5 GB/s, failed 2.0/s",
		"LoRA adapters (max 4): running sql-lora; waiting none",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("detail lacks %q:\n%s", want, lines)
		}
	}
}

// With replicas of several models the header gives a line to each group,
// with its worst replica and its advice; with one model, none.
func TestHeaderGroupLines(t *testing.T) {
	reps := mixedEngines()[:2]
	reps[1].Model = "Qwen/Qwen2.5-7B"
	rep := report(t0, reps...)
	rep.Fleet.Groups = []analysis.FleetGroup{
		{Model: reps[0].Model, Targets: []string{reps[0].Target}, FleetFigures: analysis.FleetFigures{Replicas: 1, Up: 1, RequestsPerSecond: 6, Running: 48, Waiting: 0,
			Advice: analysis.Advice{Recommendation: "keep 1 replica: none is FULL and the queue is not growing"}}},
		{Model: reps[1].Model, Targets: []string{reps[1].Target}, FleetFigures: analysis.FleetFigures{Replicas: 1, Up: 1, RequestsPerSecond: 11.8, Running: 256, Waiting: 95,
			Advice: analysis.Advice{Recommendation: "add 1: 16 req/s arrive, 11.8 succeed, a full replica does 11.8: 1 up → 2"}}},
	}
	m := send(newModel(200, 40), ReportMsg{Report: rep})
	head := ansi.Strip(strings.Join(m.header, "\n"))
	for _, want := range []string{
		"▪ meta-llama/Llama-3.1-8B-Instruct  up 1/1  6.0 req/s  run 48  wait 0  worst gpu-a:8000 HEALTHY  → keep 1 replica: none is FULL and the queue is not growing",
		"▪ Qwen/Qwen2.5-7B  up 1/1  11.8 req/s  run 256  wait 95  worst gpu-b:30000 FULL  → add 1: 16 req/s arrive, 11.8 succeed, a full replica does 11.8: 1 up → 2",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	rep.Fleet.Groups = rep.Fleet.Groups[:1]
	m = send(newModel(200, 40), ReportMsg{Report: rep})
	if head := ansi.Strip(strings.Join(m.header, "\n")); strings.Contains(head, "▪") {
		t.Errorf("one group, yet group lines:\n%s", head)
	}
}

// A sleeping replica has its own badge, its reason and its action on the
// pane, ranks below a FULL one and above an idle one, and is counted in
// the header.
func TestSleepingPane(t *testing.T) {
	sleeping := replica("gpu-s:8000", analysis.StateSleeping)
	sleeping.Figures = naFigures()
	sleeping.Running, sleeping.Waiting, sleeping.SleepLevel = 0, 0, 1
	sleeping.Reasons = []string{"engine asleep at level 1 (weights offloaded to CPU memory): it serves nothing until woken"}
	sleeping.Action = "wake it (POST /wake_up), or it is meant to sleep"
	reps := []analysis.ReplicaReport{replica("gpu-i:8000", analysis.StateIdle), sleeping, replica("gpu-f:8000", analysis.StateFull)}
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, reps...)})
	frame := ansi.Strip(m.View())
	for _, want := range []string{"SLEEPING 1", "gpu-s:8000", "engine asleep at level 1", "→ wake it (POST"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
	full, asleep, idle := strings.Index(frame, "gpu-f:8000"), strings.Index(frame, "gpu-s:8000 "), strings.Index(frame, "gpu-i:8000")
	if !(full < asleep && asleep < idle) {
		t.Errorf("panes not worst first (FULL %d, SLEEPING %d, IDLE %d):\n%s", full, asleep, idle, frame)
	}
}
