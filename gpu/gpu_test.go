package gpu

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestMain lets the test binary play nvidia-smi for the tests that need it.
func TestMain(m *testing.M) {
	testutil.MainIfFakeNvidiaSMI()
	os.Exit(m.Run())
}

// TestJSONGolden fixes the shape of the report's gpus list: a whole GPU
// from nvidia-smi joined to a replica, a Kubernetes GPU from a real
// dcgm-exporter page, a MIG instance, and nulls for what is not known.
func TestJSONGolden(t *testing.T) {
	header, rows, err := testutil.ReadSMIData(h200Capture)
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := testutil.ProjectSMI(header, rows, SMIFields)
	smi, err := ParseSMIRow(SMIFields, lines[0], "gpu-host")
	if err != nil {
		t.Fatal(err)
	}
	smi.Replica = "localhost:8000"
	k8s, err := ParseDCGM(readCapture(t, "dcgm-k8s-8xh100-580.105.08-excerpt.txt", false), "http://gpu-node-1:9400/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mig, err := ParseDCGM(readCapture(t, "dcgm-k8s-mig-mixed-excerpt2.txt", true), "http://10.0.0.7:9400/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mig[0].XID = 79
	report := struct {
		GPUs []GPU `json:"gpus"`
	}{GPUs: []GPU{smi, k8s[0], mig[0]}}
	got, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/gpus.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON differs from %s (go test -update to accept):\n%s", golden, got)
	}
}

func TestJSONNulls(t *testing.T) {
	b, err := json.Marshal(Unknown())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"index", "uuid", "model", "mig", "utilization", "memory_used_bytes", "memory_total_bytes",
		"power_watts", "power_limit_watts", "temperature_celsius", "sm_clock_hz", "xid", "pod", "replica"}
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if len(m) != len(keys)+2 { // plus host and source
		t.Errorf("%d keys: %v", len(m), m)
	}
}

func TestKeyAndMemoryShare(t *testing.T) {
	g := Unknown()
	g.Index = 3
	if g.Key() != "gpu3" {
		t.Errorf("key %q", g.Key())
	}
	g.UUID, g.MIGInstance = "GPU-a", 6
	if g.Key() != "GPU-a/6" {
		t.Errorf("key %q", g.Key())
	}
	if !math.IsNaN(g.MemoryShare()) {
		t.Error("share of unknown memory is known")
	}
	g.MemoryUsedBytes, g.MemoryTotalBytes = 30, 40
	if g.MemoryShare() != 0.75 {
		t.Errorf("share %v", g.MemoryShare())
	}
}
