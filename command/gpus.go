package command

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/discover"
	"github.com/vtop-dev/vtop/gpu/collect"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
)

// gpuFlags choose the sources of GPU figures.
type gpuFlags struct {
	DCGM   []string `name:"dcgm" placeholder:"HOST[:PORT]" help:"Read GPUs from this dcgm-exporter (port 9400 when absent; a URL as it is). Repeatable. Without it, localhost:9400 is read when something listens there."`
	NoGPUs bool     `name:"no-gpus" help:"Read no GPU figures: neither nvidia-smi, nor a dcgm-exporter, nor the DCGM series of --prometheus."`
}

// check reads every --dcgm address without starting anything.
func (f gpuFlags) check() error {
	if f.NoGPUs && len(f.DCGM) > 0 {
		return usagef("--dcgm and --no-gpus exclude each other")
	}
	for _, a := range f.DCGM {
		if _, err := collect.ParseExporter(a); err != nil {
			return usagef("--dcgm %q: %v", a, err)
		}
	}
	return nil
}

// gpuInput reads the GPUs under the watched fleet for the monitor and
// joins them to its replicas on evidence only (device.Join). Every reader
// runs on its own; GPUs answers from their latest snapshots at once.
type gpuInput struct {
	readers []collect.Reader
	names   []string // a reader's source name, by index
	prom    *promsource.Source

	// known is what vtop knows of each target: its host, its pod (the
	// demo), its server process (local discovery).
	known     map[string]device.Replica
	localHost string

	// proc is the process table the process join walks; nil when no
	// replica has a known process.
	proc       fs.FS
	parentsMu  sync.Mutex
	parents    map[int]int
	parentsAt  time.Time
	parentsTTL time.Duration
}

// GPUs implements monitor.GPUInput.
func (in *gpuInput) GPUs(targets []string) ([]device.GPU, []analysis.GPUSource) {
	snaps := make([]collect.Snapshot, len(in.readers))
	sources := make([]analysis.GPUSource, 0, len(in.readers)+1)
	for i, r := range in.readers {
		snaps[i] = r.Snapshot()
		sources = append(sources, analysis.GPUSource{Name: in.names[i], GPUs: len(snaps[i].GPUs), Note: snaps[i].Note})
	}
	gs, _ := collect.Merge(snaps...)
	if in.prom != nil {
		pgs, note := in.prom.GPUs()
		sources = append(sources, analysis.GPUSource{Name: "Prometheus " + in.prom.Name(), GPUs: len(pgs), Note: note})
		gs = append(gs, pgs...)
	}
	replicas := make([]device.Replica, len(targets))
	anyPID := false
	for i, t := range targets {
		replicas[i] = in.replica(t)
		anyPID = anyPID || replicas[i].PID > 0
	}
	var parents map[int]int
	if anyPID && len(gs) > 0 {
		// Only a GPU to join is worth walking the process table for.
		parents = in.processTree()
	}
	device.Join(gs, replicas, parents, in.localHost)
	return gs, sources
}

// replica is what the join knows of target.
func (in *gpuInput) replica(target string) device.Replica {
	if r, ok := in.known[target]; ok {
		return r
	}
	r := device.Replica{Target: target, Host: hostOf(target)}
	if in.prom != nil && r.Host == "" {
		r.Pod = target // a Prometheus source grouped by pod
	}
	return r
}

// processTree is the parent of every process, read at most every
// parentsTTL: vLLM's workers outlive many reports.
func (in *gpuInput) processTree() map[int]int {
	if in.proc == nil {
		return nil
	}
	in.parentsMu.Lock()
	defer in.parentsMu.Unlock()
	if in.parents == nil || time.Since(in.parentsAt) > in.parentsTTL {
		in.parents, in.parentsAt = discover.Parents(in.proc), time.Now()
	}
	return in.parents
}

// settle waits until every reader has read once, or limit has passed, or
// ctx ends: a report made at once (--once on a Prometheus source) then
// has the GPUs of every exporter that answers.
func (in *gpuInput) settle(ctx context.Context, limit time.Duration) {
	if in == nil {
		return
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for _, r := range in.readers {
		if r.Snapshot().OK {
			continue
		}
		select {
		case <-r.Updates():
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// stop ends every reader and waits for it.
func (in *gpuInput) stop() {
	if in == nil {
		return
	}
	for _, r := range in.readers {
		r.Stop()
	}
}

// hostOf is the host of a target named host:port[/path] or a URL; "" for
// a name that is neither (a pod).
func hostOf(target string) string {
	s := target
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			return u.Hostname()
		}
		return ""
	}
	s, _, _ = strings.Cut(s, "/")
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		return ""
	}
	return host
}

// startGPUs starts the GPU sources the flags and the situation choose
// (startGPUReaders); nil with --no-gpus.
func (w *Watch) startGPUs(ctx context.Context, targets []scrape.Target, prom *promsource.Source, demo []demoExporter) (*gpuInput, error) {
	if w.NoGPUs {
		return nil, nil
	}
	clientOpts, err := w.options()
	if err != nil {
		return nil, err
	}
	client, err := scrape.NewClient(clientOpts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	name, _ := os.Hostname()
	in := &gpuInput{known: map[string]device.Replica{}, localHost: safetext.Sanitize(name), prom: prom, parentsTTL: 5 * time.Second}
	pids := localPIDs(targets, w.found.PIDs, in.localHost)
	for _, t := range targets {
		in.known[t.Name] = device.Replica{Target: t.Name, Host: hostOf(t.URL), PID: pids[t.Name]}
	}
	if len(pids) > 0 {
		in.proc = os.DirFS("/proc")
	}
	interval := min(w.Interval, 5*time.Second)
	exporter := func(addr string) error {
		t, err := collect.ParseExporter(addr)
		if err != nil { // --dcgm's own were checked with the flags: this is the demo's or the local one
			return fmt.Errorf("dcgm-exporter %q: %w", addr, err)
		}
		e, err := collect.StartExporter(ctx, t, collect.ExporterOptions{Client: client, Interval: interval})
		if err != nil {
			return err
		}
		in.readers, in.names = append(in.readers, e), append(in.names, "dcgm-exporter "+t.Name)
		return nil
	}
	if err := w.startGPUReaders(ctx, in, targets, demo, exporter, interval); err != nil {
		in.stop()
		return nil, err
	}
	return in, nil
}

// startGPUReaders starts into in the exporters of --dcgm, then the demo's
// (joined by pod), or none beside a Prometheus (the source reads its DCGM
// series), or, when a target may run on this host, its nvidia-smi and a
// dcgm-exporter at localhost:9400 if one listens. exporter starts one
// dcgm-exporter.
func (w *Watch) startGPUReaders(ctx context.Context, in *gpuInput, targets []scrape.Target, demo []demoExporter, exporter func(string) error, interval time.Duration) error {
	for _, a := range w.DCGM {
		if err := exporter(a); err != nil {
			return err
		}
	}
	switch {
	case len(demo) > 0:
		for _, d := range demo {
			if err := exporter(d.addr); err != nil {
				return err
			}
			in.known[d.target] = device.Replica{Target: d.target, Host: hostOf(d.target), Pod: d.pod, Namespace: d.namespace}
		}
	case in.prom != nil:
	case !w.anyLocal(targets, in.localHost):
		// Every target is on another host: this host's GPUs are none of
		// theirs, and its missing nvidia-smi no news.
	default:
		smi := collect.StartSMI(ctx, collect.SMIOptions{Interval: interval, Host: in.localHost})
		in.readers, in.names = append(in.readers, smi), append(in.names, device.SourceSMI)
		if len(w.DCGM) == 0 && collect.Listening(ctx, collect.LocalExporter) {
			return exporter(collect.LocalExporter)
		}
	}
	return nil
}

// anyLocal reports whether a target runs on this host (loopback, or this
// host's name), or local discovery chose the targets: then this host's
// GPUs may be theirs.
func (w *Watch) anyLocal(targets []scrape.Target, localHost string) bool {
	if w.found.Summary != "" {
		return true
	}
	for _, t := range targets {
		if isLocal(hostOf(t.URL), localHost) {
			return true
		}
	}
	return false
}

// localPIDs are the server processes of the targets on this host: the
// ones discovery found, else the process listening on their port. Their
// GPUs are the ones their process tree computes on.
func localPIDs(targets []scrape.Target, found map[string]int, localHost string) map[string]int {
	pids := map[string]int{}
	byPort := map[int][]string{}
	for _, t := range targets {
		if pid := found[t.Name]; pid > 0 {
			pids[t.Name] = pid
			continue
		}
		u, err := url.Parse(t.URL)
		if err != nil || !isLocal(u.Hostname(), localHost) {
			continue
		}
		port, err := strconv.Atoi(u.Port())
		if err != nil {
			continue
		}
		byPort[port] = append(byPort[port], t.Name)
	}
	for port, pid := range discover.Listeners(os.DirFS("/proc"), slices.Collect(maps.Keys(byPort))) {
		for _, name := range byPort[port] {
			pids[name] = pid
		}
	}
	return pids
}

// isLocal reports whether host names this host: loopback, localhost or
// its name.
func isLocal(host, localHost string) bool {
	h := strings.ToLower(strings.Trim(host, "[]"))
	if h == "localhost" || strings.EqualFold(h, localHost) {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// demoExporter is one simulated replica's dcgm-exporter: its address and
// the pod its GPUs are labelled with, its replica's at target.
type demoExporter struct {
	target, addr, pod, namespace string
}

// gpuInput is the monitor's GPU input: no interface value when no GPU is
// read.
func (w *Watch) gpuInput() monitor.GPUInput {
	if w.gpuIn == nil {
		return nil
	}
	return w.gpuIn
}

// sayFound says on stderr what local discovery found, for the modes whose
// header is not there to say it.
func (w *Watch) sayFound(env *Env) {
	if w.found.Summary != "" {
		fmt.Fprintf(env.Stderr, "vtop: %s\n", w.found.Summary)
	}
}
