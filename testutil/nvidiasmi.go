package testutil

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Environment of the fake nvidia-smi: how it behaves and what it replays.
const (
	envSMIMode      = "VTOP_FAKE_SMI_MODE"
	envSMIData      = "VTOP_FAKE_SMI_DATA"
	envSMIApps      = "VTOP_FAKE_SMI_APPS"
	envSMICalls     = "VTOP_FAKE_SMI_CALLS"
	envSMIFailFirst = "VTOP_FAKE_SMI_FAIL_FIRST"
)

// Behaviours of the fake nvidia-smi.
const (
	// SMIReplay answers queries from Data (a CSV with a header of field
	// names), streams with -lms, and lists Apps for --query-compute-apps.
	SMIReplay = "replay"
	// SMIMismatch fails as nvidia-smi does after a driver upgrade without
	// a reboot.
	SMIMismatch = "mismatch"
	// SMINoDriver fails as nvidia-smi does when no driver is loaded.
	SMINoDriver = "no-driver"
	// SMIHang never writes and never exits.
	SMIHang = "hang"
	// SMIStall writes one round of rows, then hangs.
	SMIStall = "stall"
)

// Texts nvidia-smi prints when it fails (to stdout, as it does).
const (
	SMIMismatchText = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.127\n"
	SMINoDriverText = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
)

// FakeSMI configures a fake nvidia-smi.
type FakeSMI struct {
	// Mode is one of SMIReplay, SMIMismatch, SMINoDriver, SMIHang, SMIStall.
	Mode string
	// Data is the CSV replayed: a header of field names (units in
	// brackets are dropped) and one row per GPU, values with or without
	// units.
	Data string
	// Apps is printed for --query-compute-apps.
	Apps string
	// FailFirst makes the first calls fail with the mismatch text.
	FailFirst int
}

// InstallFakeNvidiaSMI puts an nvidia-smi first on PATH for the rest of the
// test: a link to the test binary, whose TestMain calls
// MainIfFakeNvidiaSMI. It returns a function counting the calls so far.
func InstallFakeNvidiaSMI(t testing.TB, f FakeSMI) (calls func() int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "calls")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(envSMIMode, f.Mode)
	t.Setenv(envSMIData, abs(t, f.Data))
	t.Setenv(envSMIApps, abs(t, f.Apps))
	t.Setenv(envSMICalls, count)
	t.Setenv(envSMIFailFirst, strconv.Itoa(f.FailFirst))
	return func() int {
		b, _ := os.ReadFile(count)
		return len(b)
	}
}

func abs(t testing.TB, p string) string {
	if p == "" {
		return ""
	}
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// MainIfFakeNvidiaSMI plays nvidia-smi and exits when the test binary was
// started under that name; otherwise it returns at once. Call it first in
// TestMain.
func MainIfFakeNvidiaSMI() {
	if filepath.Base(os.Args[0]) != "nvidia-smi" {
		return
	}
	os.Exit(fakeSMI(os.Args[1:], os.Stdout))
}

func fakeSMI(args []string, out io.Writer) int {
	if f, err := os.OpenFile(os.Getenv(envSMICalls), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_, _ = f.Write([]byte{'.'})
		calls, _ := f.Seek(0, io.SeekCurrent)
		f.Close()
		first, _ := strconv.Atoi(os.Getenv(envSMIFailFirst))
		if int(calls) <= first {
			fmt.Fprint(out, SMIMismatchText)
			return 18
		}
	}
	switch os.Getenv(envSMIMode) {
	case SMIMismatch:
		fmt.Fprint(out, SMIMismatchText)
		return 18
	case SMINoDriver:
		fmt.Fprint(out, SMINoDriverText)
		return 9
	case SMIHang:
		hang()
	}
	return replaySMI(args, out)
}

// replaySMI answers --query-compute-apps and --query-gpu from the files.
func replaySMI(args []string, out io.Writer) int {
	var query, lms string
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--query-compute-apps="):
			b, _ := os.ReadFile(os.Getenv(envSMIApps))
			_, _ = out.Write(b)
			return 0
		case strings.HasPrefix(a, "--query-gpu="):
			query = strings.TrimPrefix(a, "--query-gpu=")
		case a == "-lms" && i+1 < len(args):
			lms = args[i+1]
		}
	}
	header, rows, err := ReadSMIData(os.Getenv(envSMIData))
	if err != nil {
		fmt.Fprintln(out, err)
		return 1
	}
	lines, bad := ProjectSMI(header, rows, strings.Split(query, ","))
	if bad != "" {
		fmt.Fprintf(out, "Field \"%s\" is not a valid field to query.\n\n", bad)
		return 2
	}
	return streamRows(out, lines, lms)
}

// streamRows writes the rows once, or every interval with -lms.
func streamRows(out io.Writer, lines []string, lms string) int {
	w := bufio.NewWriter(out)
	for {
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		if w.Flush() != nil {
			return 1
		}
		if lms == "" {
			return 0
		}
		if os.Getenv(envSMIMode) == SMIStall {
			hang()
		}
		ms, _ := strconv.Atoi(lms)
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// ReadSMIData reads a CSV of nvidia-smi's --format=csv shape: the header's
// names without their "[unit]", and the rows.
func ReadSMIData(path string) ([]string, [][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.TrimLeadingSpace = true
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, nil, fmt.Errorf("smi data %s: %v", path, err)
	}
	header := recs[0]
	for i, h := range header {
		name, _, _ := strings.Cut(h, " [")
		header[i] = strings.TrimSpace(name)
	}
	return header, recs[1:], nil
}

// smiAliases are the short names nvidia-smi accepts for canonical ones.
var smiAliases = map[string]string{"clocks.sm": "clocks.current.sm", "clocks.gr": "clocks.current.graphics", "clocks.mem": "clocks.current.memory"}

// ProjectSMI answers a query from the data as `--format=csv,noheader,nounits`
// prints it: one line per row with the queried fields, units dropped. It
// returns the first field the data does not know instead, as an older
// driver refuses it.
func ProjectSMI(header []string, rows [][]string, query []string) (lines []string, unknown string) {
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	idx := make([]int, len(query))
	for i, q := range query {
		c, ok := col[q]
		if !ok {
			c, ok = col[smiAliases[q]]
		}
		if !ok {
			return nil, q
		}
		idx[i] = c
	}
	for _, row := range rows {
		vals := make([]string, len(idx))
		for i, c := range idx {
			vals[i] = dropUnit(row[c])
		}
		lines = append(lines, strings.Join(vals, ", "))
	}
	return lines, ""
}

// dropUnit turns "32362 MiB" into "32362", as nounits does.
func dropUnit(v string) string {
	if strings.HasPrefix(v, "[") {
		return v
	}
	if n, unit, ok := strings.Cut(v, " "); ok && !strings.Contains(unit, " ") {
		if _, err := strconv.ParseFloat(n, 64); err == nil {
			return n
		}
	}
	return v
}

// hang blocks until the process is killed. (An empty select would be
// reported as a deadlock by the runtime and exit.)
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}
