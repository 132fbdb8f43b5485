package scrape

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/vtop-dev/vtop/safetext"
)

// DefaultMaxBody caps the body read from one scrape. Real vLLM pages are
// 30–300 KB; anything near this is not a metrics page.
const DefaultMaxBody = 16 << 20

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
}

// Client fetches /metrics pages. One Client (and one http.Transport) serves
// every target. Safe for concurrent use.
type Client struct {
	http    *http.Client
	auth    string // "Bearer …" or ""
	headers http.Header
	maxBody int64
}

// Error is a failed scrape: the target and the problem, short and clear.
// It never carries credentials.
type Error struct {
	Target  string
	Problem string
}

// Error returns "target: problem".
func (e *Error) Error() string { return e.Target + ": " + e.Problem }

var errRedirectLoop = fmt.Errorf("redirect loop (more than %d redirects)", maxRedirects)

// NewClient builds the shared client. Errors name the option at fault.
func NewClient(opts ClientOptions) (*Client, error) {
	c := &Client{maxBody: opts.MaxBody, headers: http.Header{}}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	// Verification is skipped only on explicit request (--insecure).
	tlsConfig := &tls.Config{InsecureSkipVerify: opts.Insecure}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate found", opts.CAFile)
		}
		tlsConfig.RootCAs = pool
	}
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
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") {
			// do not echo the header: its value may be a secret
			return nil, errors.New(`header must be "Key: Value"`)
		}
		c.headers.Add(k, strings.TrimSpace(v))
	}
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
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: c.checkRedirect}
	return c, nil
}

// checkRedirect caps redirects and keeps Authorization and the extra
// headers from leaking to another host.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errRedirectLoop
	}
	if req.URL.Host != via[0].URL.Host {
		req.Header.Del("Authorization")
		for k := range c.headers {
			req.Header.Del(k)
		}
	}
	return nil
}

// Fetch reads the page of t into buf (reused: pass the previous result's
// buffer back) within timeout. It returns the body and its Content-Type,
// or an *Error.
func (c *Client) Fetch(ctx context.Context, t Target, timeout time.Duration, buf []byte) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(problem string) ([]byte, string, error) {
		return buf[:0], "", &Error{Target: t.Name, Problem: problem}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return fail("invalid URL")
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Accept", acceptHeader)
	req.Header.Set("User-Agent", "vtop")
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
	body, err := readCapped(resp.Body, buf[:0], c.maxBody)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return fail("body larger than " + formatSize(c.maxBody))
		}
		return fail(describe(ctx, err, timeout))
	}
	return body, resp.Header.Get("Content-Type"), nil
}

var errTooLarge = errors.New("body too large")

// readCapped appends r to buf, stopping with errTooLarge past limit bytes.
func readCapped(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
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

// statusProblem describes a non-200 answer, with the first line of the
// body when it is short text (often the actual reason).
func statusProblem(resp *http.Response) string {
	p := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
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

// describe turns a transport error into a short problem. It never includes
// the request URL (which url.Error would).
func describe(ctx context.Context, err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, errRedirectLoop):
		return errRedirectLoop.Error()
	case errors.As(err, &dnsErr) && !dnsErr.IsTimeout:
		return "DNS lookup failed for " + safetext.Sanitize(dnsErr.Name)
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timed out after " + timeout.String()
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.As(err, &unknownCA):
		return "TLS: certificate signed by unknown authority"
	case errors.As(err, &hostErr):
		return "TLS: certificate is not valid for " + safetext.Sanitize(hostErr.Host)
	case errors.As(err, &invalid):
		return "TLS: invalid certificate (" + safetext.Sanitize(invalid.Error()) + ")"
	case errors.As(err, &recordErr):
		return "TLS: the server does not speak TLS (try http://)"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed by the server"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u // drop url.Error's "Get \"http://…\":" prefix
	}
	return safetext.Sanitize(err.Error())
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// formatSize writes a byte count the way a person reads it.
func formatSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// closeIdle closes the keep-alive connections nobody is using.
func (c *Client) closeIdle() { c.http.CloseIdleConnections() }
