package collect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scriptSMI writes a shell script standing in for nvidia-smi: it answers
// the compute-apps query with nothing and streams body for the GPU query.
func scriptSMI(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nvidia-smi")
	s := "#!/bin/sh\ncase \"$1\" in --query-compute-apps*) exit 0;; esac\n" + body + "\n"
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// row is one nvidia-smi row of SMIFields for the GPU with this uuid.
const row = `"$i, GPU-$i, NVIDIA H100, 50, 1000, 81559, 300, 700, 40, 30, 1500, 1980, 0x0, 0"`

// TestSMIGPUSetBounded: however many GPUs nvidia-smi claims, at most
// MaxGPUs are kept and the note says the rest are not shown; a GPU that
// stops being reported leaves after Forget.
func TestSMIGPUSetBounded(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		forget   time.Duration
		wantGPUs int
		wantNote string
	}{
		{"a new GPU on every line", `i=0; while :; do echo ` + row + `; i=$((i+1)); done`,
			time.Minute, MaxGPUs, "nvidia-smi reports more than 64 GPUs: the rest are not shown"},
		{"a GPU vanishes", `i=1; echo ` + row + `; while :; do i=0; echo ` + row + `; sleep 0.02; done`, 500 * time.Millisecond, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fastSMI()
			o.Command = scriptSMI(t, tt.body)
			o.Forget = tt.forget
			s := startSMI(t, o)
			time.Sleep(2 * time.Second)
			snap := waitFor(t, s, "read GPU 0", func(s Snapshot) bool { return len(s.GPUs) > 0 })
			if len(snap.GPUs) != tt.wantGPUs || !strings.Contains(snap.Note, tt.wantNote) {
				t.Errorf("%d GPUs kept, note %q; want %d and %q", len(snap.GPUs), snap.Note, tt.wantGPUs, tt.wantNote)
			}
		})
	}
}

// TestSMILineTooLong: a line longer than a row can be is named as such,
// not as the kill that follows it.
func TestSMILineTooLong(t *testing.T) {
	o := fastSMI()
	o.Command = scriptSMI(t, `head -c 70000 /dev/zero | tr '\0' x; echo; sleep 100`)
	s := startSMI(t, o)
	snap := waitFor(t, s, "say the line is too long", func(s Snapshot) bool { return strings.Contains(s.Note, "retrying") })
	if !strings.Contains(snap.Note, "nvidia-smi printed a line over 64 KiB") || strings.Contains(snap.Note, "signal") {
		t.Errorf("note %q", snap.Note)
	}
}
