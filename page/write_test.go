package page

import (
	"math"
	"testing"
)

func TestAppendValue(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"},
		{0.1, "0.1"}, {1e21, "1e+21"}, {42, "42"}, {-2.5e-7, "-2.5e-07"},
	}
	for _, tt := range tests {
		if got := string(AppendValue([]byte("x "), tt.v)); got != "x "+tt.want {
			t.Errorf("AppendValue(%v) = %q, want %q", tt.v, got, "x "+tt.want)
		}
	}
}

func TestEscapeLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain`, `plain`},
		{`a\b`, `a\\b`},
		{`say "hi"`, `say \"hi\"`},
		{"two\nlines", `two\nlines`},
	}
	for _, tt := range tests {
		if got := EscapeLabelValue(tt.in); got != tt.want {
			t.Errorf("EscapeLabelValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
