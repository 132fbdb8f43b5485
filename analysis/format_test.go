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
		{"count: beyond the exact integers", Num.Count, 1e20, "100,000,000,000,000,000,000"},
		{"count: the last exact integers", Num.Count, 1<<53 + 2, "9,007,199,254,740,994"},
		{"count: a half rounds away from zero", Num.Count, -1234567.5, "-1,234,568"},
		{"count: the largest float", Num.Count, math.MaxFloat64, "179,769,313,486,231,570,814,527,423,731,704,356,798,070,567,525,844,996,598,917,476,803,157,260,780,028,538,760,589,558,632,766,878,171,540,458,953,514,382,464,234,321,326,889,464,182,768,467,546,703,537,516,986,049,910,576,551,282,076,245,490,090,389,328,944,075,868,508,455,133,942,304,583,236,903,222,948,165,808,559,332,123,348,274,797,826,204,144,723,168,738,177,180,919,299,881,250,404,026,184,124,858,368"},
		{"amount: 999.5 rounds to a thousand", Num.Amount, 999.5, "1,000"},
		{"amount: one decimal rounding to 100", Num.Amount, 99.96, "100"},
		{"amount: the smallest float is 0", Num.Amount, 5e-324, "0"},
		{"percent: rounding to 100%", Num.Percent, 0.99996, "100%"},
		{"percent: infinite is unknown", Num.Percent, Num(math.Inf(-1)), "n/a"},
		{"seconds: negative milliseconds", Num.Seconds, -0.25, "-250ms"},
		{"seconds: thousands of seconds", Num.Seconds, 1234.5, "1,235s"},
	}
	for _, tt := range tests {
		if got := tt.got(tt.in); got != tt.want {
			t.Errorf("%s: %v → %q, want %q", tt.name, float64(tt.in), got, tt.want)
		}
	}
}

// A count said to fall short of a limit never reads as the limit: an
// extrapolated 19.7 requests against 20 is "19.7", not "20", and 19.96 is
// "19.9", cut rather than rounded.
func TestCountBelow(t *testing.T) {
	tests := []struct {
		x     float64
		limit int
		want  string
	}{
		{5, 20, "5"},
		{19.4, 20, "19"},
		{19.7, 20, "19.7"},
		{19.96, 20, "19.9"},
		{1999.6, 2000, "1,999.6"},
		{math.NaN(), 20, "n/a"},
		{20, 20, "20"},
		{math.Inf(1), 20, "n/a"},
	}
	for _, tt := range tests {
		if got := countBelow(tt.x, tt.limit); got != tt.want {
			t.Errorf("countBelow(%v, %d) = %q, want %q", tt.x, tt.limit, got, tt.want)
		}
	}
}
