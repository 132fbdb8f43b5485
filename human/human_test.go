package human

import "testing"

// A size is written in the largest unit that holds it whole, as a limit is
// given (16 MiB, 65532 KiB); else to a tenth of MiB or KiB, as a measured
// size reads; below a KiB in bytes.
func TestBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1 << 10, "1 KiB"},
		{1536, "1.5 KiB"},
		{65532 << 10, "65532 KiB"},
		{16 << 20, "16 MiB"},
		{1 << 30, "1024 MiB"},
		{3355443, "3.2 MiB"},
		{1e9, "953.7 MiB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// A size as --max-memory is written: Bytes without the space.
func TestFlagBytes(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256MiB", 1e9: "953.7MiB", 64 << 10: "64KiB", 100: "100 bytes"} {
		if got := FlagBytes(n); got != want {
			t.Errorf("FlagBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
