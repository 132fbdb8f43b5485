package collect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

func TestParseExporter(t *testing.T) {
	tests := []struct{ in, url, err string }{
		{"gpu-a", "http://gpu-a:9400/metrics", ""},
		{"gpu-a:9500", "http://gpu-a:9500/metrics", ""},
		{"10.0.0.7:9400/custom", "http://10.0.0.7:9400/custom", ""},
		{"[::1]", "http://[::1]:9400/metrics", ""},
		{"https://dcgm.example/metrics", "https://dcgm.example/metrics", ""},
		{"user:pw@gpu-a", "", "credentials"},
		{"", "", "empty"},
	}
	for _, tt := range tests {
		got, err := ParseExporter(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got.URL != tt.url {
			t.Errorf("%q: %q %v, want %q", tt.in, got.URL, err, tt.url)
		}
	}
}

func startExporter(t *testing.T, url string) *Exporter {
	t.Helper()
	target, err := ParseExporter(url)
	if err != nil {
		t.Fatal(err)
	}
	e, err := StartExporter(context.Background(), target, ExporterOptions{Interval: 20 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e
}

func waitExporter(t *testing.T, e *Exporter, what string, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if s := e.Snapshot(); ok(s) {
			return s
		}
		select {
		case <-e.Updates():
		case <-deadline:
			t.Fatalf("never %s: %+v", what, e.Snapshot())
		}
	}
}

func TestExporterReadsRealPage(t *testing.T) {
	page, err := os.ReadFile("../testdata/dcgm-k8s-8xh100-580.105.08-excerpt.txt")
	if err != nil {
		t.Fatal(err)
	}
	url := testutil.StartServer(t, testutil.ServePage(string(page), "text/plain; version=0.0.4"))
	e := startExporter(t, url)
	s := waitExporter(t, e, "read 8 GPUs", func(s Snapshot) bool { return len(s.GPUs) == 8 })
	if !s.OK || s.Note != "" || s.GPUs[0].Source != url || s.GPUs[0].Pod == "" {
		t.Errorf("snapshot %+v", s)
	}
}

func TestExporterFailures(t *testing.T) {
	tests := []struct {
		name string
		url  string
		note string
	}{
		{"nothing listens", "http://" + testutil.ClosedPort(t) + "/metrics", "connection refused"},
		{"not found", testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }), "404"},
		{"not an exporter", testutil.StartServer(t, testutil.ServePage(testutil.HealthyPage, "text/plain")), "no DCGM series on the page"},
		{"broken page", testutil.StartServer(t, testutil.ServePage("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\" 4\n", "text/plain")), "dcgm-exporter page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startExporter(t, tt.url)
			// The note while the first read is under way names the target,
			// whose port may hold the figure sought ("404" in :40401).
			s := waitExporter(t, e, "say "+tt.note, func(s Snapshot) bool {
				return strings.HasPrefix(s.Note, "dcgm-exporter ") && strings.Contains(s.Note, tt.note)
			})
			if s.OK || len(s.GPUs) != 0 {
				t.Errorf("snapshot %+v", s)
			}
		})
	}
}

func TestListening(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if !Listening(context.Background(), srv.Listener.Addr().String()) {
		t.Error("a listening port is not listening")
	}
	if Listening(context.Background(), testutil.ClosedPort(t)) {
		t.Error("a closed port is listening")
	}
}
