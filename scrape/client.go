package scrape

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/httpclient"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/safetext"
)

// DefaultMaxBody caps the body read from one scrape. Real vLLM pages are
// 30–300 KB; anything near this is not a metrics page.
const DefaultMaxBody = 16 << 20

// DefaultMaxMemory is --max-memory's default: the pages share half of it.
const DefaultMaxMemory = 256 << 20

// maxRedirects is how many redirects a scrape follows.
const maxRedirects = 5

// acceptHeader asks for the text format only: python servers switch to
// OpenMetrics (slow to parse, exemplars) when it is offered.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// ClientOptions configure how targets are reached.
type ClientOptions struct {
	// MaxBody caps the decompressed body; zero means DefaultMaxBody.
	MaxBody int64
	// CAFile is a PEM bundle trusted instead of the system roots.
	CAFile string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// BearerTokenFile holds a token sent as "Authorization: Bearer …". It
	// is read once, when the client is made.
	BearerTokenFile string
	// Headers are extra request headers, each "Key: Value".
	Headers []string
	// MaxMemory is vtop's bound on its memory (--max-memory); the pages
	// being read share half of it. Zero means DefaultMaxMemory.
	MaxMemory int64
}

// Client fetches /metrics pages. One Client (and one http.Transport) serves
// every target. Safe for concurrent use.
type Client struct {
	http    *http.Client
	auth    string // "Bearer …" or ""
	headers http.Header
	maxBody int64
	pages   *pageBudget
}

// Error is a failed scrape: the target and the problem, short and clear.
// It never carries credentials, not even those the server echoed.
type Error struct {
	Target  string
	Problem string
	// TimedOut is set when the target gave no answer within the scrape
	// timeout (httperr.NoAnswer): a late answer, not proof of an outage.
	TimedOut bool
}

// Error returns "target: problem".
func (e *Error) Error() string { return e.Target + ": " + e.Problem }

var errRedirectLoop = fmt.Errorf("redirect loop (more than %d redirects)", maxRedirects)

// NewClient builds the shared client. Errors name the option at fault.
func NewClient(opts ClientOptions) (*Client, error) {
	c := &Client{maxBody: opts.MaxBody, headers: http.Header{}, pages: newPageBudget(opts.MaxMemory)}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	tlsConfig, err := httpclient.TLSConfig(opts.CAFile, opts.Insecure)
	if err != nil {
		return nil, err
	}
	// A target whose connection is closed after each scrape (KeepsAlive)
	// resumes its TLS session on the next one: no full handshake a scrape.
	tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	if opts.BearerTokenFile != "" {
		tok, err := os.ReadFile(opts.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("bearer token file: %w", err)
		}
		t := strings.TrimSpace(string(tok))
		if t == "" {
			return nil, fmt.Errorf("bearer token file %s is empty", opts.BearerTokenFile)
		}
		c.auth = "Bearer " + t
	}
	for _, h := range opts.Headers {
		k, v, err := httperr.ParseHeader(h)
		if err != nil {
			return nil, fmt.Errorf("header %w", err)
		}
		c.headers.Add(k, v)
	}
	addSecrets(c.auth, c.headers)
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
		// A scrape's request is some 300 bytes, written once; the
		// default 4 KB buffer stays with each kept-alive connection.
		WriteBufferSize: 1 << 10,
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: c.checkRedirect}
	return c, nil
}

// addSecrets makes the values of the Authorization and configured
// headers secrets of vtop's: a server echoing them back (in an error, a
// label) shows them as safetext.Redacted wherever its text goes.
func addSecrets(auth string, headers http.Header) {
	values := []string{strings.TrimPrefix(auth, "Bearer ")}
	for _, v := range headers {
		values = append(values, v...)
	}
	safetext.AddSecrets(values...)
}

// checkRedirect caps redirects and keeps Authorization and the extra
// headers from leaking to another host (httpclient.SameHost).
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errRedirectLoop
	}
	if !httpclient.SameHost(via[0].URL, req.URL) {
		req.Header.Del("Authorization")
		for k := range c.headers {
			req.Header.Del(k)
		}
	}
	return nil
}

// Fetch reads the page of t into buf (reused: pass the previous result's
// buffer back) within timeout. It returns the body and its Content-Type,
// or an *Error. The page is read within the pages' share of the memory
// bound (ClientOptions.MaxMemory), given back when Fetch returns. Its
// connection is kept for the next Fetch: the pages read this way (a
// dcgm-exporter's) are served by Go, where an idle connection holds no
// worker; the poller decides per engine (KeepsAlive).
func (c *Client) Fetch(ctx context.Context, t Target, timeout time.Duration, buf []byte) ([]byte, string, error) {
	hold := c.hold()
	defer hold.release()
	return c.fetch(ctx, t, timeout, buf, hold, true)
}

// hold is an empty hold on the pages' budget, for one page.
func (c *Client) hold() *pageHold { return &pageHold{budget: c.pages} }

// fetch is Fetch with the page's buffer counted in hold, which the
// caller releases once done with the body. Without keepAlive the
// connection is closed once the page is read (KeepsAlive).
func (c *Client) fetch(ctx context.Context, t Target, timeout time.Duration, buf []byte, hold *pageHold, keepAlive bool) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(problem string) ([]byte, string, error) {
		return buf[:0], "", &Error{Target: t.Name, Problem: safetext.Sanitize(problem), TimedOut: problem == httperr.NoAnswer(timeout)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return fail("invalid URL")
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Close = !keepAlive
	req.Header.Set("Accept", acceptHeader)
	req.Header.Set("User-Agent", "vtop")
	httpclient.IdentityOnLoopback(req)
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fail(describe(ctx, err, timeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(statusProblem(resp))
	}
	body, err := readHeld(ctx, resp.Body, buf[:0], c.maxBody, resp.ContentLength, hold)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return fail("body larger than " + human.Bytes(c.maxBody))
		}
		var refused budgetError
		if errors.As(err, &refused) {
			return fail(refused.Error())
		}
		return fail(describe(ctx, err, timeout))
	}
	if compressed(resp, body) {
		if body, err = gunzip(body, c.maxBody); err != nil {
			return fail(err.Error())
		}
	}
	return body, resp.Header.Get("Content-Type"), nil
}

var errTooLarge = errors.New("body too large")

// readHeld appends r to buf, stopping with errTooLarge past limit bytes,
// with the buffers a page is read into counted in hold (nil: not counted)
// as it grows: once for a page that fits the buffer it is read into, a
// few times for one that doubles it. size is the length the server
// announced (Content-Length), or -1: the buffer is made that large at
// once, up to the largest one the pool keeps, so that a server announcing
// more than it sends cannot make every scrape allocate the limit. The
// buffer never grows past limit+1 bytes.
func readHeld(ctx context.Context, r io.Reader, buf []byte, limit, size int64, hold *pageHold) ([]byte, error) {
	want := int64(cap(buf))
	if size >= 0 && size < maxPooledBuffer && size <= limit {
		want = max(want, bufferSize(len(buf)+int(size)+1, limit+1)) // +1: the read that sees the end needs room
	}
	if e := hold.expected(); e > 0 {
		want = max(want, min(e+e/8, limit+1)) // room for the page to grow a little
	}
	if err := hold.growTo(ctx, want, 0); err != nil { // before the buffer is made
		return buf[:0], err
	}
	buf = growBuffer(buf, want)
	lr := io.LimitedReader{R: r, N: limit + 1}
	for {
		if len(buf) == cap(buf) {
			// Doubled: a target's first page, whose size is not known
			// yet, is read in a few copies, where append grows a large
			// slice by a quarter at a time (a 290 KB page took 16
			// copies, 1.2 MB moved, in the first second of every run).
			n := bufferSize(max(2*len(buf), 1), limit+1)
			// The buffer it replaces is counted until the page is done
			// with: it is garbage the collector has yet to take.
			if err := hold.growTo(ctx, hold.bytes()+n, len(buf)); err != nil { // before the buffer is made
				return buf[:0], err
			}
			buf = growBuffer(buf, n)
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf[:0], errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf[:0], err
		}
	}
}

// bufferSize is the capacity of a buffer grown to hold need bytes: a
// class's size, as the pool's buffers are, so that the buffer a page ends
// in is one the pool hands out again for a page of that size. It is never
// more than most bytes (the read's limit and one) unless need is: a page
// at the limit is not read into more than its size.
func bufferSize(need int, most int64) int64 {
	size, _ := bufferClass(need)
	return max(min(int64(size), most), int64(need))
}

// growBuffer returns buf with a capacity of at least size bytes.
func growBuffer(buf []byte, size int64) []byte {
	if int64(cap(buf)) >= size {
		return buf
	}
	grown := make([]byte, len(buf), size)
	copy(grown, buf)
	return grown
}

// httpToHTTPSAnswers are what servers answer a plain HTTP request sent to
// their TLS port with, in an HTTP 400 body: Go's net/http, and nginx (the
// usual ingress in front of vLLM).
var httpToHTTPSAnswers = [][]byte{
	[]byte("HTTP request to an HTTPS server"),
	[]byte("plain HTTP request was sent to HTTPS port"),
}

// statusProblem describes a non-200 answer, with the first line of the
// body when it is short text (often the actual reason), cleaned of
// secrets before it is cut (a secret the 512 bytes read end inside is
// hidden too).
func statusProblem(resp *http.Response) string {
	p := httperr.Status(resp.StatusCode)
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusBadRequest && resp.Request != nil && containsAny(head, httpToHTTPSAnswers) {
		return "server speaks HTTPS: use " + httperr.WithScheme(resp.Request.URL, "https")
	}
	head = bytes.TrimSpace(head)
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	if len(head) == 0 || head[0] == '<' {
		return p
	}
	line := safetext.Sanitize(string(head))
	if len(line) > 80 {
		line = line[:80] + "…"
	}
	return p + ": " + line
}

// containsAny reports whether b contains any of the phrases.
func containsAny(b []byte, phrases [][]byte) bool {
	for _, p := range phrases {
		if bytes.Contains(b, p) {
			return true
		}
	}
	return false
}

// describe turns a transport error into a short problem an on-call
// engineer can act on, in the words every source uses (httperr). A request
// whose context ran out is a timeout whatever error the transport returned.
func describe(ctx context.Context, err error, timeout time.Duration) string {
	if errors.Is(err, errRedirectLoop) {
		return errRedirectLoop.Error()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = errors.Join(err, context.DeadlineExceeded)
	}
	return httperr.Describe(err, timeout)
}

// closeIdle closes the keep-alive connections nobody is using.
func (c *Client) closeIdle() { c.http.CloseIdleConnections() }

// keepAliveBelow is the interval below which a target whose engine is not
// known keeps its connection between scrapes. At a second or slower a new
// connection per scrape costs the server one TCP (and, over TLS, one
// resumed handshake: the client keeps the sessions) a second at most, far
// less than a worker held for nothing would cost one whose HTTP pool is
// fixed; faster than that the handshakes add up, and so few tools scrape
// that fast that the target is most likely one of the known engines,
// known after the first page.
const keepAliveBelow = time.Second

// KeepsAlive reports whether scrapes of a target whose pages carry that
// engine keep their connection open for the next scrape, at interval.
//
// A server that gives each open connection a worker of its HTTP pool
// (catalogue.Capability.WorkerPerConnection: llama.cpp) never has its
// connection kept, whatever the version: a connection kept between scrapes
// would take a worker from the requests, whose overflow then waits where
// no metric counts it. vLLM, SGLang, TensorRT-LLM's trtllm-serve
// (uvicorn), TGI and Dynamo (hyper) serve HTTP from an event loop, where
// an idle connection holds a socket and no worker: theirs are kept, as
// Prometheus keeps its own. A target of no known engine yet (its first
// scrape, a router, an exporter) keeps its connection only when scraped
// faster than keepAliveBelow.
func KeepsAlive(engine catalogue.EngineKind, interval time.Duration) bool {
	if engine == catalogue.EngineUnknown {
		return interval < keepAliveBelow
	}
	return !engine.WorkerPerConnection()
}
