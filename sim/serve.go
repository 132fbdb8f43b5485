package sim

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
)

// Fault is a failure a replica can be switched into at runtime.
type Fault string

// The faults.
const (
	// FaultNone serves normally.
	FaultNone Fault = "none"
	// FaultDown refuses connections: the listener is closed (in handler
	// mode, each connection is closed without an answer).
	FaultDown Fault = "down"
	// FaultHTTP500 answers 500 Internal Server Error.
	FaultHTTP500 Fault = "http500"
	// FaultHang never answers; the handler ends when the client gives up.
	FaultHang Fault = "hang"
	// FaultSlow sends the page one byte per SlowByteInterval.
	FaultSlow Fault = "slow"
	// FaultTruncated sends part of the page, cut mid-line, then drops the
	// connection.
	FaultTruncated Fault = "truncated"
	// FaultGarbage answers 200 with a page that turns into bytes that are
	// not Prometheus text halfway, terminal escape sequences included, as
	// a proxy splicing its error page into the stream does (/health gets
	// the garbage alone).
	FaultGarbage Fault = "garbage"
	// FaultRestart restarts the server: counters reset, a new process start
	// time. It is an event, not a state: the replica then serves normally.
	FaultRestart Fault = "restart"
	// FaultStall stops the engines stepping, as a collective that never
	// returns or a GPU fault does, while the API server still answers:
	// /metrics and /health answer 200, no token is generated and no
	// request finishes (nor is aborted: aborts go through the engine),
	// running stands where it was, and the arrivals pile up in waiting.
	// Leaving it, the engines step again where they stopped.
	FaultStall Fault = "stall"
)

// Faults lists every fault.
func Faults() []Fault {
	return []Fault{FaultNone, FaultDown, FaultHTTP500, FaultHang, FaultSlow, FaultTruncated, FaultGarbage, FaultRestart, FaultStall}
}

// ParseFault returns the fault of that name.
func ParseFault(name string) (Fault, error) {
	for _, f := range Faults() {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown fault %q (want one of %v)", name, Faults())
}

// garbage is what a FaultGarbage replica answers after the first half of
// its page: HTML, binary and an escape sequence that would clear a terminal
// if printed raw. Coming after good lines, it is caught only by a parser
// that checks every line, not by a look at the first bytes.
var garbage = []byte("<html><body>\x1b[2J\x1b]0;pwned\x07502 Bad Gateway\x00\xff\xfe</body></html>\n")

// Fault returns the replica's current fault.
func (r *Replica) Fault() Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fault
}

// SetFault switches the replica into fault f. FaultRestart restarts the
// replica and leaves it serving normally. When serving over HTTP,
// FaultDown closes the listener and every connection, and leaving
// FaultDown listens again on the same address.
func (r *Replica) SetFault(f Fault) error {
	if _, err := ParseFault(string(f)); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f == FaultRestart {
		r.syncToWall()
		r.restarts++
		r.boot()
		f = FaultNone
	}
	if f == FaultStall || r.fault == FaultStall {
		// The engines run up to now as they were, then stop or resume.
		r.syncToWall()
		for _, e := range r.engines {
			e.stalled = f == FaultStall
		}
	}
	was := r.fault
	r.fault = f
	close(r.faultChanged)
	r.faultChanged = make(chan struct{})
	if r.srv == nil {
		return nil
	}
	switch {
	case f == FaultDown && was != FaultDown:
		r.srv.stop()
	case f != FaultDown && was == FaultDown:
		return r.srv.listen(r)
	}
	return nil
}

// Handler serves the replica's /metrics and /health. In real-time mode each
// request first advances the model to now, so an unscraped replica costs no
// CPU; in virtual mode the caller advances the clock.
func (r *Replica) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(r.MetricsPath(), r.serveMetrics)
	mux.HandleFunc("/health", r.serveHealth)
	return mux
}

func (r *Replica) currentFault() (Fault, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fault, r.faultChanged
}

// serveFault answers according to a fault and reports whether it did; the
// page (for slow and truncated) is rendered only when needed.
func (r *Replica) serveFault(w http.ResponseWriter, req *http.Request) bool {
	f, changed := r.currentFault()
	switch f {
	case FaultDown:
		dropConnection(w)
	case FaultHTTP500:
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	case FaultHang:
		select {
		case <-req.Context().Done():
		case <-changed:
		}
	case FaultGarbage:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(garbage)
	default:
		return false
	}
	return true
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (r *Replica) serveHealth(w http.ResponseWriter, req *http.Request) {
	if r.serveFault(w, req) {
		return
	}
	w.WriteHeader(http.StatusOK)
}

// textFormat is the exposition vLLM's Python server writes.
var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

func (r *Replica) serveMetrics(w http.ResponseWriter, req *http.Request) {
	if f, _ := r.currentFault(); f != FaultGarbage && r.serveFault(w, req) {
		return
	}
	page, err := r.Render(textFormat)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", string(textFormat))
	f, changed := r.currentFault()
	switch f {
	case FaultSlow:
		r.writeSlowly(w, req, page, changed)
	case FaultTruncated:
		writeTruncated(w, page)
	case FaultGarbage:
		_, _ = w.Write(garbled(page))
	default:
		_, _ = w.Write(page)
	}
}

// writeSlowly sends one byte per interval until done, the client leaves or
// the fault changes (then the rest at once).
func (r *Replica) writeSlowly(w http.ResponseWriter, req *http.Request, page []byte, changed <-chan struct{}) {
	flusher, _ := w.(http.Flusher)
	tick := time.NewTicker(r.slowEvery)
	defer tick.Stop()
	for i := range page {
		if _, err := w.Write(page[i : i+1]); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-req.Context().Done():
			return
		case <-changed:
			_, _ = w.Write(page[i+1:])
			return
		case <-tick.C:
		}
	}
}

// garbled is the first half of page, in whole lines, then garbage.
func garbled(page []byte) []byte {
	head := page[:bytes.LastIndexByte(page[:len(page)/2], '\n')+1]
	return append(head[:len(head):len(head)], garbage...)
}

// writeTruncated sends the first half of the page, cut inside a line, then
// aborts the connection as a crashing server would.
func writeTruncated(w http.ResponseWriter, page []byte) {
	cut := len(page) / 2
	for cut > 1 && (page[cut-1] == '\n' || page[cut] == '\n') {
		cut--
	}
	_, _ = w.Write(page[:cut])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// server is a replica's HTTP server on its own loopback port.
type server struct {
	addr   string // fixed once the first listener is bound
	closed bool   // the fleet closed: never listen again
	http   *http.Server
	done   chan struct{} // closed when Serve returns
}

// listen binds s.addr (or picks a port the first time) and serves.
func (s *server) listen(r *Replica) error {
	if s.closed {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.index, err)
	}
	s.addr = ln.Addr().String()
	hs := &http.Server{Handler: r.Handler(), ReadHeaderTimeout: 5 * time.Second}
	s.http, s.done = hs, make(chan struct{})
	done := s.done
	go func() {
		defer close(done)
		// Serve ends with ErrServerClosed on stop; any other error means the
		// listener failed, and the replica then looks down, as it should.
		_ = hs.Serve(ln)
	}()
	return nil
}

// stop closes the listener and every connection and waits for Serve to end.
func (s *server) stop() {
	if s.http == nil {
		return
	}
	_ = s.http.Close()
	<-s.done
	s.http = nil
}
