package command

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"16MiB", 16 << 20, false},
		{"512KiB", 512 << 10, false},
		{"1GiB", 1 << 30, false},
		{"1048576", 1 << 20, false},
		{"2MB", 2e6, false},
		{" 3 KB ", 3e3, false},
		{"0", 0, true},
		{"-1MiB", 0, true},
		{"lots", 0, true},
		{"MiB", 0, true},
		{"9999999999GiB", 0, true},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
