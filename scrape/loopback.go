package scrape

import (
	"net"
	"strings"
)

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
