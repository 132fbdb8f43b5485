package scrape

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

func sampleAt(sec int) analysis.Sample {
	return analysis.Sample{Time: time.Unix(int64(sec), 0)}
}

func ringSeconds(samples []analysis.Sample) []int64 {
	out := make([]int64, len(samples))
	for i, s := range samples {
		out[i] = s.Time.Unix()
	}
	return out
}

func TestRing(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		pushes    int
		grow      int
		want      []int64
		wantCap   int
		wantEmpty bool
	}{
		{name: "empty", capacity: 3, wantCap: 3, wantEmpty: true},
		{name: "partly full", capacity: 3, pushes: 2, want: []int64{1, 2}, wantCap: 3},
		{name: "wrapped keeps the newest, oldest first", capacity: 3, pushes: 7, want: []int64{5, 6, 7}, wantCap: 3},
		{name: "capacity below two is two", capacity: 0, pushes: 3, want: []int64{2, 3}, wantCap: 2},
		{name: "grow after wrap keeps order", capacity: 3, pushes: 5, grow: 5, want: []int64{3, 4, 5}, wantCap: 5},
		{name: "grow never shrinks", capacity: 4, pushes: 2, grow: 2, want: []int64{1, 2}, wantCap: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRing(tt.capacity)
			for i := 1; i <= tt.pushes; i++ {
				r.Push(sampleAt(i))
			}
			if tt.grow > 0 {
				r.Grow(tt.grow)
			}
			got := ringSeconds(r.Samples(nil))
			if len(got) != len(tt.want) {
				t.Fatalf("samples %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("samples %v, want %v", got, tt.want)
				}
			}
			if r.Cap() != tt.wantCap {
				t.Errorf("Cap = %d, want %d", r.Cap(), tt.wantCap)
			}
			latest, ok := r.Latest()
			if ok == tt.wantEmpty || (ok && latest.Time.Unix() != tt.want[len(tt.want)-1]) {
				t.Errorf("Latest = %v, %v", latest.Time.Unix(), ok)
			}
		})
	}
}

// Samples into a large enough dst allocates nothing: the analysis loop
// calls it every interval for every target.
func TestRingSamplesReusesDst(t *testing.T) {
	r := NewRing(100)
	for i := range 250 {
		r.Push(sampleAt(i))
	}
	dst := make([]analysis.Sample, 0, 100)
	allocs := testing.AllocsPerRun(10, func() { dst = r.Samples(dst) })
	if allocs != 0 || len(dst) != 100 {
		t.Errorf("allocs %v len %d", allocs, len(dst))
	}
}

// A target that never answers does not delay another: with five hanging
// targets beside it, the healthy one is still scraped every interval.
func TestPollerHangingTargetDoesNotDelayOthers(t *testing.T) {
	var hits atomic.Int64
	healthyURL := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		servePage(healthyPage, "text/plain")(w, r)
	})
	hangURL := startServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	var targets []Target
	for i := range 5 {
		tg, _ := ParseTarget(hangURL + "?copy=" + string(rune('a'+i)))
		targets = append(targets, tg)
	}
	healthy, _ := ParseTarget(healthyURL)
	targets = append(targets, healthy)

	// Generous times: the test must not fail on a loaded 2-core machine,
	// and the gap between "side by side" and "one after the other" stays
	// wide.
	const interval, timeout = 200 * time.Millisecond, 180 * time.Millisecond
	var clockMu sync.Mutex
	clock := time.Unix(1_000_000, 0)
	p, err := NewPoller(targets, Options{Interval: interval, Timeout: timeout, Now: func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		clock = clock.Add(time.Millisecond)
		return clock
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*interval)
	defer cancel()
	_ = p.Run(ctx)

	// Scraped one after the other, five 180 ms timeouts would leave room
	// for two healthy scrapes in two seconds; side by side, ten.
	if n := hits.Load(); n < 6 {
		t.Errorf("healthy target scraped %d times in %v, want ≥ 6", n, 10*interval)
	}
	snap := p.Snapshot(nil)
	if len(snap) != 6 || snap[5].Target != healthy.Name {
		t.Fatalf("snapshot targets %d, last %q", len(snap), snap[5].Target)
	}
	for _, s := range snap[5].Samples {
		if !s.OK() || s.Total.Scalars[analysis.Running] != 5 {
			t.Errorf("healthy sample err %q", s.Err)
		}
		if s.Time.Before(time.Unix(1_000_000, 0)) {
			t.Errorf("sample not stamped by the injected clock: %v", s.Time)
		}
	}
	if hang := snap[0].Samples; len(hang) == 0 || hang[0].Err != "timed out after "+timeout.String() {
		t.Errorf("hanging target samples %v", hang)
	}
}

// Snapshot may run while the poller writes (run with -race).
func TestPollerSnapshotConcurrent(t *testing.T) {
	tg, _ := ParseTarget(startServer(t, servePage(healthyPage, "text/plain")))
	p, err := NewPoller([]Target{tg}, Options{Interval: 5 * time.Millisecond, History: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	var snap []analysis.TargetInput
	for ctx.Err() == nil {
		snap = p.Snapshot(snap)
		if n := len(snap[0].Samples); n > 8 {
			t.Fatalf("ring grew to %d", n)
		}
	}
	if len(snap[0].Samples) < 2 {
		t.Errorf("only %d samples in 200ms at 5ms", len(snap[0].Samples))
	}
}

func TestOptionsDefaults(t *testing.T) {
	tests := []struct {
		in          Options
		interval    time.Duration
		timeout     time.Duration
		history     int
		concurrency int
	}{
		// History: the default 30 s window of samples, plus the one before it and the one in flight.
		{Options{}, time.Second, 800 * time.Millisecond, 32, DefaultMaxConcurrency},
		{Options{Interval: 2 * time.Second, Timeout: 3 * time.Second}, 2 * time.Second, 1600 * time.Millisecond, 17, DefaultMaxConcurrency},
		{Options{Interval: time.Minute}, time.Minute, 10 * time.Second, 2, DefaultMaxConcurrency},
		{Options{Interval: time.Second, Timeout: 200 * time.Millisecond, History: 5, MaxConcurrency: 2}, time.Second, 200 * time.Millisecond, 5, 2},
	}
	for _, tt := range tests {
		got := tt.in.withDefaults()
		if got.Interval != tt.interval || got.Timeout != tt.timeout || got.History != tt.history || got.MaxConcurrency != tt.concurrency || got.Now == nil {
			t.Errorf("withDefaults(%+v) = %+v", tt.in, got)
		}
	}
}
