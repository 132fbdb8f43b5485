package e2e

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// The tests of the recordings through the built binary: what is recorded
// live replays to the very same reports, two recordings compare with a
// verdict, an export is OpenMetrics, and every bad input has its own
// message and exit code.

// simChild runs `vtop sim` as a child process and returns its URLs; the
// fleet is interrupted when the test ends.
func simChild(t *testing.T, replicas int, scenario sim.Scenario) []string {
	t.Helper()
	return testutil.StartVtop(t, []string{"sim", "--replicas", strconv.Itoa(replicas), "--scenario", string(scenario), "--warm-up", "2m"}, replicas)
}

// runOK runs the binary and fails the test unless it exits 0.
func runOK(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, code := testutil.RunVtop(t, args...)
	if code != 0 {
		t.Fatalf("vtop %s: exit code %d\nstdout: %.2000s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// lines splits output into its lines.
func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// TestRecordReplayRoundTrip: a fleet served by `vtop sim` is watched with
// --jsonl --record for 30 s; `vtop replay FILE --jsonl` prints, line for
// line, the JSON live mode printed, and --once --json its last report.
func TestRecordReplayRoundTrip(t *testing.T) {
	t.Parallel()
	urls := simChild(t, 3, sim.Mixed)
	path := filepath.Join(t.TempDir(), "live.vtrec")
	// A recording keeps the servers' pages, not the GPUs: the live side
	// reads none, so that both sides report the same things.
	args := append([]string{"--jsonl", "--record", path, "--duration", "30s", "--interval", "500ms", "--window", "5s", "--no-gpus"}, urls...)
	cmd := testutil.VtopCommand(t, args...)
	var liveOut, liveErr strings.Builder
	cmd.Stdout, cmd.Stderr = &liveOut, &liveErr
	if code := testutil.ExitStatus(t, testutil.RunWithin(t, cmd, 90*time.Second), args); code != 0 {
		t.Fatalf("live: exit code %d; stderr: %s", code, liveErr.String())
	}
	if !strings.Contains(liveErr.String(), "vtop: recorded ") || !strings.Contains(liveErr.String(), "of 3 targets in "+path) {
		t.Errorf("live stderr %q, want what the recording holds", liveErr.String())
	}
	live := lines(liveOut.String())
	if len(live) < 40 {
		t.Fatalf("%d live reports in 30s at 500ms, want about 60", len(live))
	}

	replayed, replayErr := runOK(t, "replay", path, "--jsonl")
	if replayErr != "" {
		t.Errorf("replay stderr %q, want nothing: the recording is intact", replayErr)
	}
	got := lines(replayed)
	if len(got) != len(live) {
		t.Fatalf("%d replayed reports, %d live", len(got), len(live))
	}
	for i := range live {
		if got[i] != live[i] {
			t.Fatalf("report %d differs:\nlive   %s\nreplay %s", i+1, live[i], got[i])
		}
	}
	if !strings.Contains(live[len(live)-1], `"state":"full"`) {
		t.Errorf("the mixed fleet's last report has no full replica: %.500s", live[len(live)-1])
	}

	// --once --json is the last report, indented, with the exit code of
	// its states (a mixed fleet is degraded).
	once, _, code := testutil.RunVtop(t, "replay", path, "--once", "--json")
	if code != command.ExitDegraded {
		t.Errorf("replay --once: exit code %d, want %d", code, command.ExitDegraded)
	}
	var onceReport, lastReport any
	if err := json.Unmarshal([]byte(once), &onceReport); err != nil {
		t.Fatalf("replay --once --json: %v\n%s", err, once)
	}
	if err := json.Unmarshal([]byte(live[len(live)-1]), &lastReport); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(onceReport, lastReport) {
		t.Errorf("replay --once --json is not the last live report:\n%s\n%s", once, live[len(live)-1])
	}
}

// recordScenarios records one simulated replica of each scenario with
// `vtop record`, side by side for a few seconds, and returns the files.
func recordScenarios(t *testing.T, dir string, scenarios ...sim.Scenario) []string {
	t.Helper()
	var paths []string
	var cmds []*exec.Cmd
	var errs []*strings.Builder
	for _, sc := range scenarios {
		url := simChild(t, 1, sc)[0]
		path := filepath.Join(dir, string(sc)+".vtrec")
		cmd := testutil.VtopCommand(t, "record", "-o", path, "--duration", "6s", "--interval", "500ms", url)
		stderr := &strings.Builder{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		paths, cmds, errs = append(paths, path), append(cmds, cmd), append(errs, stderr)
	}
	for i, cmd := range cmds {
		if code := testutil.ExitStatus(t, testutil.WaitWithin(t, cmd, 60*time.Second), cmd.Args); code != 0 {
			t.Fatalf("vtop record: exit code %d; stderr: %s", code, errs[i])
		}
		said := errs[i].String()
		if !strings.Contains(said, "vtop: recording 1 targets to "+paths[i]+" for 6s") || !strings.Contains(said, "vtop: recorded ") {
			t.Errorf("vtop record said %q", said)
		}
	}
	return paths
}

// TestDiffAndExport: a healthy and a preempting replica recorded with
// `vtop record` compare with a verdict that names the preemptions, as
// text and JSON, or, when their loads differ, says they are not
// comparable; an export is OpenMetrics ending in # EOF, and promtool,
// where installed, turns it into blocks.
func TestDiffAndExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := recordScenarios(t, dir, sim.Healthy, sim.Preempting)
	base, cand := files[0], files[1]

	text, _ := runOK(t, "diff", base, cand, "--window", "1s:")
	verdict := lines(text)[len(lines(text))-1]
	switch {
	case strings.Contains(text, "warning: "):
		// The scenarios' loads differ: a verdict across them would be
		// untrue either way.
		if !strings.HasPrefix(verdict, "candidate: not comparable: its load differs") {
			t.Errorf("verdict %q, want not comparable under the loads' warning\n%s", verdict, text)
		}
	case !strings.HasPrefix(verdict, "candidate: ") || !strings.Contains(verdict, "preemptions/s") || !strings.Contains(verdict, "under this load"):
		t.Errorf("verdict %q, want the candidate's preemptions named\n%s", verdict, text)
	}
	for _, want := range []string{"baseline  " + base, "candidate " + cand, "preemptions/s", "TTFT p99"} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	js, _ := runOK(t, "diff", base, cand, "--json")
	var res struct {
		Verdict   string `json:"verdict"`
		Candidate struct {
			Preemptions *float64 `json:"preemptions_per_second"`
		} `json:"candidate"`
	}
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, js)
	}
	if !strings.HasPrefix(res.Verdict, "candidate: ") || res.Candidate.Preemptions == nil || *res.Candidate.Preemptions <= 0 {
		t.Errorf("diff --json: verdict %q, candidate preemptions %v", res.Verdict, res.Candidate.Preemptions)
	}

	out := filepath.Join(dir, "preempting.om")
	_, stderr := runOK(t, "export", cand, "-o", out, "--openmetrics")
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(page), "# EOF\n") || !strings.Contains(string(page), "vllm:num_preemptions_total{") || !strings.Contains(stderr, "vtop: exported ") {
		t.Errorf("export: stderr %q, page of %d bytes ending %q", stderr, len(page), page[max(0, len(page)-200):])
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		blocks := filepath.Join(dir, "blocks")
		if msg, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", out, blocks).CombinedOutput(); err != nil {
			t.Errorf("promtool refused the export: %v\n%s", err, msg)
		}
	} else {
		t.Log("promtool not installed: the export's OpenMetrics is checked by export's own tests")
	}
}

// writeRecording writes a file with a recording's prefix and header
// record, built by hand from the format's description.
func writeRecording(t *testing.T, path string, version uint16, header string) {
	t.Helper()
	b := []byte("\x89VTR\r\n\x1a\n")
	b = binary.LittleEndian.AppendUint16(b, version)
	b = append(b, 0xd5, 0x7e)
	start := len(b)
	b = append(b, 'H')
	b = binary.AppendUvarint(b, uint64(len(header)))
	b = append(b, header...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordingRejections: every bad input of the recording commands ends
// at once with a message naming the problem: 64 for wrong arguments and
// files that are not recordings, 65 for recordings that cannot be used.
func TestRecordingRejections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notes := file("notes.txt", "gpu-a:8000\n")
	empty := file("empty.vtrec", "")
	newer := filepath.Join(dir, "newer.vtrec")
	writeRecording(t, newer, 9, `{"format":9,"targets":[{"name":"a:1","url":"http://a:1/metrics"}]}`)
	noTargets := filepath.Join(dir, "no-targets.vtrec")
	writeRecording(t, noTargets, 1, `{"format":1,"interval_ns":1000000000,"targets":[]}`)
	noScrapes := filepath.Join(dir, "no-scrapes.vtrec")
	writeRecording(t, noScrapes, 1, `{"format":1,"interval_ns":1000000000,"targets":[{"name":"a:1","url":"http://a:1/metrics"}]}`)
	const target = "127.0.0.1:1"

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"replay a text file", []string{"replay", notes}, command.ExitUsage, "notes.txt: not a vtop recording"},
		{"replay a missing file", []string{"replay", filepath.Join(dir, "nope.vtrec"), "--jsonl"}, command.ExitUsage, "no such file"},
		{"replay an empty file", []string{"replay", empty, "--jsonl"}, command.ExitData, "empty file: the recording was never started"},
		{"replay a newer format", []string{"replay", newer}, command.ExitData, "recording format 9 is newer than this vtop reads (1)"},
		{"replay a recording of no targets", []string{"replay", noTargets, "--once"}, command.ExitData, "the recording has no targets"},
		{"replay a recording of no scrapes", []string{"replay", noScrapes, "--jsonl"}, command.ExitData, "no-scrapes.vtrec: the recording holds no scrape to replay"},
		{"replay --json without --once", []string{"replay", noScrapes, "--json"}, command.ExitUsage, "--json goes with --once"},
		{"replay at an unknown speed", []string{"replay", noScrapes, "--speed", "5"}, command.ExitUsage, "--speed must be one of"},
		{"export a text file", []string{"export", notes}, command.ExitUsage, "not a vtop recording"},
		{"export an empty file", []string{"export", empty}, command.ExitData, "empty file"},
		{"export over a file", []string{"export", noScrapes, "-o", notes}, command.ExitUsage, "the file exists"},
		{"diff with a newer format", []string{"diff", noScrapes, newer}, command.ExitData, "newer than this vtop reads"},
		{"diff of nothing to compare", []string{"diff", noScrapes, noScrapes}, command.ExitData, "fewer than two readings"},
		{"diff window backwards", []string{"diff", noScrapes, noScrapes, "--window", "7m:2m"}, command.ExitUsage, `--window "7m:2m": want [FROM:]TO with TO after FROM`},
		{"diff window not a duration", []string{"diff", noScrapes, noScrapes, "--window", "soon"}, command.ExitUsage, `--window "soon"`},
		{"record without -o", []string{"record", target}, command.ExitUsage, "missing flags: --output"},
		{"record over a file", []string{"record", "-o", notes, target}, command.ExitUsage, "file exists: a recording is never overwritten"},
		{"record through Prometheus", []string{"record", "-o", filepath.Join(dir, "p.vtrec"), "--prometheus", "http://127.0.0.1:1"}, command.ExitUsage, "vtop record reads a stretch of its past: give --from TIME [--to TIME], or --at TIME"},
		{"record with a bad size", []string{"record", "-o", filepath.Join(dir, "s.vtrec"), "--max-size", "lots", target}, command.ExitUsage, `--max-size: "lots" is not a size`},
		{"watch --record through Prometheus", []string{"--prometheus", "http://127.0.0.1:1", "--record", filepath.Join(dir, "w.vtrec")}, command.ExitUsage, "a watch through --prometheus is not recorded; vtop record --prometheus URL --from TIME --to TIME -o FILE records a stretch of its past"},
		{"watch --once --record", []string{"--once", "--record", filepath.Join(dir, "o.vtrec"), target}, command.ExitUsage, "--record goes with the dashboard or --jsonl"},
		{"watch --record-all alone", []string{"--jsonl", "--record-all", target}, command.ExitUsage, "--record-all goes with --record FILE"},
		{"watch --record over a file", []string{"--jsonl", "--record", notes, target}, command.ExitUsage, "file exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := testutil.RunVtop(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.HasPrefix(stderr, "vtop: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q, want vtop: … %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
	if b, _ := os.ReadFile(notes); string(b) != "gpu-a:8000\n" {
		t.Errorf("a refused command changed an existing file: %q", b)
	}
}

// TestRecordingStopsWatchingGoesOn: a recording that reaches
// --record-max-size stops, says so on stderr, and --jsonl goes on to its
// --duration; what was recorded replays.
func TestRecordingStopsWatchingGoesOn(t *testing.T) {
	t.Parallel()
	urls := simChild(t, 2, sim.Healthy)
	path := filepath.Join(t.TempDir(), "small.vtrec")
	stdout, stderr := runOK(t, append([]string{"--jsonl", "--record", path, "--record-max-size", "6KiB", "--duration", "5s", "--interval", "500ms", "--window", "2s"}, urls...)...)
	if !strings.Contains(stderr, "vtop: recording stopped at --record-max-size 6KiB; watching goes on") {
		t.Errorf("stderr %q, want the recording's stop said", stderr)
	}
	live := lines(stdout)
	if len(live) < 7 {
		t.Errorf("%d reports in 5s at 500ms: watching stopped with the recording", len(live))
	}
	if info, err := os.Stat(path); err != nil || info.Size() > 6<<10 {
		t.Fatalf("the recording: %v, %d bytes over the 6KiB limit", err, info.Size())
	}
	replayed, _ := runOK(t, "replay", path, "--jsonl")
	if n := len(lines(replayed)); n == 0 || n >= len(live) {
		t.Errorf("%d reports replayed of %d live: want the ones before the limit", n, len(live))
	}
}
