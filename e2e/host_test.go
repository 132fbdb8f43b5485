package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// TestMain lets the test binary play the processes the end-to-end tests need:
// nvidia-smi, and inference servers under engines' command lines.
func TestMain(m *testing.M) {
	testutil.MainIfFakeNvidiaSMI()
	testutil.MainIfEngine(simrec.OneReplica)
	os.Exit(m.Run())
}

// h200Capture is a real `nvidia-smi --query-gpu` capture of one H200.
const h200Capture = "../gpu/testdata/nvidia-smi-query-gpu-h200-590.48.01.csv"

// h200UUID is the capture's GPU.
const h200UUID = "GPU-00000000-0000-0000-0000-000000000000"

// TestNoArgumentsFindsTheServersOfThisHost: vtop with no target finds the
// inference servers running on this host as real processes under vLLM's
// command lines, on ports of their own; a web server that is no engine is
// not listed; a vLLM process that refuses its metrics page is listed DOWN
// with the reason. nvidia-smi (the fake, replaying a real capture) lists
// the engine core of one server as the GPU's compute process: the GPU is
// joined to that server by its process tree, and the JSON has it.
func TestNoArgumentsFindsTheServersOfThisHost(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc on this system: vtop falls back to localhost:8000 there")
	}
	withGPU := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "vllm serve meta-llama/Llama-3.1-8B-Instruct --port {port}", Child: true})
	other := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "python3 -m vllm.entrypoints.openai.api_server --model m --port={port}"})
	refused := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineRefuse, Argv: "vllm serve m --port {port}"})
	web := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineWeb, Argv: "python3 -m http.server {port}"})

	apps := filepath.Join(t.TempDir(), "apps.csv")
	if err := os.WriteFile(apps, fmt.Appendf(nil, "%d, %s, 28234\n", withGPU.Child, h200UUID), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIReplay, Data: h200Capture, Apps: apps})

	stdout, stderr, _ := testutil.RunVtop(t, "--once", "--json", "--window", "3s")
	var report struct {
		Replicas []struct {
			Target, State, Error string
		}
		GPUs []map[string]any `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("--once --json: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if !regexp.MustCompile(`vtop: \d+ vLLM servers found on this host`).MatchString(stderr) {
		t.Errorf("stderr does not say what was found: %q", stderr)
	}
	byTarget := map[string]string{}
	errors := map[string]string{}
	for _, r := range report.Replicas {
		byTarget[r.Target], errors[r.Target] = r.State, r.Error
	}
	name := func(e testutil.Engine) string { return "127.0.0.1:" + strconv.Itoa(e.Port) }
	for _, e := range []testutil.Engine{withGPU, other} {
		if s, ok := byTarget[name(e)]; !ok || s == "down" || s == "warming" {
			t.Errorf("server %s: state %q (listed %v); replicas %v", name(e), s, ok, byTarget)
		}
	}
	if s := byTarget[name(refused)]; s != "down" || !strings.Contains(errors[name(refused)], "404") {
		t.Errorf("the server refusing its page: state %q, error %q; want down with its HTTP status", s, errors[name(refused)])
	}
	if _, listed := byTarget[name(web)]; listed {
		t.Errorf("the web server on %s is listed, yet it is no inference server", name(web))
	}

	var h200 map[string]any
	for _, g := range report.GPUs {
		if g["uuid"] == h200UUID {
			h200 = g
		}
	}
	if h200 == nil {
		t.Fatalf("no GPU %s in the JSON: %v\nstderr %s", h200UUID, report.GPUs, stderr)
	}
	if h200["replica"] != name(withGPU) || h200["source"] != "nvidia-smi" || h200["model"] != "NVIDIA H200" {
		t.Errorf("GPU %v: want joined to %s (its engine core computes on it), from nvidia-smi", h200, name(withGPU))
	}
	for _, field := range []string{"host", "index", "uuid", "model", "mig", "utilization", "memory_used_bytes", "memory_total_bytes",
		"power_watts", "power_limit_watts", "temperature_celsius", "sm_clock_hz", "xid", "pod", "replica", "source"} {
		if _, ok := h200[field]; !ok {
			t.Errorf("GPU object lacks %q: %v", field, h200)
		}
	}
	if h200["mig"] != nil || h200["pod"] != nil || h200["xid"] != nil {
		t.Errorf("GPU %v: mig, pod and xid must be null on a whole GPU outside Kubernetes without an XID", h200)
	}

	// The same servers given by hand: the process listening on each port
	// is looked up, and the GPU joined by process as before, not to both
	// replicas of this host nor to neither.
	stdout, stderr, _ = testutil.RunVtop(t, "--once", "--json", "--window", "2s", name(other), name(withGPU))
	var byHand struct {
		GPUs []struct {
			UUID    string  `json:"uuid"`
			Replica *string `json:"replica"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(stdout), &byHand); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if len(byHand.GPUs) != 1 || byHand.GPUs[0].Replica == nil || *byHand.GPUs[0].Replica != name(withGPU) {
		t.Errorf("targets given by hand: GPUs %+v, want the H200 joined to %s", byHand.GPUs, name(withGPU))
	}
}

// TestDCGMExportersOfSim: `vtop sim --dcgm` serves a dcgm-exporter page
// per replica; vtop reads them with --dcgm beside the replicas. Their GPUs
// carry the simulated pods, which the replicas scraped by address do not
// name: no evidence joins them, so they are listed under their hosts,
// never guessed. An exporter that is down is a note, not a failure.
func TestDCGMExportersOfSim(t *testing.T) {
	lines := testutil.StartVtop(t, []string{"sim", "--replicas", "2", "--dcgm", "--gpu-fault", "xid@2", "--seed", "3"}, 4)
	urls, exporters := lines[:2], lines[2:]
	args := []string{"--once", "--json", "--window", "2s"}
	args = append(args, urls...)
	for _, e := range exporters {
		addr, ok := strings.CutPrefix(e, "dcgm ")
		if !ok {
			t.Fatalf("sim --dcgm printed %q, want 'dcgm URL'", e)
		}
		args = append(args, "--dcgm", addr)
	}
	args = append(args, "--dcgm", "127.0.0.1:1") // nothing listens on port 1
	stdout, stderr, _ := testutil.RunVtop(t, args...)
	var report struct {
		GPUs []struct {
			Host    string   `json:"host"`
			Pod     *string  `json:"pod"`
			Replica *string  `json:"replica"`
			XID     *int     `json:"xid"`
			Util    *float64 `json:"utilization"`
		} `json:"gpus"`
		Sources []struct {
			Name, Note string
			GPUs       int
		} `json:"gpu_sources"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if len(report.GPUs) < 2 {
		t.Fatalf("%d GPUs, want the simulated replicas' (stderr %s)", len(report.GPUs), stderr)
	}
	xids := 0
	for _, g := range report.GPUs {
		if g.Replica != nil || g.Pod == nil || g.Util == nil {
			t.Errorf("GPU on %s: replica %v, pod %v, utilization %v; want unjoined, with its pod and utilisation", g.Host, g.Replica, g.Pod, g.Util)
		}
		if g.XID != nil && *g.XID == 79 && *g.Pod == "vllm-1" {
			xids++
		}
	}
	if xids == 0 {
		t.Errorf("no XID 79 on the second replica's GPUs: %+v", report.GPUs)
	}
	var down string
	for _, s := range report.Sources {
		if strings.Contains(s.Name, "127.0.0.1:1") {
			down = s.Note
		}
	}
	if !strings.Contains(down, "127.0.0.1:1") || !strings.Contains(down, "refused") {
		t.Errorf("the exporter that is down: note %q, want it named with the refusal; sources %+v", down, report.Sources)
	}
}

// TestNvidiaSMIBadCases: nvidia-smi missing, failing, hanging or printing
// [N/A] is a note in the report (or nulls), never a failure of vtop nor a
// late report: the replica beside it is judged as ever.
func TestNvidiaSMIBadCases(t *testing.T) {
	target := serveScenario(t, sim.Healthy)
	testutil.VtopBinary(t) // built while go is on PATH
	tests := []struct {
		name     string
		fake     *testutil.FakeSMI // nil: no nvidia-smi on PATH
		wantNote string            // "" : no note, the GPUs read
	}{
		{"missing", nil, "nvidia-smi not found on PATH: no GPU figures from this host"},
		{"driver/library mismatch", &testutil.FakeSMI{Mode: testutil.SMIMismatch}, "Driver/library version mismatch"},
		{"no driver", &testutil.FakeSMI{Mode: testutil.SMINoDriver}, "couldn't communicate with the NVIDIA driver"},
		// nvidia-smi's first row may take 30 s (driver start-up): vtop
		// reports on time meanwhile and says it is starting.
		{"hangs", &testutil.FakeSMI{Mode: testutil.SMIHang}, "starting nvidia-smi"},
		{"[N/A] and [Not Supported] fields", &testutil.FakeSMI{Mode: testutil.SMIReplay, Data: "../gpu/testdata/smi-na.csv"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fake == nil {
				t.Setenv("PATH", t.TempDir())
			} else {
				testutil.InstallFakeNvidiaSMI(t, *tt.fake)
			}
			cmd := testutil.VtopCommand(t, "--once", "--json", "--window", "2s", target)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// The window and two scrapes, with room for a loaded machine:
			// a hanging nvidia-smi must not hold the report back.
			if err := testutil.RunWithin(t, cmd, 20*time.Second); err != nil {
				t.Fatalf("vtop: %v\nstderr %s", err, stderr.String())
			}
			var report struct {
				Replicas []struct{ State string }
				GPUs     []map[string]any `json:"gpus"`
				Sources  []struct {
					Name, Note string
				} `json:"gpu_sources"`
			}
			if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
				t.Fatalf("%v\nstdout %s", err, stdout.String())
			}
			if len(report.Replicas) != 1 || report.Replicas[0].State != "healthy" {
				t.Errorf("replicas %+v: the replica is judged as without GPUs", report.Replicas)
			}
			if len(report.Sources) != 1 || report.Sources[0].Name != "nvidia-smi" {
				t.Fatalf("GPU sources %+v, want nvidia-smi alone", report.Sources)
			}
			note := report.Sources[0].Note
			if tt.wantNote == "" {
				if note != "" || len(report.GPUs) == 0 {
					t.Fatalf("note %q, %d GPUs: want the GPUs read", note, len(report.GPUs))
				}
				// utilization.gpu and power.draw are [N/A] and [Not
				// Supported] in the capture: null, never 0.
				g := report.GPUs[0]
				if g["utilization"] != nil || g["power_watts"] != nil || g["power_limit_watts"] != nil || g["memory_used_bytes"] != float64(32362<<20) {
					t.Errorf("GPU %v: want null utilization and power, the memory read", g)
				}
				return
			}
			if !strings.Contains(note, tt.wantNote) {
				t.Errorf("note %q, want it to say %q", note, tt.wantNote)
			}
			if len(report.GPUs) != 0 || report.GPUs == nil {
				t.Errorf("gpus %v: want an empty list", report.GPUs)
			}
		})
	}
}
