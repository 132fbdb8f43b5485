package httperr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

// closedPortError is the error of dialing a port nobody listens on.
func closedPortError(t *testing.T) error {
	t.Helper()
	addr := testutil.ClosedPort(t)
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Fatalf("dialing the closed port %s succeeded", addr)
	}
	return err
}

// deadlineError is the error of a request whose context ran out.
func deadlineError(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("a request with an expired context succeeded")
	}
	return err
}

// clientTimeoutError is an *url.Error wrapping the timeout of an
// http.Client whose server accepts the connection and never answers.
func clientTimeoutError(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, unanswered, until the test ends
		}
	}()
	client := &http.Client{Timeout: 50 * time.Millisecond}
	_, err = client.Get("http://" + l.Addr().String() + "/metrics?token=secret")
	if err == nil {
		t.Fatal("a server that never answers answered")
	}
	return err
}

func TestDescribe(t *testing.T) {
	refused := closedPortError(t)
	if !errors.As(refused, new(*net.OpError)) {
		t.Fatalf("dialing a closed port: %T, want a *net.OpError", refused)
	}
	clientTimeout := clientTimeoutError(t)
	if !errors.As(clientTimeout, new(*url.Error)) || !IsTimeout(clientTimeout) {
		t.Fatalf("client timeout: %T %v, want an *url.Error that is a timeout", clientTimeout, clientTimeout)
	}
	wrapped := func(u string, err error) error { return &url.Error{Op: "Get", URL: u, Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"dial to a closed port", refused, "connection refused"},
		{"closed port through the client", wrapped("http://127.0.0.1:1/metrics", refused), "connection refused"},
		{"context deadline", context.DeadlineExceeded, "no answer within 2s"},
		{"request whose context ran out", deadlineError(t), "no answer within 2s"},
		{"client timeout in an url.Error", clientTimeout, "no answer within 2s"},
		{"DNS timeout is a timeout", &net.DNSError{Name: "gpu-a", Err: "i/o timeout", IsTimeout: true}, "no answer within 2s"},
		{"DNS", &net.DNSError{Name: "gpu-x", Err: "no such host", IsNotFound: true}, "DNS lookup failed for gpu-x"},
		{"DNS name from a server is cleaned", &net.DNSError{Name: "gpu-x\x1b[2J", Err: "no such host"}, "DNS lookup failed for gpu-x"},
		{"canceled", context.Canceled, "canceled"},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection reset by the server"},
		{"no route", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)},
			"no route to host (host down, or a firewall rejects the connection)"},
		{"network unreachable", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)},
			"network unreachable (no route from this machine: VPN down, or wrong address)"},
		{"HTTPS to a plain HTTP server", wrapped("https://gpu-a:8000/metrics", http.ErrSchemeMismatch),
			"server speaks plain HTTP, not HTTPS: use http://gpu-a:8000"},
		{"not TLS", wrapped("https://gpu-a:8000/metrics", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}),
			"TLS: the server does not speak TLS (is this an HTTPS port?)"},
		{"unknown CA", wrapped("https://gpu-a/metrics", x509.UnknownAuthorityError{}),
			"TLS: certificate signed by unknown authority (trust its CA with --ca-file)"},
		{"wrong host", x509.HostnameError{Host: "10.0.0.7", Certificate: &x509.Certificate{DNSNames: []string{"a", "b", "c", "d"}}},
			"TLS: certificate is for a, b, c and 1 more, not 10.0.0.7 (connect by a name it holds)"},
		{"no names", x509.HostnameError{Host: "gpu-a", Certificate: &x509.Certificate{}},
			"TLS: certificate names no host (its Common Name is not checked), so not gpu-a"},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired, Cert: &x509.Certificate{
			NotBefore: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}},
			"TLS: certificate expired or not yet valid (valid from 2024-01-01 to 2025-01-01)"},
		{"closed without an answer over HTTP", wrapped("http://gpu-a:8000/metrics", io.EOF),
			"connection closed by the server without an answer (if it serves HTTPS: use https://gpu-a:8000)"},
		{"closed over HTTPS", wrapped("https://gpu-a:8000/metrics", io.EOF), "connection closed by the server"},
		{"cut short", io.ErrUnexpectedEOF, "connection closed by the server"},
		{"other: the URL and its query are dropped", wrapped("http://gpu-a/metrics?token=secret", errors.New("weird \x07failure")), "weird failure"},
		{"other, wrapped", fmt.Errorf("read: %w", errors.New("odd")), "odd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.err, 2*time.Second); got != tt.want {
				t.Errorf("Describe(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{http.StatusServiceUnavailable, "HTTP 503 Service Unavailable"},
		{http.StatusNotFound, "HTTP 404 Not Found"},
		{http.StatusUnauthorized, "HTTP 401 Unauthorized"},
		{599, "HTTP 599"},
	}
	for _, tt := range tests {
		if got := Status(tt.code); got != tt.want {
			t.Errorf("Status(%d) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestIsTimeout(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", context.DeadlineExceeded, true},
		{"os deadline", os.ErrDeadlineExceeded, true},
		{"wrapped", &url.Error{Op: "Get", URL: "http://a", Err: os.ErrDeadlineExceeded}, true},
		{"refused", closedPortError(t), false},
		{"canceled", context.Canceled, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := IsTimeout(tt.err); got != tt.want {
			t.Errorf("%s: IsTimeout(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// The advice to switch scheme keeps the port the old scheme implied.
func TestWithScheme(t *testing.T) {
	tests := []struct {
		from, scheme, want string
	}{
		{"http://gpu-a:8000/metrics", "https", "https://gpu-a:8000"},
		{"https://vllm.example.com/metrics", "http", "http://vllm.example.com:443"},
		{"http://vllm.example.com/metrics?token=x", "https", "https://vllm.example.com:80"},
		{"http://[::1]:8000/metrics", "https", "https://[::1]:8000"},
		{"", "https", "https://"},
	}
	for _, tt := range tests {
		var u *url.URL
		if tt.from != "" {
			u, _ = url.Parse(tt.from)
		}
		if got := WithScheme(u, tt.scheme); got != tt.want {
			t.Errorf("WithScheme(%q, %q) = %q, want %q", tt.from, tt.scheme, got, tt.want)
		}
	}
}

// TestDescribeCertificates: what a real verifier rarely produces on
// loopback, a certificate with many names, hostile names, or none.
func TestDescribeCertificates(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"many names are cut after three", x509.HostnameError{Host: "10.0.0.7", Certificate: &x509.Certificate{
			DNSNames: []string{"a.example", "b.example", "c.example", "d.example"}, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 8)}}},
			"TLS: certificate is for a.example, b.example, c.example and 2 more, not 10.0.0.7 (connect by a name it holds)"},
		{"names from the server are cleaned", x509.HostnameError{Host: "gpu-a", Certificate: &x509.Certificate{
			DNSNames: []string{"evil\x1b[2J.example"}}},
			"TLS: certificate is for evil.example, not gpu-a (connect by a name it holds)"},
		{"only a Common Name", x509.HostnameError{Host: "gpu-a", Certificate: &x509.Certificate{Subject: pkix.Name{CommonName: "gpu-a"}}},
			"TLS: certificate names no host (its Common Name is not checked), so not gpu-a"},
		{"another reason", x509.CertificateInvalidError{Reason: x509.NotAuthorizedToSign, Cert: &x509.Certificate{}},
			"TLS: invalid certificate (x509: certificate is not authorized to sign other certificates)"},
	}
	for _, tt := range tests {
		err := &url.Error{Op: "Get", URL: "https://gpu-a:8000/metrics", Err: &tls.CertificateVerificationError{Err: tt.err}}
		got := Describe(err, time.Second)
		if got != tt.want {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, got, tt.want)
		}
		if !safetext.IsSafe(got) {
			t.Errorf("%s: not safe to draw: %q", tt.name, got)
		}
	}
}

// IsNoAnswer tells NoAnswer's words, whatever the timeout, from the other
// problems.
func TestIsNoAnswer(t *testing.T) {
	tests := []struct {
		problem string
		want    bool
	}{
		{NoAnswer(800 * time.Millisecond), true},
		{NoAnswer(10 * time.Second), true},
		{"connection refused", false},
		{Status(503), false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsNoAnswer(tt.problem); got != tt.want {
			t.Errorf("IsNoAnswer(%q) = %v, want %v", tt.problem, got, tt.want)
		}
	}
}
