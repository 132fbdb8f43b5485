// Package httpclient holds the rules every HTTP client of vtop follows,
// the scraper's and the Prometheus source's alike: whose certificates it
// trusts (TLSConfig), when it asks a server not to compress (Loopback),
// and where its credentials may go (SameHost). It is a leaf beside
// httperr: it imports only the standard library, so a source uses it
// without importing another source.
package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// TLSConfig is the TLS of vtop's clients (the scraper's, a Prometheus
// server's): the system roots, or the PEM bundle in caFile; verification
// skipped only on explicit request (--insecure). Errors name the option.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	config := &tls.Config{InsecureSkipVerify: insecure}
	if caFile == "" {
		return config, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate found", caFile)
	}
	config.RootCAs = pool
	return config, nil
}

// Loopback reports whether host (a URL's host name, without a port) is
// this machine's loopback: "localhost" or an address of 127.0.0.0/8 or
// ::1. vtop's clients ask such a server not to compress: on a local link
// compressing costs the server and vtop more CPU than the bytes it saves
// (a Prometheus answer of 29 MB gzips to 1.5 MB, for about a third more of
// the server's time), while off the machine the bytes are what counts.
// Names are not resolved: a name other than localhost counts as remote.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IdentityOnLoopback asks a server on this machine (Loopback) not to
// compress its answer, where Go's transport would ask for gzip; an
// Accept-Encoding the request already carries is kept.
func IdentityOnLoopback(req *http.Request) {
	if Loopback(req.URL.Hostname()) && req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
}

// SameHost reports whether a request to dest may carry the credentials
// and configured headers meant for configured: only when both name the
// same host and port (the scheme's default port when none is written;
// names compared without case). Every client of vtop follows redirects
// by this one rule: to another host, or another port of it, a redirect
// is followed without the bearer token, the basic auth or the --header
// values, as Go's client does for Authorization.
func SameHost(configured, dest *url.URL) bool {
	return strings.EqualFold(configured.Hostname(), dest.Hostname()) && port(configured) == port(dest)
}

// port is the port of u, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
