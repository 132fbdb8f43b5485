package gpu

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/safetext"
)

// SMIFields is what vtop asks nvidia-smi --query-gpu for, in order. Each
// name is the canonical one nvidia-smi prints in its CSV header (driver
// 590), so a real header proves the names.
var SMIFields = []string{
	"index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total",
	"power.draw", "enforced.power.limit", "temperature.gpu", "temperature.gpu.tlimit",
	"clocks.current.sm", "clocks.max.sm", "clocks_event_reasons.active",
	"remapped_rows.uncorrectable",
}

// SMIBaseFields is the query for drivers that refuse a field of SMIFields
// (clocks_event_reasons was clocks_throttle_reasons before R535;
// tlimit and remapped rows are newer still): fields every driver knows.
var SMIBaseFields = []string{
	"index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total",
	"power.draw", "power.limit", "temperature.gpu", "clocks.sm", "clocks.max.sm",
}

// SMIComputeAppFields is the --query-compute-apps query that maps processes
// to GPUs.
var SMIComputeAppFields = []string{"pid", "gpu_uuid", "used_memory"}

const mib = 1 << 20

// setters fill one field of a GPU from nvidia-smi's text (nounits).
var setters = map[string]func(g *device.GPU, v string){
	"index":                       func(g *device.GPU, v string) { g.Index = intOr(v, -1) },
	"uuid":                        func(g *device.GPU, v string) { g.UUID = known(v) },
	"name":                        func(g *device.GPU, v string) { g.Model = known(v) },
	"utilization.gpu":             func(g *device.GPU, v string) { g.Utilization = number(v) / 100 },
	"memory.used":                 func(g *device.GPU, v string) { g.MemoryUsedBytes = number(v) * mib },
	"memory.total":                func(g *device.GPU, v string) { g.MemoryTotalBytes = number(v) * mib },
	"power.draw":                  func(g *device.GPU, v string) { g.PowerWatts = number(v) },
	"power.limit":                 func(g *device.GPU, v string) { g.PowerLimitWatts = number(v) },
	"enforced.power.limit":        func(g *device.GPU, v string) { g.PowerLimitWatts = number(v) },
	"temperature.gpu":             func(g *device.GPU, v string) { g.TemperatureCelsius = number(v) },
	"temperature.gpu.tlimit":      func(g *device.GPU, v string) { g.SlowdownMarginCelsius = number(v) },
	"clocks.sm":                   func(g *device.GPU, v string) { g.SMClockHz = number(v) * 1e6 },
	"clocks.current.sm":           func(g *device.GPU, v string) { g.SMClockHz = number(v) * 1e6 },
	"clocks.max.sm":               func(g *device.GPU, v string) { g.MaxSMClockHz = number(v) * 1e6 },
	"clocks_event_reasons.active": func(g *device.GPU, v string) { g.ClockEventReasons = bitmask(v) },
	"remapped_rows.uncorrectable": func(g *device.GPU, v string) { g.UncorrectableRemappedRows = number(v) },
}

// ParseSMIRow reads one row of `nvidia-smi --query-gpu=FIELDS
// --format=csv,noheader,nounits`. Fields nvidia-smi cannot give ("[N/A]",
// "[Not Supported]", "[Unknown Error]" …) stay unknown. The row must carry
// one value per field.
func ParseSMIRow(fields []string, line, host string) (device.GPU, error) {
	vals, err := splitCSV(line)
	if err != nil {
		return device.GPU{}, err
	}
	if len(vals) != len(fields) {
		return device.GPU{}, fmt.Errorf("nvidia-smi row has %d values, want %d", len(vals), len(fields))
	}
	g := device.Unknown()
	g.Host, g.Source = host, device.SourceSMI
	for i, f := range fields {
		if set, ok := setters[f]; ok {
			set(&g, vals[i])
		}
	}
	if g.UUID == "" && g.Index < 0 {
		return device.GPU{}, errors.New("nvidia-smi row names no GPU")
	}
	return g, nil
}

// Process is one compute process on a GPU, from --query-compute-apps.
type Process struct {
	PID       int
	GPUUUID   string
	UsedBytes float64
}

// ParseComputeApps reads the output of `nvidia-smi
// --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits`.
// Lines that are not such rows (the "No running processes found" of some
// drivers) are skipped.
func ParseComputeApps(out string) []Process {
	var ps []Process
	for line := range strings.Lines(out) {
		vals, err := splitCSV(line)
		if err != nil || len(vals) != len(SMIComputeAppFields) {
			continue
		}
		pid, err := strconv.Atoi(vals[0])
		if err != nil || pid <= 0 {
			continue
		}
		ps = append(ps, Process{PID: pid, GPUUUID: known(vals[1]), UsedBytes: number(vals[2]) * mib})
	}
	return ps
}

// AttachProcesses sets the PIDs of each GPU from the compute processes.
func AttachProcesses(gs []device.GPU, ps []Process) {
	for i := range gs {
		gs[i].PIDs = gs[i].PIDs[:0]
		for _, p := range ps {
			if p.GPUUUID != "" && p.GPUUUID == gs[i].UUID {
				gs[i].PIDs = append(gs[i].PIDs, p.PID)
			}
		}
	}
}

func splitCSV(line string) ([]string, error) {
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" {
		return nil, errors.New("empty nvidia-smi row")
	}
	r := csv.NewReader(strings.NewReader(line))
	r.TrimLeadingSpace = true
	vals, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi row: %w", err)
	}
	for i := range vals {
		vals[i] = strings.TrimSpace(vals[i])
	}
	return vals, nil
}

// known returns v cleaned for the screen, or "" for nvidia-smi's bracketed
// "cannot tell" values.
func known(v string) string {
	if isUnknown(v) {
		return ""
	}
	return safetext.Sanitize(v)
}

// isUnknown recognises "[N/A]", "N/A", "[Not Supported]", "[Unknown
// Error]", "[GPU requires reset]" and the like.
func isUnknown(v string) bool {
	return v == "" || v == "N/A" || strings.HasPrefix(v, "[")
}

// number is v's value; NaN for nvidia-smi's "cannot tell" values, none
// of which parses ("", "N/A", "[…]").
func number(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

func intOr(v string, def int) int {
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}

func bitmask(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.ToLower(v), "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(strings.ToLower(v), "0x") {
		return -1
	}
	return n
}
