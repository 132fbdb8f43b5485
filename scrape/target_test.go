package scrape

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in, url, name, err string
	}{
		{in: "gpu-a:8000", url: "http://gpu-a:8000/metrics", name: "gpu-a:8000"},
		{in: "gpu-a", url: "http://gpu-a:8000/metrics", name: "gpu-a:8000"},
		{in: "  10.0.0.7:9000  ", url: "http://10.0.0.7:9000/metrics", name: "10.0.0.7:9000"},
		{in: "[::1]:8000", url: "http://[::1]:8000/metrics", name: "[::1]:8000"},
		{in: "gpu-a:8000/vllm/metrics", url: "http://gpu-a:8000/vllm/metrics", name: "gpu-a:8000/vllm/metrics"},
		{in: "http://gpu-a:8000", url: "http://gpu-a:8000/metrics", name: "gpu-a:8000"},
		{in: "http://gpu-a:8000/", url: "http://gpu-a:8000/metrics", name: "gpu-a:8000"},
		{in: "https://vllm.example.com/metrics", url: "https://vllm.example.com/metrics", name: "vllm.example.com"},
		{in: "https://lb.example.com/replica-3/metrics", url: "https://lb.example.com/replica-3/metrics", name: "lb.example.com/replica-3/metrics"},
		{in: "gpu-a:8000/metrics?replica=2", url: "http://gpu-a:8000/metrics?replica=2", name: "gpu-a:8000?replica=2"},
		{in: DefaultTargetURL, url: "http://localhost:8000/metrics", name: "localhost:8000"},
		{in: "http://user:hunter2@gpu-a:8000/metrics", err: "credentials in the URL are not allowed"},
		{in: "user:hunter2@gpu-a:8000", err: "credentials in the URL are not allowed"},
		{in: "ftp://gpu-a/metrics", err: "scheme must be http or https"},
		{in: "http:///metrics", err: "no host"},
		{in: "", err: "empty target"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.URL != tt.url || got.Name != tt.name {
				t.Errorf("got %+v, want URL %q Name %q", got, tt.url, tt.name)
			}
		})
	}
}

func TestDefaultTarget(t *testing.T) {
	if got := DefaultTarget(); got.URL != DefaultTargetURL || got.Name != "localhost:8000" {
		t.Errorf("DefaultTarget() = %+v", got)
	}
}

func TestReadTargetsFile(t *testing.T) {
	good := testutil.WriteFile(t, "targets.txt", []byte("# the fleet\n\ngpu-a:8000\n  https://gpu-b:8443/metrics  # TLS one\n#gpu-c:8000\n"))
	got, err := ReadTargetsFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].URL != "http://gpu-a:8000/metrics" || got[1].URL != "https://gpu-b:8443/metrics" {
		t.Errorf("got %+v", got)
	}

	bad := testutil.WriteFile(t, "bad.txt", []byte("gpu-a:8000\n\nftp://gpu-b\n"))
	_, err = ReadTargetsFile(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:3: ") || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("error %v, want it to name bad.txt line 3", err)
	}

	// The GPU pages `vtop sim --dcgm` prints after the replicas' URLs.
	dcgm := testutil.WriteFile(t, "sim.txt", []byte("http://127.0.0.1:40001/metrics\ndcgm http://127.0.0.1:40002/metrics\n"))
	_, err = ReadTargetsFile(dcgm)
	if err == nil || !strings.Contains(err.Error(), "sim.txt:2: ") || !strings.Contains(err.Error(), "--dcgm http://127.0.0.1:40002/metrics") {
		t.Errorf("error %v, want it to name sim.txt line 2 and the --dcgm flag with the exporter's URL", err)
	}

	_, err = ReadTargetsFile(filepath.Join(t.TempDir(), "missing.txt"))
	if err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("error %v, want it to name the file", err)
	}
}
