package ui

import (
	"slices"
	"testing"
)

func TestRing(t *testing.T) {
	tests := []struct {
		name       string
		capacity   int
		push       []int
		grow       int
		wantItems  []int
		wantCap    int
		wantLatest int
		wantOK     bool
	}{
		{"empty", 3, nil, 0, []int{}, 3, 0, false},
		{"partly filled", 3, []int{1, 2}, 0, []int{1, 2}, 3, 2, true},
		{"full drops the oldest", 3, []int{1, 2, 3, 4, 5}, 0, []int{3, 4, 5}, 3, 5, true},
		{"grow keeps the order", 3, []int{1, 2, 3, 4, 5}, 5, []int{3, 4, 5}, 5, 5, true},
		{"grow never shrinks", 3, []int{1, 2, 3, 4}, 2, []int{2, 3, 4}, 3, 4, true},
		{"zero capacity holds nothing", 0, []int{1}, 0, []int{}, 0, 0, false},
	}
	for _, tt := range tests {
		r := newRing[int](tt.capacity)
		for _, v := range tt.push {
			r.Push(v)
		}
		r.Grow(tt.grow)
		if got := r.Items(nil); !slices.Equal(got, tt.wantItems) {
			t.Errorf("%s: items %v, want %v", tt.name, got, tt.wantItems)
		}
		if r.Len() != len(tt.wantItems) || r.Cap() != tt.wantCap {
			t.Errorf("%s: len %d cap %d, want %d and %d", tt.name, r.Len(), r.Cap(), len(tt.wantItems), tt.wantCap)
		}
		if v, ok := r.Latest(); v != tt.wantLatest || ok != tt.wantOK {
			t.Errorf("%s: latest %d %v, want %d %v", tt.name, v, ok, tt.wantLatest, tt.wantOK)
		}
	}
}

// After growing, pushes fill the new room before dropping anything.
func TestRingGrowThenPush(t *testing.T) {
	r := newRing[int](2)
	r.Push(1)
	r.Push(2)
	r.Grow(3)
	r.Push(3)
	if got := r.Items(nil); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("items %v, want 1 2 3", got)
	}
	r.Push(4)
	if got := r.Items(nil); !slices.Equal(got, []int{2, 3, 4}) {
		t.Fatalf("items %v, want 2 3 4", got)
	}
}
