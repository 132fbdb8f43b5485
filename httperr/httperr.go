// Package httperr words a failed HTTP request the same way for every
// source that makes one (the scraper, the Prometheus source, discovery):
// the same failure reads the same wherever it is shown. It is a leaf: it
// imports only the standard library and safetext, so any package may use
// it without adding an edge between vtop's layers.
//
// The words never include the request URL (url.Error's would, with its
// query and credentials): each caller adds its own prefix (a target, a
// server's URL) in front.
package httperr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/vtop-dev/vtop/safetext"
)

// IsTimeout reports whether err is a network timeout (a net.Error whose
// Timeout method says so, anywhere in its chain).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// NoAnswer is the words for a request that got no answer within timeout.
func NoAnswer(timeout time.Duration) string {
	return noAnswerPrefix + timeout.String()
}

// IsNoAnswer reports whether problem is NoAnswer's words, whatever the
// timeout: a source that keeps only the words (a recording) tells a late
// answer from an outage by them.
func IsNoAnswer(problem string) bool {
	return strings.HasPrefix(problem, noAnswerPrefix)
}

// noAnswerPrefix starts NoAnswer's words.
const noAnswerPrefix = "no answer within "

// Status is the words for an HTTP status code: "HTTP 503 Service
// Unavailable".
func Status(code int) string {
	if text := http.StatusText(code); text != "" {
		return fmt.Sprintf("HTTP %d %s", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// Describe turns the error of a request that got no HTTP answer into a
// short problem an on-call engineer can act on: a timeout (of the request,
// whose limit was timeout), a refused or reset connection, a name that does
// not resolve, a TLS failure, a server that closed without answering. The
// result is safe to draw; advice names only the scheme and the host.
func Describe(err error, timeout time.Duration) string {
	failed := failedURL(err)
	if problem, ok := connectionProblem(err, timeout); ok {
		return problem
	}
	if problem, ok := tlsProblem(err, failed); ok {
		return problem
	}
	switch {
	case errors.Is(err, io.EOF) && failed != nil && failed.Scheme == "http":
		// Also what plain HTTP to a TLS port looks like when the server does
		// not answer it with a 400: a Python asyncio TLS server (what
		// vLLM's uvicorn runs on with --ssl-keyfile) just closes.
		return "connection closed by the server without an answer (if it serves HTTPS: use " + WithScheme(failed, "https") + ")"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed by the server"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u // drop url.Error's "Get \"http://…\":" prefix
	}
	return safetext.Sanitize(err.Error())
}

// connectionProblem describes a request that reached no server, or that
// timed out or was canceled; ok is false for another failure.
func connectionProblem(err error, timeout time.Duration) (problem string, ok bool) {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && !dnsErr.IsTimeout:
		return "DNS lookup failed for " + safetext.Sanitize(dnsErr.Name), true
	case errors.Is(err, context.DeadlineExceeded), IsTimeout(err):
		return NoAnswer(timeout), true
	case errors.Is(err, context.Canceled):
		return "canceled", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server", true
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host (host down, or a firewall rejects the connection)", true
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable (no route from this machine: VPN down, or wrong address)", true
	}
	return "", false
}

// tlsProblem describes a request whose TLS failed, or that asked HTTPS of
// a plain HTTP server (failed is its URL); ok is false for another failure.
func tlsProblem(err error, failed *url.URL) (problem string, ok bool) {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, http.ErrSchemeMismatch):
		return "server speaks plain HTTP, not HTTPS: use " + WithScheme(failed, "http"), true
	case errors.As(err, &recordErr):
		return "TLS: the server does not speak TLS (is this an HTTPS port?)", true
	case errors.As(err, &unknownCA):
		return "TLS: certificate signed by unknown authority (trust its CA with --ca-file)", true
	case errors.As(err, &hostErr):
		return hostnameProblem(hostErr), true
	case errors.As(err, &invalid):
		return invalidCertificateProblem(invalid), true
	}
	return "", false
}

// failedURL is the URL of the request that failed (the last redirect's,
// when there were any); nil when err does not carry one.
func failedURL(err error) *url.URL {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return nil
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return nil
	}
	return u
}

// WithScheme writes the address of u with the other scheme, keeping the
// port the old scheme implied: https://gpu-a:8000, http://vllm.example.com:443.
func WithScheme(u *url.URL, scheme string) string {
	if u == nil || u.Host == "" {
		return scheme + "://"
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	return scheme + "://" + safetext.Sanitize(host)
}

// maxCertNames is how many of a certificate's names a problem lists.
const maxCertNames = 3

// hostnameProblem says which names the certificate holds and which one was
// asked for: the fix is to connect by one of them.
func hostnameProblem(e x509.HostnameError) string {
	asked := safetext.Sanitize(e.Host)
	var names []string
	if e.Certificate != nil {
		names = append(names, e.Certificate.DNSNames...)
		for _, ip := range e.Certificate.IPAddresses {
			names = append(names, ip.String())
		}
	}
	if len(names) == 0 {
		return "TLS: certificate names no host (its Common Name is not checked), so not " + asked
	}
	listed := strings.Join(names[:min(len(names), maxCertNames)], ", ")
	if more := len(names) - maxCertNames; more > 0 {
		listed += fmt.Sprintf(" and %d more", more)
	}
	return "TLS: certificate is for " + safetext.Sanitize(listed) + ", not " + asked + " (connect by a name it holds)"
}

// invalidCertificateProblem describes a certificate the verifier refused
// for a reason other than its authority or its names.
func invalidCertificateProblem(e x509.CertificateInvalidError) string {
	if e.Reason == x509.Expired && e.Cert != nil {
		// x509 gives one reason for expired and for not yet valid: the
		// validity dates tell the two apart.
		return fmt.Sprintf("TLS: certificate expired or not yet valid (valid from %s to %s)",
			e.Cert.NotBefore.UTC().Format(time.DateOnly), e.Cert.NotAfter.UTC().Format(time.DateOnly))
	}
	return "TLS: invalid certificate (" + safetext.Sanitize(e.Error()) + ")"
}

// ErrHeaderForm is ParseHeader's error for a line that is not "Key:
// Value"; it does not hold the line, whose value may be a secret.
var ErrHeaderForm = errors.New(`must be "Key: Value"`)

// ParseHeader reads a request header given as "Key: Value", the one rule
// for every flag that adds one (--header, --alertmanager-header): a key
// of token characters, a value without control characters but tab (a CR
// or LF would end the header early, and Go's client refuses the request:
// every scrape failed). The error names the key, never the value.
func ParseHeader(line string) (key, value string, err error) {
	k, v, ok := strings.Cut(line, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.IndexFunc(k, notTokenChar) >= 0 {
		return "", "", ErrHeaderForm
	}
	v = strings.TrimSpace(v)
	if strings.IndexFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
		return "", "", fmt.Errorf("%q: its value holds a control character (CR, LF, NUL…), which no HTTP request carries", k)
	}
	return k, v, nil
}

// notTokenChar reports whether r may not be in a header's name (RFC 9110's
// token).
func notTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
