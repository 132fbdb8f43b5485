package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// oversizedPage is a page just under DefaultMaxBody: a healthy gauge
// padded with comments, as a page at the --max-body cap.
func oversizedPage() string {
	var b strings.Builder
	line := "# " + strings.Repeat("x", 1021) + "\n"
	for b.Len()+len(line) < DefaultMaxBody-1024 {
		b.WriteString(line)
	}
	b.WriteString("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 5\n")
	return b.String()
}

// peakHeap samples the heap's live and unswept objects until stop is
// closed and returns the largest seen.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return out
}

// TestPagesShareOneBudget: sixteen targets serving pages at the
// --max-body cap are read within the pages' share of --max-memory (half
// of it), not sixteen times three times the page; a page larger than the
// share alone is refused with a message naming the bound, and a page
// that fits is read.
func TestPagesShareOneBudget(t *testing.T) {
	// The collector runs often, as under vtop's memory limit: the heap is
	// what the pages hold, not the garbage of the last collection's pace.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	page := oversizedPage()
	huge := strings.Repeat("# padding line\n", 40<<20/15)
	tests := []struct {
		name      string
		pages     []string
		maxBody   int64
		maxMemory int64
		wantErr   string // in every failed sample
		read      bool   // at least one page is read
		peakMiB   float64
	}{
		// The pages that find no room wait, or give way to the others.
		{name: "16 pages at the 16 MiB cap", pages: repeat(page, 16), maxMemory: 256 << 20, read: true,
			wantErr: "would pass the pages' share of --max-memory 256MiB (128 MiB)", peakMiB: 128 + 32},
		{name: "a page over the pages' share", pages: []string{huge}, maxBody: 1 << 30, maxMemory: 64 << 20,
			wantErr: "page of more than 16 MiB (read into 65532 KiB of buffers) would pass the pages' share of --max-memory 64MiB (32 MiB)", peakMiB: 32 + 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var targets []Target
			for _, p := range tt.pages {
				body := []byte(p) // once: the servers' copies are not the client's
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/plain; version=0.0.4")
					_, _ = w.Write(body)
				}))
				t.Cleanup(srv.Close)
				target, err := ParseTarget(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				targets = append(targets, target)
			}
			p, err := NewPoller(targets, Options{Interval: time.Hour, Timeout: 30 * time.Second,
				Client: ClientOptions{MaxBody: tt.maxBody, MaxMemory: tt.maxMemory}})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			stop := make(chan struct{})
			peak := peakHeap(stop)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { _ = p.Run(ctx) })
			<-p.Refresh()
			close(stop)
			cancel()
			wg.Wait()
			peakMiB := float64(<-peak-base.HeapAlloc) / (1 << 20)
			t.Logf("%d pages: peak heap %.0f MiB over the start", len(tt.pages), peakMiB)
			if peakMiB > tt.peakMiB {
				t.Errorf("peak heap %.0f MiB over the start, want at most %.0f MiB", peakMiB, tt.peakMiB)
			}
			read := 0
			for _, r := range p.Readings(nil) {
				if len(r.Samples) == 0 {
					t.Fatalf("%s: no sample", r.Target)
				}
				if s := r.Samples[len(r.Samples)-1]; s.Err == "" {
					read++
				} else if !strings.Contains(s.Err, tt.wantErr) {
					t.Errorf("%s: error %q, want %q", r.Target, s.Err, tt.wantErr)
				}
			}
			t.Logf("%d of %d pages read", read, len(tt.pages))
			if tt.read != (read > 0) {
				t.Errorf("%d pages read, want some: %v", read, tt.read)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestPageBudgetGivesWay: a page waits for room another gives back;
// when every page holding room would wait, the last to ask fails at once
// and names the bound, so that the others go on; a page larger than the
// share fails without waiting.
func TestPageBudgetGivesWay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := newPageBudget(200 << 20) // a share of 100 MiB
	a, c := &pageHold{budget: b}, &pageHold{budget: b}
	if err := a.growTo(ctx, 50<<20, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.growTo(ctx, 50<<20, 0); err != nil {
		t.Fatal(err)
	}
	grown := make(chan error, 1)
	go func() { grown <- a.growTo(ctx, 60<<20, 40<<20) }() // waits: c holds the rest
	for {
		b.mu.Lock()
		waiting := b.waiting
		b.mu.Unlock()
		if waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	err := c.growTo(ctx, 60<<20, 40<<20) // a waits too: c gives way
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("the second page waited %v to give way, want at once", waited)
	}
	want := "page of more than 40 MiB (read into 60 MiB of buffers) would pass the pages' share of --max-memory 200MiB (100 MiB) with the other pages being read"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second page: %v, want %q", err, want)
	}
	c.release()
	if err := <-grown; err != nil {
		t.Fatalf("first page, once room was given back: %v", err)
	}
	if err := c.growTo(ctx, 101<<20, 0); err == nil || !strings.Contains(err.Error(), "buffer of 101 MiB would pass the pages' share of --max-memory 200MiB (100 MiB): raise --max-memory or lower --max-body") {
		t.Errorf("a page over the share: %v", err)
	}
	a.release()
	if b.used != 0 || b.holders != 0 {
		t.Errorf("after every release: %d bytes held by %d pages, want none", b.used, b.holders)
	}
}

// TestPageWaitingOutTheTimeoutForRoom: a page that found no room in the
// budget before the scrape's timeout is refused for the room, not said to
// have had no answer: the server answered, and the fix is --max-memory.
func TestPageWaitingOutTheTimeoutForRoom(t *testing.T) {
	page := strings.Repeat("# padding line\n", 4<<20/15)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	target, err := ParseTarget(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ClientOptions{MaxMemory: 64 << 20}) // a share of 32 MiB
	if err != nil {
		t.Fatal(err)
	}
	other := c.hold() // another page being read holds all but 1 MiB
	if err := other.growTo(context.Background(), 31<<20, 0); err != nil {
		t.Fatal(err)
	}
	defer other.release()
	_, _, err = c.Fetch(context.Background(), target, 200*time.Millisecond, nil)
	want := "would pass the pages' share of --max-memory 64MiB (32 MiB) with the other pages being read, and no room was given back within the scrape's timeout; raise --max-memory"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "no answer") {
		t.Errorf("error %v, want %q", err, want)
	}
}
