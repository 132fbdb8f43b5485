package collect

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/gpu"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
)

// ExporterOptions configure a dcgm-exporter reader. Zero values take
// defaults.
type ExporterOptions struct {
	// Client fetches the page (the one the replicas are scraped with,
	// so TLS and auth options apply); nil makes a default one.
	Client *scrape.Client
	// Interval is the time between fetches (default 1 s).
	Interval time.Duration
	// Timeout bounds one fetch (default 2 s).
	Timeout time.Duration
}

// Exporter reads one dcgm-exporter in the background. Safe for concurrent
// use.
type Exporter struct {
	background
	target scrape.Target
	opts   ExporterOptions

	mu   sync.Mutex
	snap Snapshot
}

// ParseExporter reads an exporter address as --dcgm takes it: "host",
// "host:port" (port 9400 when absent) or a URL (path /metrics when
// absent).
func ParseExporter(s string) (scrape.Target, error) {
	s = strings.TrimSpace(s)
	if s != "" && !strings.Contains(s, "://") {
		host, path, _ := strings.Cut(s, "/")
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(catalogue.DCGMPort))
		}
		if path != "" {
			host += "/" + path
		}
		s = host
	}
	return scrape.ParseTarget(s)
}

// StartExporter starts reading target until ctx ends or Stop is called,
// and returns at once.
func StartExporter(ctx context.Context, target scrape.Target, opts ExporterOptions) (*Exporter, error) {
	if opts.Client == nil {
		c, err := scrape.NewClient(scrape.ClientOptions{})
		if err != nil {
			return nil, err
		}
		opts.Client = c
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	e := &Exporter{background: newBackground(), target: target, opts: opts}
	e.snap.Note = "reading " + target.Name
	e.run(ctx, e.poll)
	return e, nil
}

// Snapshot returns what the reader knows now.
func (e *Exporter) Snapshot() Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.snap
	s.GPUs = append([]device.GPU(nil), s.GPUs...)
	return s
}

func (e *Exporter) poll(ctx context.Context) {
	var buf []byte
	for {
		buf = e.readOnce(ctx, buf)
		e.signal()
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.opts.Interval):
		}
	}
}

// readOnce fetches and parses the page. A failure keeps the last GPUs
// and says why.
func (e *Exporter) readOnce(ctx context.Context, buf []byte) []byte {
	body, _, err := e.opts.Client.Fetch(ctx, e.target, e.opts.Timeout, buf)
	var gs []device.GPU
	if err == nil {
		gs, err = gpu.ParseDCGM(body, e.target.URL)
		if err != nil {
			err = fmt.Errorf("%s: %w", e.target.Name, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil:
		e.snap.OK, e.snap.Note = false, "dcgm-exporter "+safetext.Sanitize(err.Error())
	case len(gs) == 0:
		e.snap.OK, e.snap.Note = false, "dcgm-exporter "+e.target.Name+": no DCGM series on the page"
	default:
		e.snap = Snapshot{GPUs: gs, OK: true, At: time.Now()}
	}
	return body
}

// LocalExporter is where a dcgm-exporter on this host listens.
const LocalExporter = "localhost:9400"

// Listening reports whether something accepts connections at addr
// (LocalExporter: vtop then reads it, and its note says so if it is not a
// dcgm-exporter).
func Listening(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: 300 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
