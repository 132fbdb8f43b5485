package ring

import (
	"slices"
	"testing"
)

func TestRing(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		pushes    int
		grow      int
		want      []int
		wantCap   int
		wantEmpty bool
	}{
		{name: "empty", capacity: 3, wantCap: 3, wantEmpty: true},
		{name: "partly full", capacity: 3, pushes: 2, want: []int{1, 2}, wantCap: 3},
		{name: "wrapped keeps the newest, oldest first", capacity: 3, pushes: 7, want: []int{5, 6, 7}, wantCap: 3},
		{name: "capacity below one is one", capacity: 0, pushes: 3, want: []int{3}, wantCap: 1},
		{name: "grow after wrap keeps order", capacity: 3, pushes: 5, grow: 5, want: []int{3, 4, 5}, wantCap: 5},
		{name: "grow never shrinks", capacity: 4, pushes: 2, grow: 2, want: []int{1, 2}, wantCap: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New[int](tt.capacity)
			for i := 1; i <= tt.pushes; i++ {
				r.Push(i)
			}
			if tt.grow > 0 {
				r.Grow(tt.grow)
			}
			if got := r.AppendTo(nil); !slices.Equal(got, tt.want) {
				t.Fatalf("values %v, want %v", got, tt.want)
			}
			if r.Len() != len(tt.want) {
				t.Errorf("Len = %d, want %d", r.Len(), len(tt.want))
			}
			for i, w := range tt.want {
				if r.At(i) != w {
					t.Errorf("At(%d) = %d, want %d", i, r.At(i), w)
				}
			}
			if r.Cap() != tt.wantCap {
				t.Errorf("Cap = %d, want %d", r.Cap(), tt.wantCap)
			}
			latest, ok := r.Latest()
			if ok == tt.wantEmpty || (ok && latest != tt.want[len(tt.want)-1]) {
				t.Errorf("Latest = %v, %v", latest, ok)
			}
		})
	}
}

// AppendTo into a large enough dst allocates nothing: the analysis loop
// calls it every interval for every target.
func TestAppendToReusesDst(t *testing.T) {
	r := New[int](100)
	for i := range 250 {
		r.Push(i)
	}
	dst := make([]int, 0, 100)
	allocs := testing.AllocsPerRun(10, func() { dst = r.AppendTo(dst) })
	if allocs != 0 || len(dst) != 100 || dst[0] != 150 {
		t.Errorf("allocs %v len %d first %d", allocs, len(dst), dst[0])
	}
}

// Slot names where each value is stored: distinct slots below Cap, the
// same for a value until it is dropped, and Slot(Len()) where the next
// Push lands, before and after the ring is full.
func TestSlot(t *testing.T) {
	r := New[int](3)
	where := map[int]int{} // value → its slot when pushed
	for v := range 8 {
		next := r.Slot(r.Len())
		r.Push(v)
		where[v] = next
		seen := map[int]bool{}
		for i := range r.Len() {
			s := r.Slot(i)
			if s < 0 || s >= r.Cap() || seen[s] {
				t.Fatalf("after %d: slot %d of value %d out of range or repeated", v, s, r.At(i))
			}
			seen[s] = true
			if where[r.At(i)] != s {
				t.Errorf("after %d: value %d in slot %d, pushed into %d", v, r.At(i), s, where[r.At(i)])
			}
		}
	}
}
