package analysis

import (
	"math"
	"testing"
)

func TestExtrapolatedRate(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name              string
		ts                []int64
		vs                []float64
		start, end        int64
		isCounter, isRate bool
		want              float64
		wantOK            bool
	}{
		{"no samples", nil, nil, 0, 60000, true, true, 0, false},
		{"one sample is no value, not 0", []int64{30000}, []float64{5}, 0, 60000, true, true, 0, false},
		{"two samples at the window edges: plain difference / N", []int64{0, 60000}, []float64{12040, 12400}, 0, 60000, true, true, 6, true},
		{"increase at the edges is the difference", []int64{0, 60000}, []float64{12040, 12400}, 0, 60000, true, false, 360, true},
		{"gaps below 1.1 avg are extrapolated fully", []int64{10000, 20000, 30000, 40000}, []float64{10, 20, 30, 40}, 0, 50000, true, false, 50, true},
		{"gap beyond 1.1 avg extrapolates avg/2", []int64{20000, 30000}, []float64{100, 110}, 0, 40000, true, true, 0.625, true},
		{"zero-point clamp", []int64{10000, 20000}, []float64{1, 11}, 0, 20000, true, false, 11, true},
		{"clamp after the avg/2 rule (>= 2.51 order)", []int64{20000, 30000}, []float64{8, 18}, 0, 30000, true, false, 15, true},
		{"counter reset adds the value before the drop", []int64{0, 10000, 20000, 30000}, []float64{100, 150, 20, 70}, 0, 30000, true, false, 120, true},
		{"reset to zero", []int64{0, 10000, 20000}, []float64{500, 520, 0}, 0, 20000, true, false, 20, true},
		{"NaN hides a drop, as in Prometheus", []int64{0, 10000, 20000, 30000}, []float64{100, nan, 20, 70}, 0, 30000, true, false, -30, true},
		{"delta of a gauge may be negative", []int64{0, 10000}, []float64{5, 3}, 0, 10000, false, false, -2, true},
		{"delta is not reset-corrected", []int64{0, 10000, 20000}, []float64{5, 1, 3}, 0, 20000, false, false, -2, true},
		{"samples spanning no time", []int64{5000, 5000}, []float64{1, 2}, 0, 10000, true, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ExtrapolatedRate(tt.ts, tt.vs, tt.start, tt.end, tt.isCounter, tt.isRate)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExtrapolatedRateNaNLast(t *testing.T) {
	got, ok := ExtrapolatedRate([]int64{0, 10000}, []float64{1, math.NaN()}, 0, 10000, true, true)
	if !ok || !math.IsNaN(got) {
		t.Errorf("got %v, %v; want NaN, true", got, ok)
	}
}

func TestDeriv(t *testing.T) {
	tests := []struct {
		name   string
		ts     []int64
		vs     []float64
		want   float64
		wantOK bool
	}{
		{"one sample", []int64{0}, []float64{1}, 0, false},
		{"straight line", []int64{0, 10000, 20000}, []float64{41, 68, 95}, 2.7, true},
		{"constant", []int64{0, 10000, 20000}, []float64{7, 7, 7}, 0, true},
		{"least squares through noise", []int64{0, 1000, 2000, 3000}, []float64{0, 2, 1, 3}, 0.8, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Deriv(tt.ts, tt.vs)
			if ok != tt.wantOK || (ok && math.Abs(got-tt.want) > 1e-9) {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if got, _ := Deriv([]int64{0, 1000}, []float64{math.Inf(1), math.Inf(1)}); !math.IsNaN(got) {
		t.Errorf("constant +Inf: got %v, want NaN", got)
	}
}
