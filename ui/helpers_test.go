package ui

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// t0 is the time of the newest report in the fixtures.
var t0 = time.Date(2025, 3, 14, 14, 1, 5, 0, time.UTC)

var nan = analysis.NA

// testOptions are the options of every test model: plain text and UTC so
// that golden frames depend neither on the terminal nor on the machine's
// zone.
func testOptions() Options {
	return Options{
		Theme:    PlainTheme(),
		History:  900,
		Interval: time.Second,
		Window:   30 * time.Second,
		Windows:  []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute},
		Version:  "test",
		Location: time.UTC,
	}
}

// naFigures returns figures in which everything is unknown.
func naFigures() analysis.Figures {
	q := analysis.Quantiles{Mean: nan, P50: nan, P90: nan, P99: nan}
	na := analysis.QuantileBucket{Lower: nan, Upper: nan}
	sq := analysis.Quantiles{Mean: nan, P50: nan, P90: nan, P99: nan, Observations: nan, P50Bucket: na, P90Bucket: na, P99Bucket: na}
	return analysis.Figures{
		Running: nan, Waiting: nan, KVCacheUsage: nan,
		RequestsPerSecond: nan,
		FinishedPerSecond: analysis.FinishRates{Stop: nan, Length: nan, Abort: nan, Error: nan, Repetition: nan},
		SuccessRate:       nan, LengthShare: nan, AbortShare: nan,
		PromptTokensPerSecond: nan, GenerationTokensPerSecond: nan, IORatio: nan,
		PreemptionsPerSecond: nan, RecomputedTokensPerSecond: nan,
		TimeRunningSeconds: nan, ArrivalsPerSecond: nan, Efficiency: nan, WaitingGrowth: nan,
		PrefixCacheHitRate: nan, SpecDecodeAcceptanceRate: nan, SpecDecodeAcceptedPerDraft: nan,
		MeanPromptTokens: nan, MeanGenerationTokens: nan, KVCapacityTokens: nan, MaxSeqsKVHolds: nan,
		TTFT: q, ITL: q, E2E: q, Queue: q, Prefill: q, Decode: q, Goodput: nan,
		Signals: analysis.Signals{
			WaitingCapacity: nan, WaitingDeferred: nan, SleepLevel: nan, AdmissionRejectionsPerSecond: nan,
			PreemptionsPerRequest: sq, PromptCachedShare: nan, ExternalPrefixCacheHitRate: nan,
			NIXLTransfer: sq, NIXLBytesPerSecond: nan, NIXLFailedPerSecond: nan,
			KVOffloadLoadBytesPerSecond: nan, KVOffloadStoreBytesPerSecond: nan, SpecDecodeMeanAcceptanceLength: nan,
		},
	}
}

func quant(mean, p50, p90, p99 float64) analysis.Quantiles {
	return analysis.Quantiles{Mean: analysis.Num(mean), P50: analysis.Num(p50), P90: analysis.Num(p90), P99: analysis.Num(p99)}
}

// busyFigures are the lesson's server: 48 running, 6 finished/s, 300
// output tokens, 1,800 tokens/s.
func busyFigures() analysis.Figures {
	f := naFigures()
	f.Running, f.Waiting, f.KVCacheUsage = 48, 0, 0.41
	f.RequestsPerSecond = 6
	f.FinishedPerSecond = analysis.FinishRates{Stop: 5.7, Length: 0.3, Abort: 0, Error: 0, Repetition: 0}
	f.SuccessRate, f.LengthShare, f.AbortShare = 0.95, 0.05, 0
	f.PromptTokensPerSecond, f.GenerationTokensPerSecond, f.IORatio = 3000, 1800, 1.67
	f.PreemptionsPerSecond, f.RecomputedTokensPerSecond = 0, 0
	f.TimeRunningSeconds, f.ArrivalsPerSecond, f.Efficiency, f.WaitingGrowth = 8, 6, 1, 0
	f.PrefixCacheHitRate = 0.32
	f.MeanPromptTokens, f.MeanGenerationTokens = 500, 300
	f.KVCapacityTokens, f.MaxSeqsKVHolds = 430000, 537
	f.TTFT = quant(0.21, 0.18, 0.42, 0.62)
	f.ITL = quant(0.027, 0.026, 0.033, 0.041)
	f.E2E = quant(8.1, 7.6, 12.4, 16.8)
	f.Queue = quant(0.004, 0.002, 0.01, 0.03)
	f.Prefill = quant(0.19, 0.16, 0.38, 0.55)
	f.Decode = quant(7.9, 7.4, 12.1, 16.2)
	f.Goodput = 0.97
	return f
}

// replica returns a realistic report of one replica in the given state.
func replica(target string, s analysis.State) analysis.ReplicaReport {
	r := analysis.ReplicaReport{
		Target: target, Model: "meta-llama/Llama-3.1-8B-Instruct", State: s,
		Figures: busyFigures(), ProcessRSSBytes: 3.2 * (1 << 30), GCPerSecond: 0.4,
		LastGood: t0, EngineKind: catalogue.EngineVLLM,
	}
	switch s {
	case analysis.StateIdle:
		r.Figures = naFigures()
		r.Running, r.Waiting, r.KVCacheUsage = 0, 0, 0
		r.RequestsPerSecond, r.PromptTokensPerSecond, r.GenerationTokensPerSecond, r.PreemptionsPerSecond = 0, 0, 0, 0
		r.Reasons = []string{"no requests finished in the last 30s"}
	case analysis.StateStale:
		r.Running, r.KVCacheUsage = 12, 0.08
		r.RequestsPerSecond, r.PromptTokensPerSecond, r.GenerationTokensPerSecond = 0, 0, 0
		r.TTFT, r.ITL = quant(math.NaN(), math.NaN(), math.NaN(), math.NaN()), quant(math.NaN(), math.NaN(), math.NaN(), math.NaN())
		r.Reasons = []string{"no counter moved for 30s while running=12"}
		r.Action = "check PROMETHEUS_MULTIPROC_DIR and the exporter"
	case analysis.StateSlow:
		r.Running, r.KVCacheUsage, r.RequestsPerSecond = 20, 0.35, 1.2
		r.PromptTokensPerSecond, r.GenerationTokensPerSecond = 9400, 240
		r.TTFT = quant(1.9, 1.6, 2.8, 3.4)
		r.MeanPromptTokens = 7900
		r.Reasons = []string{"TTFT p99 3.4s over the 1s SLO with 7.9k-token prompts", "ITL p99 41ms within the 100ms SLO"}
		r.Action = "long prompts: enable prefix caching, chunked prefill"
	case analysis.StateFull:
		r.Running, r.Waiting, r.KVCacheUsage = 256, 95, 0.97
		r.RequestsPerSecond, r.GenerationTokensPerSecond = 11.8, 3500
		r.TTFT = quant(5.1, 4.2, 7.3, 8.2)
		r.Queue = quant(4.0, 3.3, 6.1, 7.0)
		r.ArrivalsPerSecond, r.Efficiency, r.WaitingGrowth = 13.7, 0.86, 1.8
		r.Reasons = []string{"waiting 41 → 95 and not draining, running 256 flat at max_num_seqs", "queue time is 78% of TTFT"}
		r.Action = "add replicas; scale on num_requests_waiting (target 12 per replica)"
	case analysis.StatePreempting:
		r.Running, r.Waiting, r.KVCacheUsage = 180, 30, 0.99
		r.PreemptionsPerSecond, r.RecomputedTokensPerSecond = 2.4, 3100
		r.TTFT = quant(1.1, 0.8, 2.2, 2.9)
		r.ITL = quant(0.06, 0.05, 0.09, 0.12)
		r.Reasons = []string{"2.4 preemptions/s recompute 3.1k tokens/s"}
		r.Action = "cap max_num_seqs at 140 (what the KV cache holds) or add VRAM / replicas"
	case analysis.StateDown:
		r.Figures = naFigures()
		r.Model = ""
		r.Error = `Get "http://` + target + `/metrics": dial tcp 10.0.0.7:8000: connect: connection refused`
		r.LastGood = t0.Add(-2*time.Minute - 4*time.Second)
		r.DownSince, r.FailedScrapes = t0.Add(-2*time.Minute-3*time.Second), 123
		r.Reasons = []string{"scrape failing: connection refused"}
		r.Action = "check the vLLM process / pod"
		r.ProcessRSSBytes, r.GCPerSecond = nan, nan
	}
	r.Point = pointOf(r, t0)
	return r
}

// pointOf reduces a replica report to its history point.
func pointOf(r analysis.ReplicaReport, at time.Time) analysis.Point {
	f := func(n analysis.Num) float32 { return float32(n.Float()) }
	return analysis.Point{
		Time: at, State: r.State,
		Running: f(r.Running), Waiting: f(r.Waiting), KVCacheUsage: f(r.KVCacheUsage),
		RequestsPerSecond: f(r.RequestsPerSecond), PromptTokensPerSecond: f(r.PromptTokensPerSecond),
		GenerationTokensPerSecond: f(r.GenerationTokensPerSecond), PreemptionsPerSecond: f(r.PreemptionsPerSecond),
		TTFTP50: f(r.TTFT.P50), TTFTP90: f(r.TTFT.P90), TTFTP99: f(r.TTFT.P99),
		ITLP50: f(r.ITL.P50), ITLP90: f(r.ITL.P90), ITLP99: f(r.ITL.P99),
		E2EP50: f(r.E2E.P50), E2EP90: f(r.E2E.P90), E2EP99: f(r.E2E.P99),
	}
}

// report assembles a report with fleet totals computed from the replicas.
func report(at time.Time, reps ...analysis.ReplicaReport) analysis.Report {
	for i := range reps {
		// As Analyze scores them: the screens order by the score.
		reps[i].Severity = analysis.SeverityOf(&reps[i], analysis.DefaultConfig())
	}
	fl := analysis.FleetFigures{Replicas: len(reps), States: map[string]int{}}
	sum := func(get func(*analysis.ReplicaReport) analysis.Num) analysis.Num {
		total, known := 0.0, false
		for i := range reps {
			if v := get(&reps[i]); v.Known() {
				total, known = total+v.Float(), true
			}
		}
		if !known {
			return nan
		}
		return analysis.Num(total)
	}
	fl.RequestsPerSecond = sum(func(r *analysis.ReplicaReport) analysis.Num { return r.RequestsPerSecond })
	fl.PromptTokensPerSecond = sum(func(r *analysis.ReplicaReport) analysis.Num { return r.PromptTokensPerSecond })
	fl.GenerationTokensPerSecond = sum(func(r *analysis.ReplicaReport) analysis.Num { return r.GenerationTokensPerSecond })
	fl.Running = sum(func(r *analysis.ReplicaReport) analysis.Num { return r.Running })
	fl.Waiting = sum(func(r *analysis.ReplicaReport) analysis.Num { return r.Waiting })
	fl.WorstTTFTP99, fl.SuccessRate = nan, nan
	for i := range reps {
		r := &reps[i]
		fl.States[r.State.String()]++
		if r.State == analysis.StateDown {
			fl.Down++
		} else {
			fl.Up++
		}
		if r.TTFT.P99.Known() && (!fl.WorstTTFTP99.Known() || r.TTFT.P99 > fl.WorstTTFTP99) {
			fl.WorstTTFTP99 = r.TTFT.P99
		}
		if r.SuccessRate.Known() {
			fl.SuccessRate = r.SuccessRate
		}
	}
	return analysis.Report{Time: at, WindowSeconds: 30, Replicas: reps, Fleet: fl}
}

// allStates is one replica of each state, in an order that is not the
// display order.
func allStates(at time.Time) analysis.Report {
	states := []analysis.State{analysis.StateHealthy, analysis.StateDown, analysis.StateIdle, analysis.StateFull,
		analysis.StateStale, analysis.StatePreempting, analysis.StateSlow}
	names := []string{"gpu-a:8000", "gpu-g:8000", "gpu-b:8000", "gpu-c:8000", "gpu-d:8000", "gpu-e:8000", "gpu-f:8000"}
	reps := make([]analysis.ReplicaReport, len(states))
	for i, s := range states {
		reps[i] = replica(names[i], s)
		reps[i].Point.Time = at
	}
	r := report(at, reps...)
	r.Events = []analysis.Event{
		{Time: at.Add(-40 * time.Second), Target: "gpu-c:8000", State: analysis.StateFull, Text: "FULL: waiting 41 → 95, running 256 flat"},
		{Time: at.Add(-20 * time.Second), Target: "gpu-e:8000", State: analysis.StatePreempting, Text: "PREEMPTING: 2.4 preemptions/s"},
		{Time: at.Add(-2 * time.Second), Target: "gpu-g:8000", State: analysis.StateDown, Text: "DOWN: connection refused"},
	}
	return r
}

// newModel returns a model at a size.
func newModel(w, h int) Model {
	return sized(New(testOptions()), w, h)
}

func sized(m Model, w, h int) Model {
	return send(m, tea.WindowSizeMsg{Width: w, Height: h})
}

// send applies messages and returns the model, dropping commands.
func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
	}
	return m
}

// keyMsg turns "q", "esc", "enter", "pgdown" and the like into key
// messages.
func keyMsg(s string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"esc": tea.KeyEsc, "enter": tea.KeyEnter, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"ctrl+c": tea.KeyCtrlC, "ctrl+d": tea.KeyCtrlD, "ctrl+u": tea.KeyCtrlU,
	}
	if t, ok := special[s]; ok {
		return tea.KeyMsg{Type: t}
	}
	if s == " " {
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(s)}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func press(m Model, ks ...string) Model {
	for _, k := range ks {
		m = send(m, keyMsg(k))
	}
	return m
}

// withHistory feeds n reports one second apart, ending at t0, built by mk.
func withHistory(m Model, n int, mk func(i int, at time.Time) analysis.Report) Model {
	for i := 0; i < n; i++ {
		at := t0.Add(time.Duration(i-n+1) * time.Second)
		m = send(m, ReportMsg{Report: mk(i, at)})
	}
	return m
}

// rampingFull is a replica filling up over time: running climbs to the
// cap, the queue grows, TTFT follows; prompt lengths shift longer.
func rampingFull(i int, at time.Time) analysis.Report {
	r := replica("gpu-c:8000", analysis.StateFull)
	x := float64(i)
	r.Running = analysis.Num(math.Min(256, 60+x*5))
	r.Waiting = analysis.Num(math.Max(0, x*2-40))
	r.KVCacheUsage = analysis.Num(math.Min(0.97, 0.3+x*0.012))
	r.GenerationTokensPerSecond = analysis.Num(1800 + 30*x)
	r.PromptTokensPerSecond = analysis.Num(3000 + 80*x)
	r.TTFT = quant(0.2+x*0.06, 0.18+x*0.05, 0.3+x*0.1, 0.6+x*0.12)
	r.ITL = quant(0.027, 0.026+x*0.0002, 0.033, 0.041+x*0.0005)
	r.E2E = quant(8+x*0.1, 7.6+x*0.1, 12, 16.8+x*0.2)
	r.Engines = []analysis.EngineReport{{Engine: "0", Figures: r.Figures}, {Engine: "1", Figures: r.Figures}}
	r.Point = pointOf(r, at)
	bounds := []float64{128, 256, 512, 1024, 2048, 4096, 8192, math.Inf(1)}
	deltas := make([]float32, len(bounds))
	peak := min(int(x/10), 5)
	deltas[peak+1] = 6
	deltas[peak] = 3
	deltas[peak+2] = float32(i % 3)
	r.Point.PromptLengthBounds, r.Point.PromptLengthDeltas = bounds, deltas
	rep := report(at, r)
	if i == 30 {
		rep.Events = []analysis.Event{{Time: at, Target: r.Target, State: analysis.StateFull, Text: "FULL: waiting 0 → 20, running 210 rising"}}
	}
	return rep
}

// checkFrame fails unless the frame is exactly w columns by h lines.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Fatalf("frame has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d columns, want %d: %q", i, got, w, l)
		}
	}
}

// golden compares a frame with testdata/<name>.golden, or rewrites it under
// -update; a frame the documents show is checked against docs/ too.
func golden(t *testing.T, name, frame string) {
	t.Helper()
	docScreen(t, name, frame)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(frame), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != frame {
		t.Errorf("frame differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, frame, want)
	}
}
