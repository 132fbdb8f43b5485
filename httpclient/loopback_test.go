package httpclient

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Only this machine's own addresses count as loopback; names other than
// localhost are not resolved.
func TestLoopback(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"vllm.localhost", true},
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"10.0.0.7", false},
		{"::", false},
		{"0.0.0.0", false},
		{"gpu-a", false},
		{"localhost.example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Loopback(tt.host); got != tt.want {
			t.Errorf("Loopback(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// A request to this machine asks for an uncompressed answer unless it
// already names an encoding; a request elsewhere is left to Go's gzip.
func TestIdentityOnLoopback(t *testing.T) {
	tests := []struct {
		url, accept, want string
	}{
		{"http://127.0.0.1:8000/metrics", "", "identity"},
		{"http://localhost:9090/api/v1/query", "", "identity"},
		{"http://127.0.0.1:8000/metrics", "gzip", "gzip"},
		{"http://gpu-a:8000/metrics", "", ""},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, tt.url, nil)
		if tt.accept != "" {
			req.Header.Set("Accept-Encoding", tt.accept)
		}
		IdentityOnLoopback(req)
		if got := req.Header.Get("Accept-Encoding"); got != tt.want {
			t.Errorf("%s with Accept-Encoding %q: sends %q, want %q", tt.url, tt.accept, got, tt.want)
		}
	}
}
