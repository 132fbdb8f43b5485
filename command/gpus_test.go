package command

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/vtop-dev/vtop/gpu/collect"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

func TestHostOf(t *testing.T) {
	tests := []struct{ target, want string }{
		{"gpu-a:8000", "gpu-a"},
		{"10.0.0.5:8000/prometheus/metrics", "10.0.0.5"},
		{"[::1]:8000", "::1"},
		{"http://gpu-b:9000/metrics", "gpu-b"},
		{"vllm-7f9c", ""}, // a pod name: no host
	}
	for _, tt := range tests {
		if got := hostOf(tt.target); got != tt.want {
			t.Errorf("hostOf(%q) = %q, want %q", tt.target, got, tt.want)
		}
	}
}

// TestAnyLocal: this host's GPUs are read only when a target may run on
// them.
func TestAnyLocal(t *testing.T) {
	targets := func(names ...string) []scrape.Target {
		var out []scrape.Target
		for _, n := range names {
			tg, err := scrape.ParseTarget(n)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tg)
		}
		return out
	}
	tests := []struct {
		name    string
		found   found
		targets []scrape.Target
		want    bool
	}{
		{"remote targets", found{}, targets("gpu-a:8000", "gpu-b:8000"), false},
		{"a loopback target", found{}, targets("gpu-a:8000", "127.0.0.1:8000"), true},
		{"localhost", found{}, targets("localhost:8000"), true},
		{"IPv6 loopback", found{}, targets("[::1]:8000"), true},
		{"this host by name", found{}, targets("THIS-HOST:8000"), true},
		{"discovery chose them", found{Summary: "no inference server found on this host"}, targets("localhost:8000"), true},
	}
	for _, tt := range tests {
		w := &Watch{found: tt.found}
		if got := w.anyLocal(tt.targets, "this-host"); got != tt.want {
			t.Errorf("%s: anyLocal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseGPUFaults(t *testing.T) {
	specs, err := parseGPUFaults("demo-gpu-fault", []string{"xid@2", "throttle"}, 3)
	if err != nil || len(specs) != 2 || specs[0] != (faultSpec[sim.GPUFault]{sim.GPUXID, 2}) || specs[1] != (faultSpec[sim.GPUFault]{sim.GPUThrottle, 0}) {
		t.Errorf("specs %v, err %v", specs, err)
	}
	for _, bad := range []string{"melt", "xid@4", "xid@0", "throttle@x"} {
		if _, err := parseGPUFaults("demo-gpu-fault", []string{bad}, 3); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestHint: the screen suggests other ways to point vtop only when it
// watches vLLM's default address for want of /proc (discovery that finds
// nothing ends the watch: TestNothingFoundIsSaidWithTheWaysOut).
func TestHint(t *testing.T) {
	tests := []struct {
		name string
		w    Watch
		want string
	}{
		{"targets given", Watch{Targets: []string{"gpu-a:8000"}}, ""},
		{"servers found", Watch{found: found{Summary: "2 vLLM servers found on this host"}}, ""},
		{"no /proc", Watch{found: found{Summary: "no /proc on this system", Fallback: true}},
			"nothing at localhost:8000 (vLLM's default): try vtop HOST:PORT, vtop -f targets.txt, or vtop --demo"},
	}
	for _, tt := range tests {
		if got := tt.w.hint(); got != tt.want {
			t.Errorf("%s: hint %q, want %q", tt.name, got, tt.want)
		}
	}
}

// slowReader is a GPU reader whose first read comes after a delay, or
// never (delay 0).
type slowReader struct {
	updates chan struct{}
}

func newSlowReader(delay time.Duration) *slowReader {
	r := &slowReader{updates: make(chan struct{}, 1)}
	if delay > 0 {
		time.AfterFunc(delay, func() { r.updates <- struct{}{} })
	}
	return r
}

func (r *slowReader) Snapshot() collect.Snapshot { return collect.Snapshot{Note: "reading"} }
func (r *slowReader) Updates() <-chan struct{}   { return r.updates }
func (r *slowReader) Stop()                      {}

// TestSettle: a report made at once waits for the readers' first read,
// and a reader that never reads delays it by the limit only.
func TestSettle(t *testing.T) {
	in := &gpuInput{readers: []collect.Reader{newSlowReader(20 * time.Millisecond), newSlowReader(40 * time.Millisecond)}}
	start := time.Now()
	in.settle(context.Background(), 10*time.Second)
	if d := time.Since(start); d < 40*time.Millisecond || d > 5*time.Second {
		t.Errorf("settled after %s, want once both had read (40ms)", d)
	}
	in = &gpuInput{readers: []collect.Reader{newSlowReader(0)}}
	start = time.Now()
	in.settle(context.Background(), 100*time.Millisecond)
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("settled after %s with a reader that never reads, want the 100ms limit", d)
	}
	var none *gpuInput
	none.settle(context.Background(), time.Hour) // no GPUs read: returns at once
}

// openCounter is a process table that counts how often it is read.
type openCounter struct {
	files fstest.MapFS
	opens int
}

// Open is the only method, so every read goes through it.
func (c *openCounter) Open(name string) (fs.File, error) {
	c.opens++
	return c.files.Open(name)
}

// The process table is walked to join GPUs to server processes: with no
// GPU to join it is not read at all (a walk of every process each few
// seconds was most of vtop's cost on a small fleet), and with one it is.
func TestProcessTreeOnlyForGPUs(t *testing.T) {
	proc := &openCounter{files: fstest.MapFS{
		"42/stat": {Data: []byte("42 (vllm) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0")},
		"43/stat": {Data: []byte("43 (EngineCore) S 42 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0")},
	}}
	in := &gpuInput{proc: proc, parentsTTL: time.Hour,
		known: map[string]device.Replica{"127.0.0.1:8000": {Target: "127.0.0.1:8000", Host: "127.0.0.1", PID: 42}}}
	in.GPUs([]string{"127.0.0.1:8000"})
	if proc.opens != 0 {
		t.Fatalf("no GPU to join, yet the process table was read %d times", proc.opens)
	}
	in.readers = append(in.readers, fixedReader{collect.Snapshot{GPUs: []device.GPU{device.Unknown()}}})
	in.names = append(in.names, "test")
	in.GPUs([]string{"127.0.0.1:8000"})
	if proc.opens == 0 {
		t.Fatal("a GPU to join, and the process table was not read")
	}
}

// fixedReader is a GPU reader whose snapshot never changes.
type fixedReader struct{ snap collect.Snapshot }

func (r fixedReader) Snapshot() collect.Snapshot { return r.snap }

func (fixedReader) Updates() <-chan struct{} { return nil }
func (fixedReader) Stop()                    {}
