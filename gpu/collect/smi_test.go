package collect

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

func TestMain(m *testing.M) {
	testutil.MainIfFakeNvidiaSMI()
	os.Exit(m.Run())
}

const (
	h200    = "../testdata/nvidia-smi-query-gpu-h200-590.48.01.csv"
	h100x8  = "../testdata/smi-8xh100-base.csv"
	naData  = "../testdata/smi-na.csv"
	h200App = "../testdata/compute-apps-h200.csv"
)

// fastSMI are options that keep the tests short: they change how soon
// things happen, never what happens.
func fastSMI() SMIOptions {
	return SMIOptions{Interval: 20 * time.Millisecond, StartTimeout: time.Second, StallTimeout: 300 * time.Millisecond,
		AppsInterval: 20 * time.Millisecond, Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Host: "gpu-host"}
}

// startSMI starts a reader that stops, its children gone, before the
// test's directories are removed.
func startSMI(t *testing.T, o SMIOptions) *SMI {
	s := StartSMI(context.Background(), o)
	t.Cleanup(s.Stop)
	return s
}

// waitFor waits for the reader's snapshot to satisfy ok, failing the test
// if it never does (the deadline only guards against a hang).
func waitFor(t *testing.T, s *SMI, what string, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		snap := s.Snapshot()
		if ok(snap) {
			return snap
		}
		select {
		case <-s.Updates():
		case <-deadline:
			t.Fatalf("never %s; last snapshot %+v", what, snap)
		}
	}
}

func TestSMIStreamsRealCapture(t *testing.T) {
	testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIReplay, Data: h200, Apps: h200App})
	s := startSMI(t, fastSMI())
	snap := waitFor(t, s, "read the H200 with its processes", func(s Snapshot) bool {
		return len(s.GPUs) == 1 && len(s.GPUs[0].PIDs) == 3
	})
	g := snap.GPUs[0]
	if !snap.OK || snap.Note != "" || g.Utilization != 1 || g.SlowdownMarginCelsius != 35 || g.Host != "gpu-host" || g.Source != "nvidia-smi" {
		t.Errorf("snapshot %+v", snap)
	}
	if !slices.Equal(g.PIDs, []int{10291, 10293, 10309}) {
		t.Errorf("pids %v", g.PIDs)
	}
}

func TestSMIOlderDriverFallsBack(t *testing.T) {
	calls := testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIReplay, Data: h100x8})
	s := startSMI(t, fastSMI())
	snap := waitFor(t, s, "read 8 GPUs with the base fields", func(s Snapshot) bool { return len(s.GPUs) == 8 })
	for i, g := range snap.GPUs {
		if g.Index != i || g.UUID != "" || g.MemoryTotalBytes != 81559<<20 || g.PowerLimitWatts != 700 {
			t.Errorf("GPU %d = %+v", i, g)
		}
	}
	if snap.GPUs[7].PowerWatts != 75 || snap.GPUs[2].TemperatureCelsius != 31 {
		t.Errorf("figures of GPUs 7 and 2: %v %v", snap.GPUs[7].PowerWatts, snap.GPUs[2].TemperatureCelsius)
	}
	if calls() < 2 {
		t.Errorf("%d calls: the full query was never refused", calls())
	}
}

func TestSMIUnknownFieldsStayUnknown(t *testing.T) {
	testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIReplay, Data: naData})
	s := startSMI(t, fastSMI())
	snap := waitFor(t, s, "read the GPU", func(s Snapshot) bool { return len(s.GPUs) == 1 })
	g := snap.GPUs[0]
	if g.Utilization == g.Utilization || g.PowerWatts == g.PowerWatts || g.ClockEventReasons != -1 {
		t.Errorf("[N/A] / [Not Supported] read as numbers: %+v", g)
	}
}

// TestSMIFailures: each way nvidia-smi goes wrong is a note, the reader
// keeps trying, and the caller is never blocked.
func TestSMIFailures(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		data     string
		wantNote []string
	}{
		{"driver/library mismatch", testutil.SMIMismatch, "", []string{"nvidia-smi failed: Failed to initialize NVML: Driver/library version mismatch", "retrying in"}},
		{"no driver", testutil.SMINoDriver, "", []string{"couldn't communicate with the NVIDIA driver", "retrying in"}},
		{"hangs", testutil.SMIHang, "", []string{"nvidia-smi hung (no output in 1s), killed", "retrying in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: tt.mode, Data: tt.data})
			s := startSMI(t, fastSMI())
			snap := waitFor(t, s, "say "+tt.wantNote[0], func(s Snapshot) bool { return strings.Contains(s.Note, tt.wantNote[0]) })
			for _, w := range tt.wantNote {
				if !strings.Contains(snap.Note, w) {
					t.Errorf("note %q lacks %q", snap.Note, w)
				}
			}
			if snap.OK || len(snap.GPUs) != 0 {
				t.Errorf("snapshot %+v", snap)
			}
			waitFor(t, s, "retry", func(Snapshot) bool { return calls() >= 3 })
		})
	}
}

func TestSMIStallKeepsLastReadings(t *testing.T) {
	testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIStall, Data: h200})
	s := startSMI(t, fastSMI())
	waitFor(t, s, "read a round", func(s Snapshot) bool { return s.OK })
	snap := waitFor(t, s, "notice the stall", func(s Snapshot) bool { return strings.Contains(s.Note, "hung (no output for 300ms)") })
	if len(snap.GPUs) != 1 || snap.OK || snap.At.IsZero() {
		t.Errorf("after a stall: %+v", snap)
	}
}

func TestSMIRecoversAfterFailures(t *testing.T) {
	calls := testutil.InstallFakeNvidiaSMI(t, testutil.FakeSMI{Mode: testutil.SMIReplay, Data: h200, FailFirst: 3})
	s := startSMI(t, fastSMI())
	snap := waitFor(t, s, "recover", func(s Snapshot) bool { return s.OK && len(s.GPUs) == 1 })
	if snap.Note != "" || calls() < 4 {
		t.Errorf("note %q after %d calls", snap.Note, calls())
	}
}

func TestSMIMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s := startSMI(t, SMIOptions{})
	snap := s.Snapshot()
	if snap.OK || snap.Note != "nvidia-smi not found on PATH: no GPU figures from this host" || len(snap.GPUs) != 0 {
		t.Errorf("snapshot %+v", snap)
	}
}
