package scrape

import "testing"

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
