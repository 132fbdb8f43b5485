package promsource

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vtop-dev/vtop/httpclient"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/safetext"
)

// Access is how the server is reached: TLS trust and credentials.
type Access struct {
	// BearerTokenFile holds a token sent as "Authorization: Bearer …". It
	// is read again on every request, so a rotated token (a Kubernetes
	// service account's) is picked up; a failed read keeps the last token.
	BearerTokenFile string
	// BasicAuthFile holds "user:password" for HTTP basic auth, read once.
	BasicAuthFile string
	// CAFile is a PEM bundle trusted instead of the system roots.
	CAFile string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// Headers are extra request headers, each "Key: Value" (for example
	// "X-Scope-OrgID: tenant" for Mimir or Cortex).
	Headers []string
}

// errTooLarge is a response over the body cap.
var errTooLarge = errors.New("answer too large")

// transport adds the access headers to every request to the configured
// host (a redirect elsewhere goes without them: httpclient.SameHost) and caps
// the body of every response.
type transport struct {
	base    http.RoundTripper
	host    *url.URL // the configured server
	headers http.Header
	basic   [2]string // user, password; empty user: none
	token   tokenFile
	maxBody int64
	count   *atomic.Int64 // requests sent
}

// newTransport builds the round tripper of the query client. Errors name
// the option at fault and never echo a secret.
func newTransport(host *url.URL, a Access, maxBody int64, count *atomic.Int64) (*transport, error) {
	tlsConfig, err := httpclient.TLSConfig(a.CAFile, a.Insecure)
	if err != nil {
		return nil, err
	}
	t := &transport{host: host, headers: http.Header{}, maxBody: maxBody, count: count}
	for _, line := range a.Headers {
		k, v, err := httperr.ParseHeader(line)
		if err != nil {
			return nil, fmt.Errorf("header %w", err)
		}
		t.headers.Add(k, v)
	}
	if a.BasicAuthFile != "" {
		user, pass, err := readBasicAuth(a.BasicAuthFile)
		if err != nil {
			return nil, err
		}
		t.basic = [2]string{user, pass}
	}
	t.addSecrets()
	if a.BearerTokenFile != "" {
		t.token.path = a.BearerTokenFile
		if _, err := t.token.read(); err != nil {
			return nil, err
		}
	}
	t.base = &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return t, nil
}

// readBasicAuth reads "user:password" from a file.
func readBasicAuth(path string) (user, pass string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("basic auth file: %w", err)
	}
	user, pass, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	if !ok || user == "" {
		return "", "", fmt.Errorf("basic auth file %s: want one line user:password", path)
	}
	return user, pass, nil
}

// tokenFile is a bearer token re-read on every request.
type tokenFile struct {
	path string
	mu   sync.Mutex
	last string
}

// read returns the file's token, or the last good one when the file
// cannot be read now.
func (f *tokenFile) read() (string, error) {
	b, err := os.ReadFile(f.path)
	tok := strings.TrimSpace(string(b))
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err != nil && f.last == "":
		return "", fmt.Errorf("bearer token file: %w", err)
	case err == nil && tok == "" && f.last == "":
		return "", fmt.Errorf("bearer token file %s is empty", f.path)
	case err == nil && tok != "" && tok != f.last:
		safetext.AddSecrets(tok) // before it is first sent
		f.last = tok
	}
	return f.last, nil
}

// RoundTrip sends req, with the access headers when it goes to the
// configured host, and caps the answer.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", "vtop")
	httpclient.IdentityOnLoopback(req) // compressing costs Prometheus more than sending
	if httpclient.SameHost(t.host, req.URL) {
		if err := t.addAccess(req); err != nil {
			return nil, err
		}
	}
	t.count.Add(1)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{r: resp.Body, left: t.maxBody}
	return resp, nil
}

// addSecrets makes what the transport sends secrets of vtop's
// (safetext.AddSecrets), so that no text of a server's shows them: the
// configured header values, the basic auth password (of the file, or of
// the URL's user:password@) and the header it makes. The bearer token is
// added by the token file as each new one is read.
func (t *transport) addSecrets() {
	var values []string
	for _, v := range t.headers {
		values = append(values, v...)
	}
	basic := func(user, pass string) {
		values = append(values, pass, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	if t.basic[0] != "" {
		basic(t.basic[0], t.basic[1])
	}
	if pass, ok := t.host.User.Password(); ok {
		basic(t.host.User.Username(), pass)
	}
	safetext.AddSecrets(values...)
}

// addAccess adds the configured headers and credentials to req.
func (t *transport) addAccess(req *http.Request) error {
	for k, v := range t.headers {
		req.Header[k] = v
	}
	if t.basic[0] != "" {
		req.SetBasicAuth(t.basic[0], t.basic[1])
	}
	if t.token.path != "" {
		tok, err := t.token.read()
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// cappedBody fails with errTooLarge past its limit instead of letting a
// huge answer fill memory.
type cappedBody struct {
	r    io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left <= 0 && err == nil {
		// One more byte tells a body of exactly the limit from a longer one.
		var one [1]byte
		if m, _ := c.r.Read(one[:]); m > 0 {
			return n, errTooLarge
		}
		return n, io.EOF
	}
	return n, err
}

func (c *cappedBody) Close() error { return c.r.Close() }

// HTTPClient is a client of another server of the monitoring stack (an
// Alertmanager) reached as a Prometheus server is: the TLS trust and
// credentials of a, sent only to host's scheme, host and port (not on a
// redirect elsewhere), answers capped at maxBody. What it sends is a
// secret of vtop's (safetext.AddSecrets): no answer's text shows it.
// Errors name the option at fault and never echo a secret.
func HTTPClient(host *url.URL, a Access, maxBody int64) (*http.Client, error) {
	t, err := newTransport(host, a, maxBody, new(atomic.Int64))
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: t}, nil
}
