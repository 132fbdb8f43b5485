package ui

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/gpu/device"
)

// h100 is an H100 on host, joined to replica, its figures as a quarter of
// a busy fleet reports them.
func h100(host string, index int, replica string, util float64) device.GPU {
	g := device.Unknown()
	g.Host, g.Index, g.UUID, g.Model, g.Replica, g.Source = host, index, "GPU-"+host+string(rune('0'+index)), "NVIDIA H100 80GB HBM3", replica, "http://"+host+":9400/metrics"
	g.Utilization, g.MemoryUsedBytes, g.MemoryTotalBytes = util, 40<<30, 80<<30
	g.PowerWatts, g.PowerLimitWatts, g.TemperatureCelsius = 400, 700, 61
	g.SMClockHz, g.MaxSMClockHz = 1980e6, 1980e6
	return g
}

// withGPUs is allStates with GPUs under three replicas, one with an XID,
// and one GPU whose source gives no figures but its identity.
func withGPUs() analysis.Report {
	r := allStates(t0)
	gs := []device.GPU{
		h100("gpu-a", 0, "gpu-a:8000", 0.62),
		h100("gpu-c", 0, "gpu-c:8000", 0.31),
		h100("gpu-g", 0, "gpu-g:8000", 0.9),
		device.Unknown(),
	}
	gs[2].XID = 79
	gs[3].Host, gs[3].Index, gs[3].Source = "gpu-h", 1, "nvidia-smi"
	analysis.ApplyGPUs(&r, gs, []analysis.GPUSource{
		{Name: "dcgm-exporter gpu-a:9400", GPUs: 1}, {Name: "dcgm-exporter gpu-c:9400", GPUs: 1}, {Name: "dcgm-exporter gpu-g:9400", GPUs: 1},
		{Name: "dcgm-exporter gpu-x:9400", Note: "dcgm-exporter gpu-x:9400: connection refused"},
	})
	return r
}

// TestGPUStripGolden: the strip at 80×24 (one line) and at 200×60 (a cell
// per GPU), drawn from a report, and the table's GPU columns.
func TestGPUStripGolden(t *testing.T) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"gpus-80x24", 80, 24}, {"gpus-200x60", 200, 60}} {
		t.Run(size.name, func(t *testing.T) {
			m := send(newModel(size.w, size.h), ReportMsg{Report: withGPUs()})
			frame := m.View()
			checkFrame(t, frame, size.w, size.h)
			golden(t, size.name, frame)
		})
	}
	m := press(send(newModel(200, 40), ReportMsg{Report: withGPUs()}), "t")
	golden(t, "gpus-table-200x40", m.View())
}

func TestGPUStrip(t *testing.T) {
	r := withGPUs()
	short := send(newModel(80, 24), ReportMsg{Report: r}).View()
	if got := strings.Count(short, "\nGPUs "); got != 1 {
		t.Errorf("80×24: %d strip lines, want one:\n%s", got, short)
	}
	for _, want := range []string{"GPUs 4  XID 79 on gpu-g/0", "util 61% avg 90% max", "mem 50%"} {
		if !strings.Contains(short, want) {
			t.Errorf("80×24: no %q in\n%s", want, short)
		}
	}
	tall := send(newModel(200, 60), ReportMsg{Report: r}).View()
	for _, want := range []string{
		"GPUs 4  from dcgm-exporter ×3 dcgm-exporter gpu-x:9400: connection refused",
		"gpu-a/0 util █████░░░  62% mem ████░░░░  50%  400/700W  61°C 1980MHz",
		"gpu-g/0 util ███████░  90%",
		"XID 79",
		// the GPU with no figures: n/a everywhere, never 0
		"gpu-h/1 util n/a       n/a mem n/a       n/a     n/a W n/a°C  n/aMHz",
	} {
		if !strings.Contains(tall, want) {
			t.Errorf("200×60: no %q in\n%s", want, tall)
		}
	}
	// no GPU source at all: no strip, and the grid has the lines
	plain := send(newModel(200, 60), ReportMsg{Report: allStates(t0)}).View()
	if strings.Contains(plain, "GPUs") {
		t.Errorf("a report without GPU sources draws a strip:\n%s", plain)
	}
}

func TestGPUDetailAndBadge(t *testing.T) {
	m := newModel(200, 60)
	for i := range 5 {
		r := withGPUs()
		r.GPUs[2].Utilization = 0.2 * float64(i)
		m = send(m, ReportMsg{Report: r})
	}
	grid := m.View()
	if !strings.Contains(grid, "XID 79 DOWN") {
		t.Errorf("the DOWN pane lacks its fault badge:\n%s", grid)
	}
	// Select gpu-g (DOWN sorts first) and open it.
	detail := press(m, "enter").View()
	for _, want := range []string{"GPUs  (joined by host gpu-g)", "NVIDIA H100 80GB HBM3  GPU 0 util", "XID 79", "  util ", "  mem ", "  power "} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail: no %q in\n%s", want, detail)
		}
	}
	if !strings.Contains(detail, "▁▂▄▅▇") { // 0, 20, 40, 60, 80% on a 0–100% scale
		t.Errorf("detail: the utilisation sparkline does not climb with the 5 reports:\n%s", detail)
	}
}

func TestGPUFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{fmtWatts(266.4, 700), "266/700W"},
		{fmtWatts(266.4, math.NaN()), "266W"},
		{fmtWatts(math.NaN(), 700), "n/a W"},
		{fmtWatts(12000, 22400), "12.0/22.4kW"},
		{fmtUnit(math.NaN(), "°C"), "n/a°C"},
		{fmtUnit(1.98e9/1e6, "MHz"), "1980MHz"},
		{gpuBar(PlainTheme(), 0.5), "████░░░░"},
		{gpuBar(PlainTheme(), 1.3), "████████"},
		{gpuBar(PlainTheme(), math.NaN()), "n/a     "},
		{shortHost("gpu-a.cluster.local"), "gpu-a"},
		{shortHost("10.0.0.5"), "10.0.0.5"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestFoundInHeader: what local discovery found, or looked for, is in the
// header, wrapped rather than cut.
func TestFoundInHeader(t *testing.T) {
	opts := testOptions()
	opts.Found = "no inference server found on this host (looked for processes of vLLM, SGLang, TensorRT-LLM, TGI or llama.cpp among 12 listening sockets)"
	m := send(sized(New(opts), 80, 24), ReportMsg{Report: allStates(t0)})
	frame := m.View()
	checkFrame(t, frame, 80, 24)
	flat := strings.Join(strings.Fields(frame), " ")
	if !strings.Contains(flat, "TGI or llama.cpp among 12 listening sockets)") {
		t.Errorf("the summary is not whole in the header:\n%s", frame)
	}
}

// TestGPUStripBounded: a host of many GPUs takes at most an eighth of the
// body; the title says how many are shown.
func TestGPUStripBounded(t *testing.T) {
	r := allStates(t0)
	var gs []device.GPU
	for i := range 40 {
		gs = append(gs, h100("node", i, "", 0.5))
	}
	analysis.ApplyGPUs(&r, gs, []analysis.GPUSource{{Name: "nvidia-smi", GPUs: 40}})
	m := send(newModel(120, 40), ReportMsg{Report: r})
	frame := m.View()
	checkFrame(t, frame, 120, 40)
	// 34 lines of body: 4 rows of cells at most, two compact cells a row
	// at 120 columns.
	cells := len(regexp.MustCompile(`GPU \d+ +util [█░]{8} +\d+% mem +\d+%  400W  61°C`).FindAllString(frame, -1))
	if cells != 8 {
		t.Errorf("%d GPU cells at 120×40, want 8 (4 rows of 2)\n%s", cells, frame)
	}
	if !strings.Contains(frame, "GPUs 40 ("+strconv.Itoa(cells)+" shown: a taller terminal shows more)  from nvidia-smi") {
		t.Errorf("the title does not say %d of 40 are shown:\n%s", cells, frame)
	}
}

// A GPU cell names its replica by host and port: a TensorRT-LLM target's
// /prometheus/metrics path must not widen the cells so far that 200
// columns fall back to compact cells without clock and power limit.
func TestGPUCellNamesReplicaByHostPort(t *testing.T) {
	for _, tt := range []struct{ target, want string }{
		{"127.0.0.1:34681/prometheus/metrics", "127.0.0.1:34681"},
		{"https://gpu-a.example:8000/metrics", "gpu-a.example:8000"},
		{"gpu-c:8000", "gpu-c:8000"},
		{"vllm-llama-8b-7f9c6d8b5-x2k4p.inference.svc:8000", "vllm-llama-8b-7f9c6d8b…"},
	} {
		if got := replicaLabel(tt.target); got != tt.want {
			t.Errorf("replicaLabel(%q) = %q, want %q", tt.target, got, tt.want)
		}
	}
	r := withGPUs()
	for i := range r.GPUs {
		r.GPUs[i].Replica = "127.0.0.1:3468" + strconv.Itoa(i) + "/prometheus/metrics"
	}
	tall := send(newModel(200, 60), ReportMsg{Report: r}).View()
	for _, want := range []string{"400/700W  61°C 1980MHz", "→ 127.0.0.1:34680"} {
		if !strings.Contains(tall, want) {
			t.Errorf("200×60: no %q in\n%s", want, tall)
		}
	}
}

// TestGPUSummaryWithoutFigures: GPUs that report their identity and no
// figure fold into a summary line of n/a, never of 0.
func TestGPUSummaryWithoutFigures(t *testing.T) {
	r := allStates(t0)
	gs := []device.GPU{device.Unknown(), device.Unknown()}
	for i := range gs {
		gs[i].Host, gs[i].Index, gs[i].Source = "gpu-h", i, "nvidia-smi"
	}
	analysis.ApplyGPUs(&r, gs, []analysis.GPUSource{{Name: "nvidia-smi", GPUs: 2}})
	line := send(newModel(80, 24), ReportMsg{Report: r}).View()
	for _, want := range []string{"util n/a avg n/a max", "mem n/a", "n/a W", "max n/a°C"} {
		if !strings.Contains(line, want) {
			t.Errorf("no %q in\n%s", want, line)
		}
	}
}

// TestGPUSummaryPairsItsFigures: power is summed against the limits of the
// GPUs that report power, memory used against the totals of those that
// report use, so a GPU that gives only its limit does not halve the share.
func TestGPUSummaryPairsItsFigures(t *testing.T) {
	r := allStates(t0)
	gs := []device.GPU{h100("gpu-a", 0, "gpu-a:8000", 0.5), h100("gpu-a", 1, "gpu-a:8000", 0.5)}
	gs[1].PowerWatts, gs[1].MemoryUsedBytes = math.NaN(), math.NaN()
	analysis.ApplyGPUs(&r, gs, []analysis.GPUSource{{Name: "dcgm-exporter gpu-a:9400", GPUs: 2}})
	line := send(newModel(80, 24), ReportMsg{Report: r}).View()
	for _, want := range []string{"400/700W", "mem 50%"} {
		if !strings.Contains(line, want) {
			t.Errorf("no %q in\n%s", want, line)
		}
	}
}
