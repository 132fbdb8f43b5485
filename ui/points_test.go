package ui

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// fullPoint is a point with every field set, the float32 figures through
// reflection so that a figure added to analysis.Point and forgotten by
// pointHistory fails the round trip below.
func fullPoint(i int, at time.Time, bounds []float64, deltas []float32) analysis.Point {
	p := analysis.Point{Time: at, State: analysis.State(i % 7), PromptLengthBounds: bounds, PromptLengthDeltas: deltas}
	v := reflect.ValueOf(&p).Elem()
	for f := 0; f < v.NumField(); f++ {
		if v.Field(f).Kind() == reflect.Float32 {
			v.Field(f).SetFloat(float64(i*100 + f))
		}
	}
	return p
}

func TestPointHistoryRoundTrip(t *testing.T) {
	bounds := []float64{128, 512, 2048}
	other := []float64{100, 1000}
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		p    analysis.Point
	}{
		{"no prompt lengths", fullPoint(1, t0, nil, nil)},
		{"a column", fullPoint(2, t0.Add(time.Second), bounds, []float32{1, 0, 2.5})},
		{"a column of other buckets", fullPoint(3, t0.Add(2*time.Second), other, []float32{4, 5})},
		{"an empty column", fullPoint(4, t0.Add(3*time.Second), []float64{}, []float32{})},
		{"local time", fullPoint(5, time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.Local), bounds, []float32{7, 8, 9})},
		{"another zone", fullPoint(6, time.Date(2026, 12, 1, 9, 0, 0, 1, paris), nil, nil)},
		{"zero time", fullPoint(7, time.Time{}, nil, nil)},
		{"NaN figures kept", func() analysis.Point {
			p := fullPoint(8, t0, bounds, []float32{0, 0, 0})
			p.TTFTP99 = float32(nanF)
			return p
		}()},
	}
	// A capacity of 3 makes later points overwrite earlier slots, columns
	// of either kind included.
	h := newPointHistory(3)
	for i, tt := range tests {
		h.Push(tt.p)
		if h.Len() == 0 {
			t.Fatalf("%s: empty after Push", tt.name)
		}
		if got := h.At(h.Len() - 1); !samePoint(got, tt.p) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.p)
		}
		if want := min(i+1, 3); h.Len() != want {
			t.Errorf("%s: Len %d, want %d", tt.name, h.Len(), want)
		}
		// The points still held come back as pushed, oldest first.
		for j := 0; j < h.Len(); j++ {
			if want := tests[i-h.Len()+1+j].p; !samePoint(h.At(j), want) {
				t.Errorf("%s: At(%d) = %+v, want %+v", tt.name, j, h.At(j), want)
			}
		}
	}
}

// nanF is a NaN for the figures that may not be known.
var nanF = func() float64 { var z float64; return z / z }()

// samePoint compares two points field by field, NaN equal to NaN and times
// by instant and zone (the stored time has no monotonic reading).
func samePoint(a, b analysis.Point) bool {
	if !a.Time.Equal(b.Time) || a.Time.Location().String() != b.Time.Location().String() || a.Time.IsZero() != b.Time.IsZero() {
		return false
	}
	a.Time, b.Time = time.Time{}, time.Time{}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for f := 0; f < va.NumField(); f++ {
		x, y := va.Field(f), vb.Field(f)
		if x.Kind() == reflect.Float32 {
			if x.Float() != y.Float() && !(x.Float() != x.Float() && y.Float() != y.Float()) {
				return false
			}
			continue
		}
		if x.Kind() == reflect.Slice && x.IsNil() != y.IsNil() {
			return false
		}
		if x.Kind() != reflect.Float32 && !reflect.DeepEqual(x.Interface(), y.Interface()) {
			return false
		}
	}
	return true
}

// Columns of whole counts are kept as bytes until one value is not (a
// fraction, 256 or more, a negative zero, NaN): from then on every column
// held comes back as it was pushed, the earlier ones included.
func TestPointHistoryColumnsWiden(t *testing.T) {
	bounds := []float64{128, 512, 2048}
	negZero := float32(math.Copysign(0, -1))
	for _, odd := range []float32{0.5, 256, negZero, float32(nanF), -1} {
		h := newPointHistory(4)
		pushed := []analysis.Point{
			fullPoint(1, t0, bounds, []float32{0, 1, 255}),
			fullPoint(2, t0.Add(time.Second), bounds, []float32{3, 0, 0}),
		}
		for _, p := range pushed {
			h.Push(p)
		}
		if h.deltas != nil {
			t.Fatalf("whole counts widened to float32")
		}
		p := fullPoint(3, t0.Add(2*time.Second), bounds, []float32{2, odd, 1})
		h.Push(p)
		pushed = append(pushed, p)
		if h.deltas == nil {
			t.Errorf("%v kept as a count", odd)
		}
		for i, want := range pushed {
			got := h.At(i)
			same := len(got.PromptLengthDeltas) == len(want.PromptLengthDeltas)
			for j := 0; same && j < len(want.PromptLengthDeltas); j++ {
				same = math.Float32bits(got.PromptLengthDeltas[j]) == math.Float32bits(want.PromptLengthDeltas[j])
			}
			got.PromptLengthDeltas, want.PromptLengthDeltas = nil, nil
			if !same || !samePoint(got, want) {
				t.Errorf("with %v: At(%d) = %+v, want %+v", odd, i, h.At(i), pushed[i])
			}
		}
	}
}
