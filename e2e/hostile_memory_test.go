package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// oversizedPages serves n pages just under the 16 MiB --max-body cap: a
// healthy replica's page padded with comments.
func oversizedPages(t *testing.T, n int) []string {
	var b bytes.Buffer
	line := "# " + strings.Repeat("x", 1021) + "\n"
	for b.Len()+len(line) < 16<<20-64<<10 {
		b.WriteString(line)
	}
	b.Write(testutil.VLLMPage(t, 1))
	page := b.Bytes()
	var urls []string
	for range n {
		urls = append(urls, testutil.StartServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write(page)
		}))
	}
	return urls
}

// oneSeriesOfLabels is a matrix answer of one series of n labels, some
// 55 bytes of JSON each: labels counted only once a series is whole let
// it pass the bound.
func oneSeriesOfLabels(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:num_requests_running"`)
	for i := range n {
		fmt.Fprintf(&b, `,"label_%07d":"%036d"`, i, i)
	}
	b.WriteString(`},"values":[[1,"1"]]}]}}`)
	return b.Bytes()
}

// fakeSMIFlood puts on PATH an nvidia-smi that reports a new GPU on every
// line, forever, and returns the PATH.
func fakeSMIFlood(t *testing.T) string {
	dir := t.TempDir()
	row := `"$i, GPU-$i, NVIDIA H100, 50, 1000, 81559, 300, 700, 40, 30, 1500, 1980, 0x0, 0"`
	script := "#!/bin/sh\ncase \"$1\" in --query-compute-apps*) exit 0;; esac\ni=0; while :; do echo " + row + "; i=$((i+1)); done\n"
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + ":" + os.Getenv("PATH")
}

// TestHostileMemory runs the vtop binary under --max-memory's default
// against each worst input it bounds, one row each, and prints the
// process' peak RSS (VmHWM): it must stay within 256 MiB, and the run
// must end with a report or a refusal, not a crash. It takes about two
// minutes, so it runs where it is asked for: .ci/run's hostile stage sets
// VTOP_HOSTILE_MEMORY=1.
func TestHostileMemory(t *testing.T) {
	if os.Getenv("VTOP_HOSTILE_MEMORY") == "" {
		t.Skip("two minutes of worst inputs: set VTOP_HOSTILE_MEMORY=1 to run it (.ci/run does)")
	}
	tests := []struct {
		name  string
		args  func(t *testing.T) (args []string, path string)
		codes []int  // the exit codes that are a report
		want  string // in the output, "" for nothing said
	}{
		{name: "16 pages at the 16 MiB --max-body cap", args: func(t *testing.T) ([]string, string) {
			return append([]string{"--once", "--json", "--no-gpus", "--timeout", "8s", "--interval", "10s"}, oversizedPages(t, 16)...), ""
		}, codes: []int{command.ExitHealthy, command.ExitDegraded, command.ExitDown}},
		{name: "a page of 320 MiB under --max-body 1GiB", args: func(t *testing.T) ([]string, string) {
			chunk := []byte("# " + strings.Repeat("x", 1<<20-3) + "\n")
			url := testutil.StartServer(t, func(w http.ResponseWriter, _ *http.Request) {
				for range 320 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			})
			return []string{"--once", "--json", "--no-gpus", "--max-body", "1GiB", url}, ""
		}, codes: []int{command.ExitDown, command.ExitNoData},
			want: "would pass the pages' share of --max-memory 256MiB (128 MiB)"},
		{name: "a Prometheus answering 100,000 series to every query", args: func(t *testing.T) ([]string, string) {
			srv := httptest.NewServer(&hostilePrometheus{flood: floodOf(100_000)})
			t.Cleanup(srv.Close)
			return []string{"--once", "--json", "--window", "10s", "--prometheus", srv.URL}, ""
		}, codes: []int{command.ExitNoData}},
		{name: "a Prometheus answering one series of 1,000,000 labels (55 MB) to every query", args: func(t *testing.T) ([]string, string) {
			srv := httptest.NewServer(&hostilePrometheus{flood: oneSeriesOfLabels(1_000_000)})
			t.Cleanup(srv.Close)
			return []string{"--once", "--json", "--window", "10s", "--prometheus", srv.URL}, ""
		}, codes: []int{command.ExitNoData}, want: " labels of the next)"},
		{name: "nvidia-smi reporting a new GPU on every line", args: func(t *testing.T) ([]string, string) {
			url := testutil.StartServer(t, testutil.ServePage(string(testutil.VLLMPage(t, 1)), "text/plain; version=0.0.4"))
			return []string{"--once", "--json", url}, fakeSMIFlood(t)
		}, codes: []int{command.ExitHealthy, command.ExitDegraded}},
		{name: "a recording of 8 replicas over 10 minutes replayed", args: func(t *testing.T) ([]string, string) {
			rec := simrec.Record(t, sim.Options{Replicas: 8, Scenario: sim.Healthy, Seed: 5}, 600, time.Second)
			return []string{"replay", rec, "--once", "--json"}, ""
		}, codes: []int{command.ExitHealthy, command.ExitDegraded}},
		// Recordings: a frame's page is bounded before it is decoded, and
		// the header's targets before they are read.
		{name: "six key frames of 7 KB that decode to 60 MiB each, replayed --once", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 1, Frames: 6, Decoded: 60 << 20}.Write(t), "--once", "--json"}, ""
		}, codes: []int{record.ExitData}, want: "forged.vtrec: frame 1 of 127.0.0.1:8000 holds a page of 60.0 MiB"},
		{name: "20 targets of such frames replayed", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 20, Frames: 6, Decoded: 60 << 20}.Write(t), "--jsonl"}, ""
		}, codes: []int{record.ExitData}, want: "more than a page may hold at --max-memory 256MiB (16 MiB)"},
		{name: "20 targets of such frames exported", args: func(t *testing.T) ([]string, string) {
			return []string{"export", forged{Targets: 20, Frames: 6, Decoded: 60 << 20}.Write(t)}, ""
		}, codes: []int{record.ExitData}, want: "forged.vtrec: frame 1 of 127.0.0.1:8000 holds a page of 60.0 MiB"},
		{name: "20 targets of frames that state 4 KiB, their zstd frames 60 MiB, replayed", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 20, Frames: 6, Decoded: 60 << 20, Declared: 4 << 10}.Write(t), "--jsonl"}, ""
		}, codes: []int{record.ExitData}, want: "forged.vtrec: recording ends at"},
		{name: "20 targets of frames that state 64 KiB and decode to 60 MiB without saying so, replayed", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 20, Frames: 6, Decoded: 60 << 20, Declared: 64 << 10, Unsized: true}.Write(t), "--once", "--json"}, ""
		}, codes: []int{command.ExitDown}, want: "forged.vtrec: frame 6 decodes to more than the 65536 bytes it states"},
		{name: "20 targets of frames that state 64 KiB and decode to 60 MiB without saying so, exported", args: func(t *testing.T) ([]string, string) {
			return []string{"export", forged{Targets: 20, Frames: 6, Decoded: 60 << 20, Declared: 64 << 10, Unsized: true}.Write(t)}, ""
		}, codes: []int{0}, want: "forged.vtrec: skipped 120 scrapes that could not be read (the first: 127.0.0.1:8000: frame 1 decodes to more than the 65536 bytes it states"},
		{name: "20 targets of frames of 16 MiB pages, the most a frame may hold, replayed", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 20, Frames: 3, Decoded: 16 << 20}.Write(t), "--jsonl"}, ""
		}, codes: []int{0}},
		{name: "20 targets of frames of 16 MiB pages exported", args: func(t *testing.T) ([]string, string) {
			return []string{"export", forged{Targets: 20, Frames: 3, Decoded: 16 << 20}.Write(t)}, ""
		}, codes: []int{0}, want: "exported 0 series, 0 samples from 60 scrapes"},
		{name: "a header of 200,000 targets and one frame, exported", args: func(t *testing.T) ([]string, string) {
			return []string{"export", forged{Targets: 200_000, Framed: 1, Frames: 1, Page: simulatedPage(t)}.Write(t)}, ""
		}, codes: []int{record.ExitData}, want: "forged.vtrec: the header lists 200000 targets"},
		{name: "a header of 200,000 targets and one frame, replayed", args: func(t *testing.T) ([]string, string) {
			return []string{"replay", forged{Targets: 200_000, Framed: 1, Frames: 1, Page: simulatedPage(t)}.Write(t), "--once", "--json"}, ""
		}, codes: []int{record.ExitData}, want: "forged.vtrec: the header lists 200000 targets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, path := tt.args(t)
			cmd := testutil.VtopCommand(t, args...)
			if path != "" {
				cmd.Env = append(cmd.Env, "PATH="+path)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			peakMiB := peakRSSMiB(cmd.Process.Pid)
			code := testutil.ExitStatus(t, cmd.Wait(), cmd.Args)
			t.Logf("%s: exit %d, peak RSS %.0f MiB", tt.name, code, peakMiB)
			if !containsCode(tt.codes, code) {
				t.Errorf("exit %d, want one of %v\n%s", code, tt.codes, tail(stdout.String()+stderr.String()))
			}
			if !strings.Contains(stdout.String()+stderr.String(), tt.want) {
				t.Errorf("output does not say %q\n%s", tt.want, tail(stdout.String()+stderr.String()))
			}
			if peakMiB > 256 {
				t.Errorf("peak RSS %.0f MiB, over --max-memory's 256 MiB", peakMiB)
			}
		})
	}
}

func containsCode(codes []int, c int) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}

// tail is the last 2,000 bytes of s.
func tail(s string) string {
	return s[max(0, len(s)-2000):]
}
