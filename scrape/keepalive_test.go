package scrape

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/testutil"
)

// llamaCppPage is the head of a llama.cpp server's page (b4747).
const llamaCppPage = `# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 560
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 2048
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 6
`

// unknownPage carries no engine's families: a target whose engine is not
// known, as every target is before its first page.
const unknownPage = "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1e+08\n"

// poolListener serves at most its capacity of connections at once, as an
// HTTP server with a fixed pool of worker threads does (llama.cpp's
// cpp-httplib before it grew threads on demand): a connection beyond them
// waits in the listen backlog until a served one closes. A kept-alive idle
// connection holds its worker all the same.
type poolListener struct {
	net.Listener
	workers chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func newPoolListener(t *testing.T, workers int) *poolListener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &poolListener{Listener: l, workers: make(chan struct{}, workers), closed: make(chan struct{})}
}

func (l *poolListener) Accept() (net.Conn, error) {
	select {
	case l.workers <- struct{}{}: // a free worker takes the next connection
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.workers
		return nil, err
	}
	return &workerConn{Conn: c, release: sync.OnceFunc(func() { <-l.workers })}, nil
}

func (l *poolListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// workerConn gives its worker back when the server closes it.
type workerConn struct {
	net.Conn
	release func()
}

func (c *workerConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// startPoolServer serves page from a server of that many workers, which
// keeps an idle connection for 5 s, as llama.cpp does.
func startPoolServer(t *testing.T, workers int, page string) string {
	srv := httptest.NewUnstartedServer(testutil.ServePage(page, "text/plain; version=0.0.4"))
	srv.Listener.Close()
	srv.Listener = newPoolListener(t, workers)
	srv.Config.IdleTimeout = 5 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// servedWithin reports whether another client (a request of the load, on
// a connection of its own) is answered within wait.
func servedWithin(t *testing.T, url string, wait time.Duration) bool {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: wait}
	resp, err := client.Get(url)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		t.Fatalf("request of the load: %v", err)
	}
	resp.Body.Close()
	return true
}

// The fixture itself: a connection kept alive between scrapes holds the
// only worker of a one-worker server, so a request of the load waits for
// it; once the connection closes, the request is served.
func TestPoolServerKeptAliveScraperHoldsAWorker(t *testing.T) {
	url := startPoolServer(t, 1, llamaCppPage)
	keeper := &http.Transport{}
	resp, err := (&http.Client{Transport: keeper}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // read to the end: the connection goes back to the idle pool
	resp.Body.Close()
	if servedWithin(t, url, 300*time.Millisecond) {
		t.Fatal("a request was served while a kept-alive scraper held the only worker: the fixture does not model a fixed pool")
	}
	keeper.CloseIdleConnections()
	if !servedWithin(t, url, 2*time.Second) {
		t.Fatal("a request waited though the scraper had closed its connection")
	}
}

// vtop's poller does not hold a llama.cpp server's worker between
// scrapes, even when scraping faster than a second, where a target of
// unknown engine is kept alive: a request of the load is served while it
// scrapes. On a vLLM page (an event loop, where an idle connection holds
// no worker) it keeps its connection, which the same one-worker server
// shows as a held worker.
func TestPollerHoldsNoWorkerOfAFixedPool(t *testing.T) {
	tests := []struct {
		name       string
		page       string
		interval   time.Duration
		wantServed bool
	}{
		{"llama.cpp below a second", llamaCppPage, 200 * time.Millisecond, true},
		{"llama.cpp at a second", llamaCppPage, time.Second, true},
		{"unknown engine at a second", unknownPage, time.Second, true},
		{"vLLM below a second keeps its connection", testutil.HealthyPage, 200 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := startPoolServer(t, 1, tt.page)
			target, err := ParseTarget(url)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPoller([]Target{target}, Options{Interval: tt.interval})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { _ = p.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			// Two scrapes: the engine is known from the first page.
			<-p.Refresh()
			<-p.Refresh()
			time.Sleep(tt.interval / 4) // between scrapes
			// Generous for a loaded host: a held worker is held for as long
			// as the scraper keeps coming back, which it does every interval.
			served := servedWithin(t, url, 2*time.Second)
			if served != tt.wantServed {
				t.Errorf("request of the load served between scrapes: %v, want %v", served, tt.wantServed)
			}
			if s := p.Readings(nil)[0].Samples; len(s) == 0 || !s[len(s)-1].OK() {
				t.Errorf("the poller's own scrapes failed: %v", s)
			}
		})
	}
}

// The rule per engine: llama.cpp's connections are never kept; the
// engines served by an event loop (uvicorn, hyper, Go) keep theirs, as
// Prometheus keeps its own; a target whose engine is not known yet is
// closed after each scrape at a second or slower and kept below.
func TestKeepsAlive(t *testing.T) {
	tests := []struct {
		engine   catalogue.EngineKind
		interval time.Duration
		want     bool
	}{
		{catalogue.EngineLlamaCpp, 100 * time.Millisecond, false},
		{catalogue.EngineLlamaCpp, time.Second, false},
		{catalogue.EngineLlamaCpp, time.Minute, false},
		{catalogue.EngineVLLM, time.Second, true},
		{catalogue.EngineVLLM, 15 * time.Second, true},
		{catalogue.EngineSGLang, time.Second, true},
		{catalogue.EngineTRTLLM, time.Second, true},
		{catalogue.EngineTGI, time.Second, true},
		{catalogue.EngineDynamo, time.Second, true},
		{catalogue.EngineUnknown, 500 * time.Millisecond, true},
		{catalogue.EngineUnknown, time.Second, false},
		{catalogue.EngineUnknown, 10 * time.Second, false},
	}
	for _, tt := range tests {
		if got := KeepsAlive(tt.engine, tt.interval); got != tt.want {
			t.Errorf("KeepsAlive(%v, %v) = %v, want %v", tt.engine, tt.interval, got, tt.want)
		}
	}
}

// A scrape that waits for a worker of a fixed pool says how long it
// waited (catalogue.Sample.Waited): the analysis reads a queue no metric
// counts from it. With the only worker held by another client's
// connection for 800 ms, the page comes after that; with the worker free,
// well before.
func TestAScrapeSaysHowLongItWaitedForAWorker(t *testing.T) {
	for _, held := range []time.Duration{0, 800 * time.Millisecond} {
		url := startPoolServer(t, 1, llamaCppPage)
		target, err := ParseTarget(url)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPoller([]Target{target}, Options{Interval: time.Hour, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if held > 0 {
			keeper := &http.Transport{}
			resp, err := (&http.Client{Transport: keeper}).Get(url)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			time.AfterFunc(held, keeper.CloseIdleConnections)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = p.Run(ctx); close(done) }()
		<-p.Refresh()
		cancel()
		<-done
		s := p.Readings(nil)[0].Samples
		if len(s) == 0 || !s[0].OK() {
			t.Fatalf("held %v: the scrape failed: %v", held, s)
		}
		if w := s[0].Waited; held > 0 && w < held-50*time.Millisecond || held == 0 && w > 400*time.Millisecond {
			t.Errorf("worker held %v: the scrape says it waited %v", held, w)
		}
	}
}
