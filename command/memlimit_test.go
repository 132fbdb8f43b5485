package command

import (
	"runtime/debug"
	"testing"
)

func TestLimitFrom(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name                                         string
		live, total, released, objects, unused, free uint64
		want                                         int64
	}{
		{
			// 20 MB live of 30 MB of objects, 8 MB outside the heap: the
			// rest, the live heap and five eighths of it again.
			name: "fifty replicas", live: 20 * mb, total: 48 * mb, released: 4 * mb, objects: 30 * mb, unused: 2 * mb, free: 4 * mb,
			want: (8 + 20 + 12.5) * mb,
		},
		{
			// 2 MB live: five eighths of it would collect at nearly every
			// frame.
			name: "small fleet keeps the least room", live: 2 * mb, total: 12 * mb, released: 0, objects: 3 * mb, unused: 1 * mb, free: 2 * mb,
			want: (6 + 2 + 4) * mb,
		},
		{
			// The metrics are read one by one, not at one instant: the
			// heap's classes may exceed the total by a little.
			name: "heap classes above total", live: 10 * mb, total: 20 * mb, released: 5 * mb, objects: 12 * mb, unused: 1 * mb, free: 3 * mb,
			want: (0 + 10 + 6.25) * mb,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := limitFrom(tt.live, tt.total, tt.released, tt.objects, tt.unused, tt.free); got != tt.want {
				t.Errorf("limitFrom = %.1f MB, want %.1f MB", float64(got)/mb, float64(tt.want)/mb)
			}
		})
	}
}

// Watching without a screen over direct scrapes collects at 70 % of the
// live heap unless GOGC says otherwise, and puts the setting back.
func TestHeadlessGCPercent(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
	}{{"", headlessGCPercent}, {"100", 100}, {"off", 100}} {
		t.Setenv("GOGC", tc.env)
		restore := collectSooner()
		got := debug.SetGCPercent(100)
		debug.SetGCPercent(got)
		restore()
		if got != tc.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tc.env, got, tc.want)
		}
		if after := debug.SetGCPercent(100); after != 100 {
			t.Errorf("GOGC=%q: GC percent %d after restore, want 100", tc.env, after)
		}
	}
}
