package testutil

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// HealthyPage is the smallest page of a working vLLM replica: what the
// healthy neighbour of a broken target serves.
const HealthyPage = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"ok\"} 5\n"

// ServePage answers every request with page and that Content-Type.
func ServePage(page, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(page))
	}
}

// StartServer serves h on loopback until the test ends and returns its
// /metrics URL.
func StartServer(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// ClosedPort returns a loopback address nothing listens on.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// WriteFile writes data to a file of that name in a directory of the test
// and returns its path.
func WriteFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
