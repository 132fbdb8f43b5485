package httpclient

import (
	"net/url"
	"testing"
)

// Credentials go to the configured host and port only.
func TestSameHost(t *testing.T) {
	tests := []struct {
		configured, dest string
		want             bool
	}{
		{"http://prom:9090/api", "http://prom:9090/other", true},
		{"http://PROM:9090", "http://prom:9090", true},
		{"http://prom", "http://prom:80", true},
		{"https://prom", "https://prom:443/x", true},
		{"http://prom:9090", "http://evil:9090", false},
		{"http://prom:9090", "http://prom:9091", false},
		{"http://prom", "https://prom", false}, // 80 is not 443
		{"http://127.0.0.1:9090", "http://localhost:9090", false},
		{"http://prom.example.com", "http://evil.prom.example.com", false},
	}
	for _, tt := range tests {
		a, _ := url.Parse(tt.configured)
		b, _ := url.Parse(tt.dest)
		if got := SameHost(a, b); got != tt.want {
			t.Errorf("SameHost(%s, %s) = %v, want %v", tt.configured, tt.dest, got, tt.want)
		}
	}
}
