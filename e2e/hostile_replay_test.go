package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// hostileFile returns the path replayed by a case, made from a good
// recording of 90 scrapes of one replica.
type hostileFile func(t *testing.T, good string) string

// damaged returns the good recording with bytes [from, to) changed, and
// then copy appended (a stretch copied again) when given.
func damaged(from, to int, dup bool) hostileFile {
	return func(t *testing.T, good string) string {
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			data[i] ^= 0x5a
		}
		if dup {
			mid := len(data) / 2
			data = append(data[:mid:mid], append(data[mid/2:mid], data[mid:]...)...)
		}
		return testutil.WriteFile(t, "bad.vtrec", data)
	}
}

// TestHostileReplay: what a user may hand `vtop replay`, and what they
// get: a message and an exit code, never a hang or a crash.
func TestHostileReplay(t *testing.T) {
	t.Parallel()
	good := simrec.Record(t, sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 3}, 90, time.Second)
	fifo := func(t *testing.T, _ string) string {
		p := filepath.Join(t.TempDir(), "rec.fifo")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sparse := func(t *testing.T, good string) string {
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		p := testutil.WriteFile(t, "huge.vtrec", data)
		if err := os.Truncate(p, 8<<30); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		file     hostileFile
		stdin    bool // the file is /dev/stdin, a pipe nothing is written to
		args     []string
		limit    string // ulimit -v (KiB) the run is under, "" for none
		wantCode int
		wantErr  string // a part of stderr
		reports  int    // --jsonl reports expected at least
	}{
		{name: "named pipe", file: fifo, args: []string{"--jsonl"}, wantCode: 64, wantErr: "a named pipe, not a file"},
		{name: "/dev/stdin from a pipe", stdin: true, args: []string{"--jsonl"}, wantCode: 64, wantErr: "a named pipe, not a file"},
		{name: "a device", file: func(*testing.T, string) string { return os.DevNull }, args: []string{"--jsonl"}, wantCode: 64, wantErr: "a device, not a file"},
		{name: "one byte of the magic damaged", file: damaged(3, 4, false), args: []string{"--jsonl"}, wantCode: 0, wantErr: "damaged", reports: 85},
		{name: "one byte of the header damaged", file: damaged(30, 31, false), args: []string{"--jsonl"}, wantCode: 0, wantErr: "damaged", reports: 85},
		{name: "a stretch copied again", file: damaged(0, 0, true), args: []string{"--jsonl"}, wantCode: 0, wantErr: "damaged", reports: 85},
		{name: "a recording of one scrape", file: func(t *testing.T, _ string) string {
			return forged{Targets: 1, Frames: 1, Page: simulatedPage(t)}.Write(t)
		}, args: []string{"--jsonl"}, wantCode: 0, reports: 1},
		{name: "8 GiB sparse file under a 4 GiB limit", file: sparse, args: []string{"--once", "--json"}, limit: "4194304", wantCode: 0, wantErr: "recording ends at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/dev/stdin"
			if !tt.stdin {
				path = tt.file(t, good)
			}
			cmd := testutil.VtopCommand(t, append([]string{"replay", path}, tt.args...)...)
			if tt.limit != "" {
				cmd = exec.Command("sh", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, tt.limit}, cmd.Args...)...)
				cmd.Env = append(os.Environ(), testutil.CoverEnv(t)...)
			}
			if tt.stdin {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				cmd.Stdin = r
			}
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			code := testutil.ExitStatus(t, testutil.RunWithin(t, cmd, 2*time.Minute), cmd.Args)
			t.Logf("exit %d; stderr: %s", code, errOut.String())
			if code != tt.wantCode || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tt.wantCode, tt.wantErr)
			}
			if n := strings.Count(out.String(), "\n"); n < tt.reports {
				t.Errorf("%d reports, want at least %d", n, tt.reports)
			}
			checkTimesForward(t, out.String())
		})
	}
}

// checkTimesForward fails when a report of --jsonl is not after the one
// before it.
func checkTimesForward(t *testing.T, jsonl string) {
	t.Helper()
	var last string
	for _, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		_, rest, ok := strings.Cut(l, `"time":"`)
		if !ok {
			continue
		}
		at, _, _ := strings.Cut(rest, `"`)
		if last != "" && at <= last {
			t.Fatalf("report at %s after one at %s", at, last)
		}
		last = at
	}
}

// TestHostileReplaySignals: SIGTERM or Ctrl-C end a replay wherever it
// is: reading a large file, or printing to a reader that stopped reading.
func TestHostileReplaySignals(t *testing.T) {
	t.Parallel()
	good := simrec.Record(t, sim.Options{Replicas: 3, Scenario: sim.Mixed, Seed: 3}, 300, time.Second)
	tests := []struct {
		name   string
		sig    syscall.Signal
		stdout string // "blocked": a pipe nobody reads
	}{
		{"SIGTERM while stdout is blocked", syscall.SIGTERM, "blocked"},
		{"Ctrl-C while stdout is blocked", syscall.SIGINT, "blocked"},
		{"SIGTERM while reading a 64 GiB sparse file", syscall.SIGTERM, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := good
			if tt.stdout == "" {
				data, err := os.ReadFile(good)
				if err != nil {
					t.Fatal(err)
				}
				path = testutil.WriteFile(t, "huge.vtrec", data)
				if err := os.Truncate(path, 64<<30); err != nil {
					t.Fatal(err)
				}
			}
			cmd := testutil.VtopCommand(t, "replay", path, "--jsonl")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cmd.Stdout = w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if tt.stdout == "" {
				go func() { _, _ = io.Copy(io.Discard, r) }()
			}
			time.Sleep(2 * time.Second) // the pipe is full, or the file half read, by now
			_ = cmd.Process.Signal(tt.sig)
			_ = testutil.WaitWithin(t, cmd, 10*time.Second)
		})
	}
}

// onceJSON runs `vtop --once --json` on target and returns its report.
func onceJSON(t *testing.T, args ...string) (rep struct {
	Replicas []struct {
		State, Error string
		Running      *float64
	}
	GPUs    []map[string]any              `json:"gpus"`
	Sources []struct{ Name, Note string } `json:"gpu_sources"`
}) {
	t.Helper()
	cmd := testutil.VtopCommand(t, append([]string{"--once", "--json", "--window", "2s"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = testutil.RunWithin(t, cmd, 30*time.Second)
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
	}
	return rep
}

// TestHostileGzipPage: a server on loopback that compresses its page
// although vtop asks it not to is read; one whose compressed page is cut
// is said to be compressed, not "cut mid-line".
func TestHostileGzipPage(t *testing.T) {
	t.Parallel()
	page := testutil.VLLMPage(t, 1)
	var zipped bytes.Buffer
	z := gzip.NewWriter(&zipped)
	_, _ = z.Write(page)
	_ = z.Close()
	tests := []struct {
		name      string
		body      []byte
		wantError string // "" for a page read
	}{
		{"a good page, gzipped", zipped.Bytes(), ""},
		{"a gzipped page cut short", zipped.Bytes()[:zipped.Len()/2], "gzip-compressed page does not decompress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(tt.body)
			})
			rep := onceJSON(t, "--no-gpus", url)
			if len(rep.Replicas) != 1 {
				t.Fatalf("replicas %+v", rep.Replicas)
			}
			got := rep.Replicas[0]
			if tt.wantError == "" && (got.Error != "" || got.Running == nil) || !strings.Contains(got.Error, tt.wantError) {
				t.Errorf("replica %+v, want error %q", got, tt.wantError)
			}
		})
	}
}

// TestHostileNvidiaSMI: an nvidia-smi that reports a new GPU on every
// line keeps at most 64, said so; one that prints a line over 64 KiB is
// said to, not "signal: killed".
func TestHostileNvidiaSMI(t *testing.T) {
	url := testutil.StartServer(t, testutil.ServePage(string(testutil.VLLMPage(t, 1)), "text/plain; version=0.0.4"))
	row := `"$i, GPU-$i, NVIDIA H100, 50, 1000, 81559, 300, 700, 40, 30, 1500, 1980, 0x0, 0"`
	tests := []struct {
		name     string
		body     string
		maxGPUs  int
		wantNote string
	}{
		{"a new GPU on every line", `i=0; while :; do echo ` + row + `; i=$((i+1)); done`, 64, "more than 64 GPUs"},
		{"a line over 64 KiB", `head -c 70000 /dev/zero | tr '\0' x; echo; sleep 100`, 0, "nvidia-smi printed a line over 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := "#!/bin/sh\ncase \"$1\" in --query-compute-apps*) exit 0;; esac\n" + tt.body + "\n"
			if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
			rep := onceJSON(t, url)
			if len(rep.Sources) != 1 || !strings.Contains(rep.Sources[0].Note, tt.wantNote) || len(rep.GPUs) > tt.maxGPUs {
				t.Errorf("%d GPUs, sources %+v; want at most %d and %q", len(rep.GPUs), rep.Sources, tt.maxGPUs, tt.wantNote)
			}
		})
	}
}
