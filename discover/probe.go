package discover

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/httperr"
)

// maxProbeBody caps the page read from a probe: real pages are well under.
const maxProbeBody = 8 << 20

// probe fetches a candidate's pages until one carries an engine's
// families. A candidate found by its process is listed DOWN with the first
// problem when none does; a scanned port is not listed.
func probe(ctx context.Context, o Options, c candidate) *Server {
	var first *Server
	for _, addr := range c.addrs {
		for _, path := range paths(c.engines) {
			engine, problem := fetch(ctx, o, addr, path, c.engines)
			s := server(c, addr, path, engine)
			if engine != "" {
				s.Probed, s.Up = true, true
				return s
			}
			if first == nil {
				s.Probed, s.Problem = true, problem
				first = s
			}
		}
	}
	if first == nil || c.pid == 0 || len(c.engines) != 1 {
		return nil
	}
	if first.Hint = metricsHint(c); first.Hint != "" {
		first.Problem += " (" + first.Hint + ")"
	}
	return first
}

// server describes a candidate at one address and path.
func server(c candidate, addr, path, engine string) *Server {
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	target := addr
	if path != "/metrics" {
		target += path
	}
	if engine == "" {
		engine = c.engines[0].Engine
	}
	return &Server{Engine: engine, Target: target, Port: p, PID: c.pid, Command: c.command}
}

// paths are the distinct metrics paths of the engines, in order.
func paths(sigs []catalogue.EngineSignature) []string {
	var out []string
	for _, s := range sigs {
		for _, p := range s.Paths {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// fetch gets one page and names the engine whose families it carries, or
// says what is wrong with it.
func fetch(ctx context.Context, o Options, addr, path string, sigs []catalogue.EngineSignature) (engine, problem string) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	url := "http://" + addr + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", "invalid address " + addr
	}
	req.Header.Set("User-Agent", "vtop")
	resp, err := o.client.Do(req)
	if err != nil {
		return "", "GET " + url + ": " + httperr.Describe(err, o.Timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "GET " + url + ": " + httperr.Status(resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return "", "GET " + url + ": " + httperr.Describe(err, o.Timeout)
	}
	if e := pageEngine(body, sigs); e != "" {
		return e, ""
	}
	return "", fmt.Sprintf("GET %s: the page has no %s metrics", url, sigs[0].Engine)
}

// metricsHint names the option an engine needs to serve its metrics, when
// its command line lacks it.
func metricsHint(c candidate) string {
	flag := c.engines[0].MetricsFlag
	if flag == "" || strings.Contains(c.command, flag) {
		return ""
	}
	return fmt.Sprintf("%s serves metrics only when started with %s", c.engines[0].Engine, flag)
}
