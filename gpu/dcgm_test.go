package gpu

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

// readCapture reads a capture; an excerpt whose last line was cut loses it.
func readCapture(t *testing.T, name string, cut bool) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if cut {
		b = b[:bytes.LastIndexByte(bytes.TrimRight(b, "\n"), '\n')+1]
	}
	return b
}

func TestParseDCGMRealK8s8xH100(t *testing.T) {
	gs, err := ParseDCGM(readCapture(t, "dcgm-k8s-8xh100-580.105.08-excerpt.txt", false), "http://gpu-node-1:9400/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(gs))
	}
	g := gs[0]
	if g.Index != 0 || g.UUID != "GPU-c4529c8d-69c4-b61d-e0bc-7b2460096005" || g.Host != "gpu-node-1" ||
		g.Model != "NVIDIA H100 80GB HBM3" || g.MIG != "" || g.MIGInstance != -1 {
		t.Errorf("identity %+v", g)
	}
	if g.Pod != "vllm-agg-0-vllmdecodeworker-s65j5" || g.Namespace != "dynamo-workload" || g.Container != "main" {
		t.Errorf("workload %q/%q/%q", g.Namespace, g.Pod, g.Container)
	}
	if g.TemperatureCelsius != 30 || g.PowerWatts != 113.611 || g.Utilization != 0 {
		t.Errorf("figures temp %v power %v util %v", g.TemperatureCelsius, g.PowerWatts, g.Utilization)
	}
	// the excerpt has no FB lines: memory is unknown, not 0
	if !math.IsNaN(g.MemoryUsedBytes) || !math.IsNaN(g.MemoryTotalBytes) {
		t.Errorf("memory %v / %v, want unknown", g.MemoryUsedBytes, g.MemoryTotalBytes)
	}
	if gs[7].Index != 7 || gs[7].Pod != "" || gs[7].PowerWatts != 66.997 {
		t.Errorf("GPU 7 = %+v", gs[7])
	}
}

func TestParseDCGMRealMIG(t *testing.T) {
	gs, err := ParseDCGM(readCapture(t, "dcgm-k8s-mig-mixed-excerpt2.txt", true), "src")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		index, mig int
		profile    string
		pod        string
		temp, used float64
	}
	wants := []want{
		{0, 3, "1g.6gb", "triton-server-f7cb5d77-wwk9g", 50, math.NaN()},
		{0, 6, "1g.6gb", "triton-server-f7cb5d77-2w5b2", math.NaN(), 3744 * mib},
		{1, -1, "", "", 44, math.NaN()},
		{2, 3, "1g.6gb", "triton-server-f7cb5d77-95xcf", 45, math.NaN()},
	}
	if len(gs) != len(wants) {
		t.Fatalf("%d GPUs, want %d: %+v", len(gs), len(wants), gs)
	}
	for i, w := range wants {
		g := gs[i]
		if g.Index != w.index || g.MIGInstance != w.mig || g.MIG != w.profile || g.Pod != w.pod ||
			!same(g.TemperatureCelsius, w.temp) || !same(g.MemoryUsedBytes, w.used) || g.Host != "dcgm-exporter-wwwjh" {
			t.Errorf("GPU %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestParseDCGMRealMIGFree(t *testing.T) {
	gs, err := ParseDCGM(readCapture(t, "dcgm-k8s-mig-mixed-excerpt1.txt", true), "src")
	if err != nil {
		t.Fatal(err)
	}
	// DEC/ENC utilisation is not read; FB_FREE alone leaves used and total unknown
	if len(gs) != 2 || gs[0].Index != 1 || gs[1].MIG != "1g.6gb" || !math.IsNaN(gs[1].MemoryTotalBytes) {
		t.Errorf("GPUs = %+v", gs)
	}
}

// TestParseDCGMSpellings: DCGM 3 and DCGM 4 names give the same GPU. The
// pages are built from the exporter's format (no DCGM 4 page was captured).
func TestParseDCGMSpellings(t *testing.T) {
	labels := `{gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a"}`
	page := func(names ...string) []byte {
		var b strings.Builder
		vals := []string{"75", "410.5", "83", "79", "12"}
		for i, n := range names {
			b.WriteString("# TYPE " + n + " gauge\n" + n + labels + " " + vals[i] + "\n")
		}
		b.WriteString("DCGM_FI_DEV_FB_USED" + labels + " 70000\nDCGM_FI_DEV_FB_FREE" + labels + " 11559\n")
		b.WriteString("DCGM_FI_DEV_SLOWDOWN_TEMP" + labels + " 87\nDCGM_FI_DEV_SM_CLOCK" + labels + " 1755\n")
		return []byte(b.String())
	}
	tests := []struct {
		name  string
		names []string
	}{
		{"DCGM 3", []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"}},
		{"DCGM 4", []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_BOARD_POWER_WATTS", "DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_XID_ERROR", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}},
	}
	for _, tt := range tests {
		gs, err := ParseDCGM(page(tt.names...), "src")
		if err != nil || len(gs) != 1 {
			t.Fatalf("%s: %v %+v", tt.name, err, gs)
		}
		g := gs[0]
		if g.Utilization != 0.75 || g.PowerWatts != 410.5 || g.TemperatureCelsius != 83 || g.XID != 79 ||
			g.ClockEventReasons != 12 || g.SlowdownMarginCelsius != 4 || g.SMClockHz != 1755e6 ||
			g.MemoryTotalBytes != 81559*mib {
			t.Errorf("%s: %+v", tt.name, g)
		}
	}
}

func TestFromDCGMSeriesViaPrometheus(t *testing.T) {
	l := map[string]string{"gpu": "0", "UUID": "GPU-a", "Hostname": "node-a",
		"pod": "dcgm-exporter-x1", "namespace": "gpu-operator", "exported_pod": "vllm-0", "exported_namespace": "llm"}
	bare := map[string]string{"gpu": "1", "UUID": "GPU-b", "Hostname": "node-a", "pod": "dcgm-exporter-x1", "namespace": "gpu-operator"}
	series := []Series{
		{Family: "DCGM_FI_DEV_GPU_UTIL", Labels: l, Value: 40},
		{Family: "DCGM_FI_DEV_GPU_UTIL", Labels: bare, Value: 0},
	}
	gs := FromDCGMSeries(series, "http://prom:9090", true)
	if gs[0].Pod != "vllm-0" || gs[0].Namespace != "llm" {
		t.Errorf("workload %q/%q, want llm/vllm-0", gs[0].Namespace, gs[0].Pod)
	}
	// via Prometheus, pod is the exporter's own pod: never the workload
	if gs[1].Pod != "" {
		t.Errorf("idle GPU pod %q, want none", gs[1].Pod)
	}
	direct := FromDCGMSeries(series[1:], "src", false)
	if direct[0].Pod != "dcgm-exporter-x1" {
		t.Errorf("direct page pod %q", direct[0].Pod)
	}
}

func TestParseDCGMHostileLabels(t *testing.T) {
	page := "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"evil\x1b[2J\",modelName=\"x\x1b]0;t\x07y\"} 40\n"
	gs, err := ParseDCGM([]byte(page), "src")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(gs[0].Host+gs[0].Model, 0x1b) {
		t.Errorf("escape kept: %q %q", gs[0].Host, gs[0].Model)
	}
}

func TestParseDCGMNotAPage(t *testing.T) {
	if _, err := ParseDCGM([]byte("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\" 40\n"), "src"); err == nil {
		t.Error("broken line of a read family: no error")
	}
	gs, err := ParseDCGM([]byte("<html>nope</html>\n"), "src")
	if err != nil || len(gs) != 0 {
		t.Errorf("HTML: %v %v", gs, err)
	}
}

// Only the families vtop reads reach the parser: a broken line, or a
// second TYPE, of a family it does not read costs nothing, and the last
// line is read without its newline.
func TestParseDCGMDropsUnreadFamilies(t *testing.T) {
	page := "# HELP DCGM_FI_DEV_UNREAD not read\n# TYPE DCGM_FI_DEV_UNREAD gauge\n# TYPE DCGM_FI_DEV_UNREAD counter\n" +
		"DCGM_FI_DEV_UNREAD{gpu=\"0\" 1\n" +
		"# HELP DCGM_FI_DEV_GPU_TEMP Temperature.\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n" +
		"DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 40"
	gs, err := ParseDCGM([]byte(page), "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0].UUID != "GPU-a" || gs[0].TemperatureCelsius != 40 {
		t.Errorf("got %+v, want GPU-a at 40 °C", gs)
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
