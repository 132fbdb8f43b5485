package scrape

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// countingServer serves a page whose prompt-token counter grows by 100 on
// every scrape, and counts the scrapes.
func countingServer(t *testing.T, hits *atomic.Int64) Target {
	t.Helper()
	url := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} " +
			strconv.FormatInt(100*n, 10) + "\nvllm:num_requests_running{model_name=\"m\"} 3\n"))
	})
	tg, err := ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestMonitorDeliversReportsAndFollowsWindow(t *testing.T) {
	var hits atomic.Int64
	tg := countingServer(t, &hits)
	reports := make(chan analysis.Report, 100)
	cfg := analysis.DefaultConfig()
	cfg.Window = time.Second
	const interval = 50 * time.Millisecond
	m, err := NewMonitor([]Target{tg}, Options{Interval: interval, History: 4}, cfg, func(r analysis.Report) { reports <- r })
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Poller().targets[0].ring.Cap(); got < int(time.Second/interval)+2 {
		t.Errorf("ring capacity %d does not cover the 1s window at %v", got, interval)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	first := receive(t, reports)
	if len(first.Replicas) != 1 || first.Replicas[0].Target != tg.Name || first.WindowSeconds != 1 {
		t.Errorf("first report: replicas %v window %v", first.Replicas, first.WindowSeconds)
	}
	if hits.Load() < 1 {
		t.Error("first report before the first scrape")
	}

	m.SetWindow(5 * time.Second)
	if got := m.Poller().targets[0].ring.Cap(); got < int(5*time.Second/interval)+2 {
		t.Errorf("ring capacity %d does not cover the new 5s window", got)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case r := <-reports:
			if r.WindowSeconds == 5 {
				goto scrapeNow
			}
		case <-deadline:
			t.Fatal("no report with the new window")
		}
	}
scrapeNow:
	before := hits.Load()
	m.ScrapeNow()
	receive(t, reports)
	if hits.Load() <= before {
		t.Error("ScrapeNow did not scrape")
	}
}

func receive(t *testing.T, reports <-chan analysis.Report) analysis.Report {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no report within 5s")
		return analysis.Report{}
	}
}

// Once scrapes at the start, every interval while waiting, and at the end,
// and reports over all of it.
func TestOnce(t *testing.T) {
	var hits atomic.Int64
	tg := countingServer(t, &hits)
	cfg := analysis.DefaultConfig()
	cfg.Window = 100 * time.Millisecond
	start := time.Now()
	r, err := Once(context.Background(), []Target{tg}, Options{Interval: 50 * time.Millisecond}, cfg, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond {
		t.Errorf("Once returned after %v, before the 300ms wait", elapsed)
	}
	if n := hits.Load(); n < 4 {
		t.Errorf("%d scrapes; want the first, the last and the ones every 50ms between", n)
	}
	if len(r.Replicas) != 1 || r.Replicas[0].Target != tg.Name {
		t.Errorf("replicas %+v", r.Replicas)
	}
	if r.WindowSeconds < 0.3 {
		t.Errorf("window %vs does not reach back to the first scrape", r.WindowSeconds)
	}
}

func TestOnceCanceled(t *testing.T) {
	var hits atomic.Int64
	tg := countingServer(t, &hits)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Once(ctx, []Target{tg}, Options{}, analysis.DefaultConfig(), time.Minute)
	if err != context.DeadlineExceeded {
		t.Errorf("error %v, want the context's", err)
	}
}

// TestMonitorRingsFollowTheWindow: without an explicit History the rings
// hold the window and no more, and grow when the window widens.
func TestMonitorRingsFollowTheWindow(t *testing.T) {
	cfgWindow := 30 * time.Second
	m, err := NewMonitor([]Target{{Name: "a", URL: "http://127.0.0.1:1/metrics"}}, Options{Interval: time.Second},
		analysis.Config{Window: cfgWindow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring := m.Poller().targets[0].ring
	if got, want := ring.Cap(), historyFor(cfgWindow, time.Second); got != want {
		t.Errorf("ring capacity %d, want %d", got, want)
	}
	m.SetWindow(5 * time.Minute)
	if got, want := ring.Cap(), historyFor(5*time.Minute, time.Second); got != want {
		t.Errorf("after SetWindow(5m): capacity %d, want %d", got, want)
	}
}
