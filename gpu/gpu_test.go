package gpu

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/vtop-dev/vtop/gpu/device"
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
		GPUs []device.GPU `json:"gpus"`
	}{GPUs: []device.GPU{smi, k8s[0], mig[0]}}
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
