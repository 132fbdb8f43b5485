package analysis

import (
	"math"
	"testing"
)

// The words the reasons and the text report use, including the edges where
// rounding changes the unit or leaves a sign on zero.
func TestNumWords(t *testing.T) {
	tests := []struct {
		name string
		got  func(Num) string
		in   Num
		want string
	}{
		{"count: thousands separators", Num.Count, 12_400, "12,400"},
		{"count: rounds to whole", Num.Count, 1234.6, "1,235"},
		{"count: negative", Num.Count, -1_234_567, "-1,234,567"},
		{"count: small negative is 0", Num.Count, -0.4, "0"},
		{"count: unknown", Num.Count, NA, "n/a"},
		{"count: infinite is unknown", Num.Count, Num(math.Inf(1)), "n/a"},
		{"amount: whole above 100", Num.Amount, 1800.4, "1,800"},
		{"amount: one decimal above 10", Num.Amount, 13.84, "13.8"},
		{"amount: trailing zeros dropped", Num.Amount, 6, "6"},
		{"amount: two decimals below 10", Num.Amount, 0.354, "0.35"},
		{"amount: rounding up to 100 is whole", Num.Amount, 99.99, "100"},
		{"amount: small negative is 0", Num.Amount, -0.001, "0"},
		{"amount: negative", Num.Amount, -2.5, "-2.5"},
		{"amount: unknown", Num.Amount, NA, "n/a"},
		{"percent: whole", Num.Percent, 0.954, "95%"},
		{"percent: one decimal below 10%", Num.Percent, 0.0163, "1.6%"},
		{"percent: no trailing zero", Num.Percent, 0.08, "8%"},
		{"percent: rounding up to 10% is whole", Num.Percent, 0.0996, "10%"},
		{"percent: just below the rounding", Num.Percent, 0.09949, "9.9%"},
		{"percent: zero", Num.Percent, 0, "0%"},
		{"percent: small negative is 0", Num.Percent, -0.0004, "0%"},
		{"percent: negative below 10%", Num.Percent, -0.025, "-2.5%"},
		{"percent: above one", Num.Percent, 1.25, "125%"},
		{"percent: unknown", Num.Percent, NA, "n/a"},
		{"seconds: milliseconds below 1 s", Num.Seconds, 0.35, "350ms"},
		{"seconds: sub-millisecond", Num.Seconds, 0.00042, "0.42ms"},
		{"seconds: rounding up to 1 s is seconds", Num.Seconds, 0.9996, "1s"},
		{"seconds: just below the rounding", Num.Seconds, 0.9994, "999ms"},
		{"seconds: above 1 s", Num.Seconds, 2.48, "2.48s"},
		{"seconds: minutes stay seconds", Num.Seconds, 125, "125s"},
		{"seconds: zero", Num.Seconds, 0, "0ms"},
		{"seconds: unknown", Num.Seconds, NA, "n/a"},
	}
	for _, tt := range tests {
		if got := tt.got(tt.in); got != tt.want {
			t.Errorf("%s: %v → %q, want %q", tt.name, float64(tt.in), got, tt.want)
		}
	}
}
