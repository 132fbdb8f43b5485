package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

// startFleet serves one healthy replica over real HTTP with a clock the
// test controls.
func startFleet(t *testing.T) (*Fleet, string, *testutil.Clock) {
	t.Helper()
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	f, err := NewFleet(Options{Replicas: 1, Scenario: Healthy, Seed: 2, Clock: clock.Now, MaxCatchUp: 5 * time.Minute, SlowByteInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	urls, err := f.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if len(urls) != 1 {
		t.Fatalf("urls %v", urls)
	}
	return f, urls[0], clock
}

// get fetches url with a short timeout and returns status, body and error.
func get(url string, timeout time.Duration) (int, []byte, error) {
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

func TestRealTimeScrapeAdvancesToWallClock(t *testing.T) {
	f, url, clock := startFleet(t)
	clock.Add(2 * time.Minute)
	status, body, err := get(url, 2*time.Second)
	if err != nil || status != 200 {
		t.Fatalf("status %d, err %v", status, err)
	}
	p := parsePage(t, body)
	if got := f.Replicas()[0].Now(); got != 2*time.Minute {
		t.Errorf("virtual time %v after 2 minutes of wall clock", got)
	}
	if p.value("vllm:request_success_total") == 0 {
		t.Error("nothing finished in two minutes of healthy traffic")
	}
	start := clock.Now().Add(-2 * time.Minute)
	if got := p.value("process_start_time_seconds"); got != float64(start.Unix()) {
		t.Errorf("process_start_time_seconds %v, want %v", got, start.Unix())
	}
	// A long pause is simulated only up to MaxCatchUp.
	clock.Add(time.Hour)
	if _, _, err := get(url, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := f.Replicas()[0].Now(); got != 7*time.Minute {
		t.Errorf("virtual time %v after an hour's pause, want 2m + 5m of catch-up", got)
	}
}

func TestFaultsOverHTTP(t *testing.T) {
	f, url, clock := startFleet(t)
	r := f.Replicas()[0]
	clock.Add(time.Minute)
	set := func(fault Fault) {
		t.Helper()
		if err := r.SetFault(fault); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		fault Fault
		check func(t *testing.T, status int, body []byte, err error)
	}{
		{FaultDown, func(t *testing.T, _ int, _ []byte, err error) {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("down: err %v, want connection refused", err)
			}
		}},
		{FaultHTTP500, func(t *testing.T, status int, _ []byte, err error) {
			if err != nil || status != 500 {
				t.Errorf("http500: status %d, err %v", status, err)
			}
		}},
		{FaultTruncated, func(t *testing.T, status int, body []byte, err error) {
			if err == nil || len(body) == 0 || body[len(body)-1] == '\n' {
				t.Errorf("truncated: %d bytes ending %q, err %v; want a body cut mid-line and an error", len(body), tail(body), err)
			}
		}},
		{FaultGarbage, func(t *testing.T, status int, body []byte, err error) {
			if err != nil || status != 200 {
				t.Fatalf("garbage: status %d, err %v", status, err)
			}
			if _, perr := parseTextPage(body); perr == nil {
				t.Error("garbage parsed as Prometheus text")
			}
		}},
		{FaultSlow, func(t *testing.T, _ int, body []byte, err error) {
			if err == nil || len(body) > 50 {
				t.Errorf("slow: %d bytes, err %v; want a timeout after a few bytes", len(body), err)
			}
		}},
		{FaultHang, func(t *testing.T, _ int, body []byte, err error) {
			if err == nil || len(body) != 0 {
				t.Errorf("hang: %d bytes, err %v; want a timeout", len(body), err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault), func(t *testing.T) {
			set(tt.fault)
			status, body, err := get(url, 300*time.Millisecond)
			tt.check(t, status, body, err)
			set(FaultNone)
			if status, _, err := get(url, 2*time.Second); err != nil || status != 200 {
				t.Errorf("after %s cleared: status %d, err %v", tt.fault, status, err)
			}
		})
	}
}

func tail(b []byte) string { return string(b[max(0, len(b)-20):]) }

func TestRestartResetsCounters(t *testing.T) {
	f, url, clock := startFleet(t)
	r := f.Replicas()[0]
	clock.Add(2 * time.Minute)
	_, body, err := get(url, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := parsePage(t, body)
	clock.Add(time.Second)
	if err := r.SetFault(FaultRestart); err != nil {
		t.Fatal(err)
	}
	if r.Fault() != FaultNone {
		t.Errorf("fault after restart %q, want none", r.Fault())
	}
	_, body, err = get(url, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	after := parsePage(t, body)
	for _, name := range []string{"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total", "http_requests_total"} {
		if b, a := before.value(name), after.value(name); !(a < b) || a != 0 {
			t.Errorf("%s: %v before restart, %v after; want a reset to 0", name, b, a)
		}
	}
	if b, a := before.value("process_start_time_seconds"), after.value("process_start_time_seconds"); a <= b {
		t.Errorf("process start time %v before restart, %v after", b, a)
	}
}

// TestHangEndsWhenClientLeaves checks that a hanging handler does not
// outlive its client.
func TestHangEndsWhenClientLeaves(t *testing.T) {
	f, url, _ := startFleet(t)
	if _, _, err := get(url, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()
	if err := f.Replicas()[0].SetFault(FaultHang); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, _, err := get(url, 100*time.Millisecond); err == nil {
			t.Fatal("hang answered")
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > baseline+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the hangs", runtime.NumGoroutine(), baseline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCloseReleasesPortsAndStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	f, err := NewFleet(Options{Replicas: 3, Scenario: Idle})
	if err != nil {
		t.Fatal(err)
	}
	urls, err := f.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 3 || urls[0] == urls[1] {
		t.Fatalf("urls %v", urls)
	}
	if status, _, err := get(urls[2], time.Second); err != nil || status != 200 {
		t.Fatalf("status %d, err %v", status, err)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, _, err := get(urls[2], time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving after cancel: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Start(t.Context()); err == nil {
		t.Error("a closed fleet started again")
	}
}

func TestHealth(t *testing.T) {
	_, url, _ := startFleet(t)
	health := url[:len(url)-len("/metrics")] + "/health"
	if status, _, err := get(health, time.Second); err != nil || status != 200 {
		t.Errorf("health: status %d, err %v", status, err)
	}
}
