package scrape

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/testutil"
)

// A target that never answers does not delay another: with five hanging
// targets beside it, the healthy one is still scraped every interval.
func TestPollerHangingTargetDoesNotDelayOthers(t *testing.T) {
	var hits atomic.Int64
	healthyURL := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		testutil.ServePage(testutil.HealthyPage, "text/plain")(w, r)
	})
	hangURL := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
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
	snap := p.Readings(nil)
	if len(snap) != 6 || snap[5].Target != healthy.Name {
		t.Fatalf("readings of %d targets, last %q", len(snap), snap[5].Target)
	}
	for _, s := range snap[5].Samples {
		if !s.OK() || s.Total.Scalars[catalogue.Running] != 5 {
			t.Errorf("healthy sample err %q", s.Err)
		}
		if s.Time.Before(time.Unix(1_000_000, 0)) {
			t.Errorf("sample not stamped by the injected clock: %v", s.Time)
		}
	}
	if hang := snap[0].Samples; len(hang) == 0 || hang[0].Err != "no answer within "+timeout.String() {
		t.Errorf("hanging target samples %v", hang)
	}
}

// Readings may run while the poller writes (run with -race).
func TestPollerReadingsConcurrent(t *testing.T) {
	tg, _ := ParseTarget(testutil.StartServer(t, testutil.ServePage(testutil.HealthyPage, "text/plain")))
	p, err := NewPoller([]Target{tg}, Options{Interval: 5 * time.Millisecond, History: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	var snap []catalogue.Readings
	for ctx.Err() == nil {
		snap = p.Readings(snap)
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

// Keep grows the rings to the duration asked for at the interval, and never
// shrinks them.
func TestKeepGrowsTheRings(t *testing.T) {
	p, err := NewPoller([]Target{{Name: "a", URL: "http://127.0.0.1:1/metrics"}}, Options{Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ring := p.targets[0].samples
	if got := ring.Cap(); got != 32 {
		t.Errorf("default capacity %d, want DefaultKeep at 1s plus two", got)
	}
	for _, tt := range []struct {
		keep time.Duration
		want int
	}{{5*time.Minute + 2*time.Second, 302}, {1500 * time.Millisecond, 302}, {302500 * time.Millisecond, 303}} {
		p.Keep(tt.keep)
		if got := ring.Cap(); got != tt.want {
			t.Errorf("Keep(%v): capacity %d, want %d", tt.keep, got, tt.want)
		}
	}
}
