// Package scrape is the direct source of readings: targets, the HTTP client
// (timeouts, gzip, body cap, auth, TLS), and the poller that scrapes every
// target on its own schedule, turns each page into a sample with the page
// parser and keeps it in the target's own window. A Poller is a
// monitor.Source. It knows nothing of the analysis or the screen.
package scrape

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/vtop-dev/vtop/safetext"
)

// DefaultTargetURL is scraped when no target is given: vLLM's default port
// on the local host.
const DefaultTargetURL = "http://localhost:8000/metrics"

// defaultPort is added to a bare host name given without scheme or port,
// because that is where vLLM listens unless told otherwise.
const defaultPort = "8000"

// Target is one /metrics endpoint.
type Target struct {
	// URL is the full address scraped, e.g. "http://gpu-a:8000/metrics".
	URL string
	// Name is what the screen shows: host:port, plus the path when it is
	// not /metrics (and the query, if any). Safe to draw: it is cleaned
	// here, where it enters.
	Name string
}

// DefaultTarget returns the target scraped when none is given.
func DefaultTarget() Target {
	t, err := ParseTarget(DefaultTargetURL)
	if err != nil {
		panic(err) // a constant that does not parse is a programming error
	}
	return t
}

// errCredentials is returned for user:pass@ in a target: the URL would end
// up in the process list, the shell history and the screen.
var errCredentials = errors.New("credentials in the URL are not allowed; use a bearer token file or a header instead")

// ParseTarget reads "host:port", "host" (port 8000) or
// "http(s)://host[:port][/path]". The scheme defaults to http and the path
// to /metrics.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, errors.New("empty target")
	}
	raw, err := withScheme(s)
	if err != nil {
		return Target{}, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url errors quote the input; it has no credentials here but may
		// have control characters.
		return Target{}, fmt.Errorf("invalid target %q", safetext.Sanitize(s))
	}
	if err := checkURL(u); err != nil {
		if err == errCredentials {
			return Target{}, err
		}
		return Target{}, fmt.Errorf("invalid target %q: %w", safetext.Sanitize(s), err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	u.Fragment = ""
	name := u.Host
	if u.Path != "/metrics" {
		name += u.Path
	}
	if u.RawQuery != "" {
		name += "?" + u.RawQuery
	}
	return Target{URL: u.String(), Name: safetext.Sanitize(name)}, nil
}

// withScheme writes a target given without a scheme ("host:port", "host",
// either with a path) as an http URL, on port 8000 when it names none; a
// target with a scheme is returned as it is.
func withScheme(s string) (string, error) {
	if strings.Contains(s, "://") {
		return s, nil
	}
	if strings.Contains(s, "@") {
		return "", errCredentials
	}
	host := s
	path := ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		host, path = s[:i], s[i:]
	}
	if _, port, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), defaultPort)
	} else if err := checkPort(port); err != nil {
		return "", fmt.Errorf("invalid target %q: %w", safetext.Sanitize(s), err)
	}
	return "http://" + host + path, nil
}

// checkURL refuses a target URL with credentials (errCredentials), another
// scheme than http or https, no host, or a port no connection can be made
// to.
func checkURL(u *url.URL) error {
	if u.User != nil {
		return errCredentials
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("scheme must be http or https")
	}
	if u.Hostname() == "" {
		return errors.New("no host")
	}
	if port := u.Port(); port != "" {
		return checkPort(port)
	}
	return nil
}

// checkPort refuses a port no connection can be made to: 99999 was
// accepted, and every scrape then failed ("invalid port") where a usage
// error was due.
func checkPort(port string) error {
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s is not 1–65535", quoteUnlessNumber(port))
	}
	return nil
}

// quoteUnlessNumber writes a port as typed: a number bare, anything else
// quoted and made safe.
func quoteUnlessNumber(s string) string {
	if _, err := strconv.Atoi(s); err == nil {
		return s
	}
	return strconv.Quote(safetext.Sanitize(s))
}

// DCGMLinePrefix begins the lines that name a dcgm-exporter in what `vtop
// sim --dcgm` prints ("dcgm URL"), which a targets file refuses.
const DCGMLinePrefix = "dcgm "

// ReadTargetsFile reads one target per line. Blank lines and lines starting
// with # are skipped; text after " #" is a comment. Errors name the file and
// the line.
//
// A line "dcgm URL", as `vtop sim --dcgm` prints its GPU pages, is refused
// with what to do instead: a targets file lists inference servers, and a
// dcgm-exporter read as one would only show as a replica with no engine.
func ReadTargetsFile(path string) ([]Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var targets []Target
	sc := bufio.NewScanner(f)
	n := 1
	for ; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if exporter, ok := strings.CutPrefix(line, DCGMLinePrefix); ok {
			return nil, fmt.Errorf("%s:%d: %q is a dcgm-exporter, not an inference server: read its GPUs with --dcgm %s",
				path, n, safetext.Sanitize(line), safetext.Sanitize(strings.TrimSpace(exporter)))
		}
		t, err := ParseTarget(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		targets = append(targets, t)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		// A NUL-filled file or /dev/zero is one endless line.
		return nil, fmt.Errorf("%s:%d: a line over %d KiB: one target per line", path, n, bufio.MaxScanTokenSize>>10)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return targets, nil
}
