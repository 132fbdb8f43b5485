package scrape

import (
	"net/url"
	"strings"
)

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
