package gpu

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/testutil"
)

const h200Capture = "testdata/nvidia-smi-query-gpu-h200-590.48.01.csv"

// TestSMIFieldsAreRealNames proves every field vtop queries is a name a
// real driver prints in its CSV header: a misspelt field makes nvidia-smi
// refuse the whole query.
func TestSMIFieldsAreRealNames(t *testing.T) {
	header, _, err := testutil.ReadSMIData(h200Capture)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range SMIFields {
		if !slices.Contains(header, f) {
			t.Errorf("field %q is not in the driver 590 header", f)
		}
	}
}

func TestParseSMIRowRealH200(t *testing.T) {
	header, rows, err := testutil.ReadSMIData(h200Capture)
	if err != nil {
		t.Fatal(err)
	}
	for _, fields := range [][]string{SMIFields, SMIBaseFields} {
		lines, bad := testutil.ProjectSMI(header, rows, fields)
		if bad != "" {
			t.Fatalf("capture lacks %q", bad)
		}
		g, err := ParseSMIRow(fields, lines[0], "gpu-host")
		if err != nil {
			t.Fatal(err)
		}
		checks := []struct {
			name      string
			got, want float64
		}{
			{"index", float64(g.Index), 0},
			{"utilization", g.Utilization, 1},
			{"memory used", g.MemoryUsedBytes, 32362 * mib},
			{"memory total", g.MemoryTotalBytes, 143771 * mib},
			{"power", g.PowerWatts, 627.40},
			{"power limit", g.PowerLimitWatts, 700},
			{"temperature", g.TemperatureCelsius, 52},
			{"sm clock", g.SMClockHz, 1980e6},
			{"max sm clock", g.MaxSMClockHz, 1980e6},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%d fields: %s = %v, want %v", len(fields), c.name, c.got, c.want)
			}
		}
		if g.UUID != "GPU-00000000-0000-0000-0000-000000000000" || g.Model != "NVIDIA H200" || g.Host != "gpu-host" || g.Source != device.SourceSMI {
			t.Errorf("identity = %q %q %q %q", g.UUID, g.Model, g.Host, g.Source)
		}
	}
}

func TestParseSMIRowFullFields(t *testing.T) {
	header, rows, _ := testutil.ReadSMIData(h200Capture)
	lines, _ := testutil.ProjectSMI(header, rows, SMIFields)
	g, err := ParseSMIRow(SMIFields, lines[0], "h")
	if err != nil {
		t.Fatal(err)
	}
	if g.SlowdownMarginCelsius != 35 || g.ClockEventReasons != 0 || g.UncorrectableRemappedRows != 0 {
		t.Errorf("margin %v reasons %v remapped %v, want 35 0 0", g.SlowdownMarginCelsius, g.ClockEventReasons, g.UncorrectableRemappedRows)
	}
}

// TestParseSMIRowUnknowns: what nvidia-smi cannot report is unknown, never 0.
func TestParseSMIRowUnknowns(t *testing.T) {
	header, rows, err := testutil.ReadSMIData("testdata/smi-na.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := testutil.ProjectSMI(header, rows, SMIFields)
	g, err := ParseSMIRow(SMIFields, lines[0], "h")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{
		"utilization": g.Utilization, "power": g.PowerWatts, "power limit": g.PowerLimitWatts,
		"margin": g.SlowdownMarginCelsius, "remapped": g.UncorrectableRemappedRows,
	} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %v, want unknown", name, v)
		}
	}
	if g.ClockEventReasons != -1 {
		t.Errorf("reasons = %v, want -1", g.ClockEventReasons)
	}
	if g.TemperatureCelsius != 52 || g.MemoryUsedBytes != 32362*mib {
		t.Errorf("known fields lost: %v %v", g.TemperatureCelsius, g.MemoryUsedBytes)
	}
}

func TestParseSMIRowErrors(t *testing.T) {
	tests := []struct{ name, line string }{
		{"too few values", "0, device.GPU-1"},
		{"empty", "   "},
		{"error text", "Failed to initialize NVML: Driver/library version mismatch"},
		{"no identity", strings.Repeat("[N/A], ", len(SMIBaseFields)-1) + "[N/A]"},
	}
	for _, tt := range tests {
		if _, err := ParseSMIRow(SMIBaseFields, tt.line, "h"); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestParseComputeApps(t *testing.T) {
	b, err := os.ReadFile("testdata/compute-apps-h200.csv")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		out  string
		pids []int
	}{
		{"real processes", string(b), []int{10291, 10293, 10309}},
		{"none", "", nil},
		{"old driver message", "No running processes found\n", nil},
		{"bad pid skipped", "x, device.GPU-1, 5\n7, device.GPU-1, 5\n", []int{7}},
	}
	for _, tt := range tests {
		var pids []int
		for _, p := range ParseComputeApps(tt.out) {
			pids = append(pids, p.PID)
		}
		if !slices.Equal(pids, tt.pids) {
			t.Errorf("%s: pids %v, want %v", tt.name, pids, tt.pids)
		}
	}
	ps := ParseComputeApps(string(b))
	if ps[2].UsedBytes != 28234*mib || ps[2].GPUUUID != "GPU-00000000-0000-0000-0000-000000000000" {
		t.Errorf("process = %+v", ps[2])
	}
	gs := []device.GPU{{UUID: "GPU-00000000-0000-0000-0000-000000000000"}, {UUID: "GPU-other"}}
	AttachProcesses(gs, ps)
	if len(gs[0].PIDs) != 3 || len(gs[1].PIDs) != 0 {
		t.Errorf("attached %v / %v", gs[0].PIDs, gs[1].PIDs)
	}
}
