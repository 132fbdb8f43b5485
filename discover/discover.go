// Package discover finds the inference servers of this host when vtop is
// given no target: the listening TCP sockets of /proc/net/tcp and tcp6,
// the processes that hold them (/proc/PID/fd), the engine their command
// line names, then a fetch of each candidate's metrics page to confirm
// it carries that engine's families. Scan mode probes every listening
// port instead. Without /proc it falls back to vLLM's default port.
package discover

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
)

// Options configure a discovery. Zero values take defaults.
type Options struct {
	// Proc is the /proc file system (default the system's); tests give
	// their own.
	Proc fs.FS
	// Scan probes every listening port instead of the engine processes'.
	Scan bool
	// Timeout bounds one probe (default 1 s).
	Timeout time.Duration
	// Concurrency bounds the probes in flight (default 8).
	Concurrency int
	// Default is the address probed when nothing else is found (default
	// vLLM's, localhost:8000): a server in a container shows on the host
	// as its proxy's socket, not as an engine's process.
	Default string

	client *http.Client // fetches the pages, within Timeout
}

func (o *Options) defaults() {
	if o.Proc == nil {
		o.Proc = os.DirFS("/proc")
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	o.client = &http.Client{Timeout: o.Timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Default == "" {
		o.Default = scrape.DefaultTarget().Name
	}
}

// Server is one inference server found on this host.
type Server struct {
	// Engine is the engine's name ("vLLM").
	Engine string
	// Target is what to scrape, as scrape.ParseTarget reads it:
	// "127.0.0.1:8000" or "127.0.0.1:8000/prometheus/metrics".
	Target string
	// PID is the process listening (the server's, whose descendants are
	// its engine cores and workers); 0 when it could not be attributed.
	PID int
	// Port is the port the server listens on.
	Port int
	// Command is the process's command line, safe to draw; "" when unknown.
	Command string
	// Probed is true when the page was fetched; Up when it carried the
	// engine's families. Problem says why a probed server is not Up.
	Probed, Up bool
	Problem    string
	// Hint says how to start a server that is not Up so that it serves
	// its metrics; the summary carries it, since the scrape's own error
	// (a 404) cannot know it.
	Hint string
}

// Result is what a discovery found and how.
type Result struct {
	// Servers found, by port.
	Servers []Server
	// Summary says what was found, or what was looked for when nothing
	// was ("3 vLLM servers found on this host").
	Summary string
	// Denied counts processes whose sockets could not be attributed
	// (another user's, when vtop is not root); they were skipped.
	Denied int
	// Fallback is true when the system has no /proc: Servers is then the
	// default target, unprobed.
	Fallback bool
}

// Find discovers the inference servers of this host.
func Find(ctx context.Context, o Options) Result {
	o.defaults()
	socks, err := listeningSockets(o.Proc)
	if err != nil {
		return fallback()
	}
	wanted := map[uint64]bool{}
	for _, s := range socks {
		wanted[s.inode] = true
	}
	own := socketOwners(o.Proc, wanted)
	var cands []candidate
	if o.Scan {
		cands = scanCandidates(o.Proc, socks, own)
	} else {
		cands = processCandidates(o.Proc, socks, own)
	}
	servers := probeAll(ctx, o, cands)
	res := Result{Servers: servers, Denied: own.denied, Summary: summary(servers, o.Scan, len(socks), own.denied)}
	if len(servers) == 0 {
		// Nothing found by process or scan: a server may still answer at
		// the default address (in a container, behind a proxy process).
		if s := probe(ctx, o, candidate{engines: catalogue.EngineSignatures, addrs: []string{o.Default}}); s != nil && s.Up {
			res.Servers = []Server{*s}
			res.Summary = fmt.Sprintf("no inference server process found on this host; %s answers at %s", s.Engine, s.Target)
		}
	}
	return res
}

func fallback() Result {
	t := scrape.DefaultTarget()
	return Result{
		Servers:  []Server{{Engine: "vLLM", Target: t.Name}},
		Summary:  "no /proc on this system to find servers by: watching " + t.Name + ", vLLM's default port",
		Fallback: true,
	}
}

// candidate is a server to probe: its addresses, most likely first, and
// the engines it may be.
type candidate struct {
	engines []catalogue.EngineSignature
	addrs   []string // host:port
	pid     int
	command string
}

// processCandidates are the listening sockets of processes whose command
// line names an engine, grouped by process, the --port one first.
func processCandidates(proc fs.FS, socks []socket, own owners) []candidate {
	byPID := map[int]*candidate{}
	var order []int
	for _, s := range socks {
		pid := holder(proc, own.byInode[s.inode])
		if pid == 0 {
			continue
		}
		c := byPID[pid]
		if c == nil {
			argv := cmdline(proc, pid)
			sig, ok := signature(classify(argv))
			if !ok {
				byPID[pid] = &candidate{} // not an engine: remember, skip
				continue
			}
			c = &candidate{engines: []catalogue.EngineSignature{sig}, pid: pid, command: commandText(argv)}
			c.addrs = append(c.addrs, hintAddr(argv, sig))
			byPID[pid] = c
			order = append(order, pid)
		}
		if c.engines != nil {
			c.addrs = appendNew(c.addrs, dialAddr(s))
		}
	}
	out := make([]candidate, 0, len(order))
	for _, pid := range order {
		c := byPID[pid]
		c.addrs = keepListening(c.addrs, socks)
		out = append(out, *c)
	}
	return out
}

// scanCandidates are every listening port, each probed for every engine.
func scanCandidates(proc fs.FS, socks []socket, own owners) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, s := range socks {
		a := dialAddr(s)
		if seen[a] {
			continue
		}
		seen[a] = true
		c := candidate{engines: catalogue.EngineSignatures, addrs: []string{a}}
		if pid := holder(proc, own.byInode[s.inode]); pid != 0 {
			c.pid, c.command = pid, commandText(cmdline(proc, pid))
		}
		out = append(out, c)
	}
	return out
}

// holder picks the process that owns a socket several processes hold
// (API servers forked from one parent share it): the one whose parent does
// not hold it too.
func holder(proc fs.FS, pids []int) int {
	for _, p := range pids {
		pp, _ := parentOf(proc, p)
		if !slices.Contains(pids, pp) {
			return p
		}
	}
	if len(pids) > 0 {
		return pids[0]
	}
	return 0
}

// hintAddr is where the command line says the server listens.
func hintAddr(argv []string, sig catalogue.EngineSignature) string {
	p := portFlag(argv)
	if p == 0 {
		p = sig.DefaultPort
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}

// keepListening drops the hint when no socket of the host listens there
// (an engine that ignored its flag) unless nothing else is left.
func keepListening(addrs []string, socks []socket) []string {
	if len(addrs) < 2 {
		return addrs
	}
	_, port, _ := net.SplitHostPort(addrs[0])
	for _, s := range socks {
		if strconv.Itoa(s.port) == port {
			return addrs
		}
	}
	return addrs[1:]
}

// dialAddr is how to reach a listening socket from this host: loopback
// for the wildcard and loopback addresses, the address itself otherwise.
func dialAddr(s socket) string {
	host := s.ip.String()
	if v4 := s.ip.To4(); v4 != nil { // tcp, or an IPv4-mapped tcp6 address
		host = v4.String()
		if v4.Equal(net.IPv4zero) || v4.IsLoopback() {
			host = "127.0.0.1"
		}
	} else if s.ip.Equal(net.IPv6unspecified) {
		host = "::1"
	}
	return net.JoinHostPort(host, strconv.Itoa(s.port))
}

func appendNew(list []string, a string) []string {
	// the hint says 127.0.0.1; a wildcard socket on ::1 of the same port
	// is the same server
	_, port, _ := net.SplitHostPort(a)
	for _, x := range list {
		if _, p, _ := net.SplitHostPort(x); p == port {
			return list
		}
	}
	return append(list, a)
}

// commandText is a command line cleaned for the screen.
func commandText(argv []string) string {
	return safetext.Sanitize(strings.Join(argv, " "))
}

// summary says what was found, or what was looked for.
func summary(servers []Server, scan bool, sockets, denied int) string {
	counts := map[string]int{}
	var engines []string
	for _, s := range servers {
		if counts[s.Engine] == 0 {
			engines = append(engines, s.Engine)
		}
		counts[s.Engine]++
	}
	var b strings.Builder
	switch len(servers) {
	case 0:
		how := "processes of vLLM, SGLang, TensorRT-LLM, TGI or llama.cpp"
		if scan {
			how = "metrics pages"
		}
		fmt.Fprintf(&b, "no inference server found on this host (looked for %s among %d listening sockets)", how, sockets)
	default:
		parts := make([]string, len(engines))
		for i, e := range engines {
			parts[i] = plural(counts[e], e+" server")
		}
		fmt.Fprintf(&b, "%s found on this host", strings.Join(parts, ", "))
	}
	for _, s := range servers {
		if s.Hint != "" {
			fmt.Fprintf(&b, "; %s: %s", s.Target, s.Hint)
		}
	}
	if denied > 0 && !scan {
		fmt.Fprintf(&b, "; %s of other users skipped (run as root or use --scan)", plural(denied, "process"))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return strconv.Itoa(n) + " " + what + "es"
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// probeAll probes the candidates, Concurrency at a time.
func probeAll(ctx context.Context, o Options, cands []candidate) []Server {
	results := make([]*Server, len(cands))
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	for i, c := range cands {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = probe(ctx, o, c)
		})
	}
	wg.Wait()
	var out []Server
	for _, s := range results {
		if s != nil {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b Server) int { return cmp.Or(cmp.Compare(a.Port, b.Port), strings.Compare(a.Target, b.Target)) })
	return out
}
