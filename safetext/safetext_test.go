package safetext

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	long := strings.Repeat("x", MaxTextLen+50)
	tests := []struct {
		name, in, want string
	}{
		{"plain", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
		{"OSC title with BEL", "a\x1b]0;owned\x07b", "ab"},
		{"OSC title with ST", "a\x1b]0;owned\x1b\\b", "ab"},
		{"CSI colour", "\x1b[31mred\x1b[0m", "red"},
		{"CSI clear screen", "x\x1b[2Jy", "xy"},
		{"C1 CSI", "a\u009b31mb", "ab"},
		{"newline and tab dropped", "a\nb\tc\r", "abc"},
		{"bell dropped", "a\x07b", "ab"},
		{"invalid utf8 replaced", "a\xffb", "a\uFFFDb"},
		{"unicode kept", "µs → ok", "µs → ok"},
		{"escape at end", "abc\x1b", "abc"},
		{"long capped", long, strings.Repeat("x", MaxTextLen) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;owned\x07", "\x1b[31mred", "\xff\xfe", "\u009b1;2H"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s)
		if !IsSafe(got) {
			t.Fatalf("Sanitize(%q) = %q is not safe to draw", s, got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Sanitize(%q) = %q keeps control %U", s, got, r)
			}
		}
		if len(got) > MaxTextLen+len("…") {
			t.Fatalf("Sanitize(%q) is %d bytes, over the cap", s, len(got))
		}
	})
}
