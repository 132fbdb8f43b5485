package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/discover"
	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/ui"
)

// windowChoices are the windows `[` and `]` step through.
var windowChoices = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

// Watch is the default command: watch targets live on the dashboard, once
// (--once), or as a stream of JSON lines (--jsonl).
type Watch struct {
	Targets []string `arg:"" optional:"" name:"target" help:"host:port or http(s)://host:port[/path] (default path /metrics). None: every inference server of this host, found by its process and listening port (see --scan), else whatever answers at localhost:8000 (none: exit 3 with the ways to point vtop); http://localhost:8000/metrics where there is no /proc."`
	File    string   `short:"f" type:"existingfile" placeholder:"FILE" help:"Read targets from FILE, one per line (# comments)."`

	Interval time.Duration `help:"Time between two scrapes of a target (default 1s; with --prometheus, between two refreshes: default 5s)."`
	Timeout  time.Duration `help:"Timeout of one scrape (default: 80% of --interval)."`
	Window   time.Duration `default:"${window}" help:"Window of rates and quantiles ([ and ] change it live)."`
	History  time.Duration `default:"15m" help:"How far back the sparklines and charts reach."`
	Color    string        `default:"auto" enum:"auto,always,never" placeholder:"WHEN" help:"Colour the dashboard: auto (on a terminal, unless NO_COLOR is set), always, never."`

	analysisFlags
	clientFlags
	prometheusFlags
	pastFlags
	memoryFlags
	recordFlags
	notifyFlags

	Once     bool          `help:"Scrape for one window, print the report and exit (exit code by state)."`
	JSON     bool          `help:"With --once: print the report as one JSON object."`
	JSONL    bool          `name:"jsonl" help:"No screen: print the report as one JSON line per interval until interrupted or --duration."`
	Duration time.Duration `help:"With --jsonl: stop after this long."`

	Demo         bool   `help:"Watch a simulated fleet of inference servers served on loopback (vLLM, SGLang, TensorRT-LLM, TGI, llama.cpp): no GPU needed."`
	DemoFleet    int    `default:"6" placeholder:"N" help:"With --demo: how many simulated replicas (default 6)."`
	DemoScenario string `default:"engines" enum:"healthy,full,slow,preempting,spike,mixed,idle,engines,disaggregated" placeholder:"S" help:"With --demo: the scenario (${enum}; default engines: the mixed states, each replica served by the next engine in turn; mixed: the same states, all vLLM)."`

	DemoFault []string `placeholder:"KIND[@N]" help:"With --demo: put replica N (from 1; all without @N) into a fault: ${faults}. Repeatable."`

	Scan bool `help:"With no target: probe the metrics page of every listening port of this host (a few at a time, short timeouts) instead of the ports of the engine processes (vLLM, SGLang, TensorRT-LLM, TGI, llama.cpp) found by their command lines."`
	gpuFlags
	DemoGPUFault []string `placeholder:"KIND[@N]" help:"With --demo: put the GPUs of replica N (from 1; all without @N) into a fault: ${gpufaults}. Repeatable."`

	found     found     // what local discovery found (source)
	gpuIn     *gpuInput // reads the GPUs (source)
	faults    []faultSpec[sim.Fault]
	gpuFaults []faultSpec[sim.GPUFault]
	listed    []scrape.Target    // listedTargets, once read
	prom      *promsource.Source // of --prometheus, made by checkInputs
	// promFromEnv: resolve took the Prometheus server from prometheusEnv.
	promFromEnv bool
	// find is local discovery (discover.Find when nil; tests give their
	// own).
	find func(context.Context, discover.Options) discover.Result
}

// prometheusFlags read the fleet from a Prometheus server instead of
// scraping it.
type prometheusFlags struct {
	Prometheus    string `placeholder:"URL" help:"Read the fleet from this Prometheus (or Thanos, Mimir, VictoriaMetrics: its HTTP API) instead of scraping: no warm-up, history already there. Default: $VTOP_PROMETHEUS when no target is given."`
	Selector      string `placeholder:"'{…}'" help:"With --prometheus: label matchers of the vLLM series to read, e.g. '{namespace=\"prod\",job=\"vllm\"}'."`
	GroupBy       string `placeholder:"LABEL" help:"With --prometheus: the label whose values are the replicas (default: pod where the series have it, else instance)."`
	BasicAuthFile string `type:"existingfile" placeholder:"FILE" help:"With --prometheus: user:password in FILE for HTTP basic auth (never shown)."`
	MaxSeries     int    `placeholder:"N" help:"With --prometheus: the most series one refresh may read (default 250000, and what fits in a quarter of --max-memory); a selector matching more is refused."`
	BucketsAbove  int    `placeholder:"N" help:"With --prometheus: above N scrape targets (default 64) Prometheus works out each replica's buckets of the latencies the states read (TTFT, ITL, prefill, NIXL transfer; e2e with --slo-e2e) over the window and vtop reads no raw bucket series: the same states and table; the queue, decode and e2e quantiles are then n/a but for the replica a detail view shows, which is read whole; -1: never."`
}

// prometheusEnv makes a Prometheus server the default source.
const prometheusEnv = "VTOP_PROMETHEUS"

// defaultInterval is --interval's default: a scrape of a target is
// cheap; a refresh from Prometheus reads the whole fleet, and Prometheus
// itself scrapes every few seconds at best.
func defaultInterval(prometheus string) time.Duration {
	if prometheus != "" {
		return 5 * time.Second
	}
	return time.Second
}

// Help is the long help of the default command: what `vtop --help` shows.
func (w *Watch) Help() string { return Description }

// analysisFlags are the thresholds of the analysis.
type analysisFlags struct {
	SLOTTFT         time.Duration `name:"slo-ttft" default:"${slo_ttft}" help:"p99 TTFT above which a replica that is not full is SLOW."`
	SLOITL          time.Duration `name:"slo-itl" default:"${slo_itl}" help:"p99 inter-token latency above which a replica that is not full is SLOW."`
	SLOE2E          time.Duration `name:"slo-e2e" help:"e2e latency counted in goodput (default: TTFT only)."`
	TargetQueueTime time.Duration `default:"${target_queue_time}" help:"Acceptable queue time for the scaling advice (Little's law)."`
}

// FlagVars are the values the flags' tags name (${window}, ${slo_ttft}, …),
// the thresholds from their one home, analysis.DefaultConfig.
func FlagVars() map[string]string {
	d := analysis.DefaultConfig()
	return map[string]string{
		"window": d.Window.String(), "slo_ttft": d.SLOTTFT.String(), "slo_itl": d.SLOITL.String(),
		"target_queue_time": d.TargetQueueTime.String(), "hysteresis": strconv.Itoa(d.Hysteresis),
		"faults": FaultKinds, "gpufaults": GPUFaultKinds,
	}
}

// validate rejects thresholds that make every replica SLOW or the advice
// meaningless.
func (f analysisFlags) validate() error {
	switch {
	case f.SLOTTFT <= 0:
		return usagef("--slo-ttft %s: want a positive latency", f.SLOTTFT)
	case f.SLOITL <= 0:
		return usagef("--slo-itl %s: want a positive latency", f.SLOITL)
	case f.SLOE2E < 0:
		return usagef("--slo-e2e %s: want a positive latency, or none", f.SLOE2E)
	case f.TargetQueueTime <= 0:
		return usagef("--target-queue-time %s: want a positive time", f.TargetQueueTime)
	}
	return nil
}

// config is analysis.DefaultConfig with the flags' thresholds, window and
// hysteresis in their place: what no flag sets stays as documented.
func (f analysisFlags) config(window time.Duration, hysteresis int) analysis.Config {
	cfg := analysis.DefaultConfig()
	cfg.Window = window
	cfg.SLOTTFT, cfg.SLOITL, cfg.SLOE2E = f.SLOTTFT, f.SLOITL, f.SLOE2E
	cfg.TargetQueueTime = f.TargetQueueTime
	cfg.Hysteresis = hysteresis
	return cfg
}

// clientFlags configure how targets are reached.
type clientFlags struct {
	MaxBody         string   `default:"16MiB" placeholder:"SIZE" help:"Largest /metrics body read; reading stops there (default 16MiB)."`
	CAFile          string   `type:"existingfile" placeholder:"FILE" help:"PEM bundle of CAs to trust for https targets."`
	Insecure        bool     `help:"Skip TLS certificate verification (marked loudly in the header)."`
	BearerTokenFile string   `type:"existingfile" placeholder:"FILE" help:"Send the token in FILE as Authorization: Bearer (never shown, logged or put in JSON)."`
	Header          []string `placeholder:"'K: V'" help:"Extra request header, repeatable. Not sent to another host on redirect."`
}

func (f clientFlags) options() (scrape.ClientOptions, error) {
	maxBody, err := parseSize(f.MaxBody)
	if err != nil {
		return scrape.ClientOptions{}, usagef("--max-body: %v", err)
	}
	return scrape.ClientOptions{
		MaxBody:         maxBody,
		CAFile:          f.CAFile,
		Insecure:        f.Insecure,
		BearerTokenFile: f.BearerTokenFile,
		Headers:         f.Header,
	}, nil
}

// resolve fills the Prometheus server from the environment when nothing
// else is to be watched, and the interval.
func (w *Watch) resolve() {
	if w.Prometheus == "" && !w.Demo && !w.Scan && len(w.Targets) == 0 && w.File == "" {
		w.Prometheus = os.Getenv(prometheusEnv)
		w.promFromEnv = w.Prometheus != ""
	}
	if w.Interval == 0 {
		w.Interval = defaultInterval(w.Prometheus)
	}
}

// validate rejects flags that cannot work together, concern by concern.
func (w *Watch) validate() error {
	return firstError(w.validatePrometheus, w.validateTiming, w.validateOutput, w.validateDemo, w.gpuFlags.check,
		func() error { return w.notifyFlags.validate(w.Once, w.JSONL) }, w.analysisFlags.validate)
}

// firstError runs checks in order and returns the first error.
func firstError(checks ...func() error) error {
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// givenFlag is a flag's name and whether the command line gave it.
type givenFlag struct {
	name  string
	given bool
}

// goesWith refuses the first of flags given without the flag they go with.
func goesWith(with givenFlag, flags ...givenFlag) error {
	if with.given {
		return nil
	}
	for _, f := range flags {
		if f.given {
			return usagef("%s goes with %s", f.name, with.name)
		}
	}
	return nil
}

// checkScrapeTiming keeps scrapes from stacking and the window holding two
// of them, for every command that scrapes.
func checkScrapeTiming(interval, timeout, window time.Duration) error {
	switch {
	case interval < 100*time.Millisecond:
		return usagef("--interval %s is too short (at least 100ms)", interval)
	case timeout < 0 || timeout >= interval:
		return usagef("--timeout %s must be shorter than --interval %s, so scrapes never stack", timeout, interval)
	case window < 2*interval:
		return usagef("--window %s must hold at least two scrapes (--interval %s)", window, interval)
	}
	return nil
}

// validateTiming adds to checkScrapeTiming the history holding a scrape.
func (w *Watch) validateTiming() error {
	if w.History < w.Interval {
		return usagef("--history %s must hold at least one scrape (--interval %s)", w.History, w.Interval)
	}
	return checkScrapeTiming(w.Interval, w.Timeout, w.Window)
}

// validateOutput rejects the flags of --once and --jsonl out of their mode.
func (w *Watch) validateOutput() error {
	switch {
	case w.JSON && !w.Once:
		return usagef("--json goes with --once (use --jsonl for a stream)")
	case w.Once && w.JSONL:
		return usagef("--once and --jsonl exclude each other")
	case w.Duration != 0 && !w.JSONL:
		return usagef("--duration goes with --jsonl")
	case w.Duration < 0:
		return usagef("--duration %s: want a positive duration", w.Duration)
	}
	return nil
}

// validateDemo rejects a demo or a scan beside other fleets and the demo's
// options without it, and reads the demo's faults.
func (w *Watch) validateDemo() error {
	switch {
	case w.Demo && (len(w.Targets) > 0 || w.File != ""):
		return usagef("--demo watches its own simulated fleet: give no targets")
	case w.DemoFleet < 1 || w.DemoFleet > 500:
		return usagef("--demo-fleet %d: want 1 to 500", w.DemoFleet)
	}
	if err := goesWith(givenFlag{"--demo", w.Demo}, givenFlag{"--demo-fault", len(w.DemoFault) > 0}, givenFlag{"--demo-gpu-fault", len(w.DemoGPUFault) > 0}); err != nil {
		return err
	}
	switch {
	case w.Scan && (w.Demo || w.Prometheus != "" || len(w.Targets) > 0 || w.File != ""):
		return usagef("--scan finds the servers of this host: give no targets, --demo or --prometheus")
	case len(w.DemoGPUFault) > 0 && w.NoGPUs:
		return usagef("--demo-gpu-fault and --no-gpus exclude each other")
	}
	var err error
	if w.faults, err = parseFaults("demo-fault", w.DemoFault, w.DemoFleet); err != nil {
		return err
	}
	w.gpuFaults, err = parseGPUFaults("demo-gpu-fault", w.DemoGPUFault, w.DemoFleet)
	return err
}

// validatePrometheus rejects the Prometheus flags without a server, and a
// server beside targets.
func (w *Watch) validatePrometheus() error {
	if err := goesWith(givenFlag{"--prometheus", w.Prometheus != ""},
		givenFlag{"--selector", w.Selector != ""}, givenFlag{"--group-by", w.GroupBy != ""},
		givenFlag{"--basic-auth-file", w.BasicAuthFile != ""}, givenFlag{"--max-series", w.MaxSeries != 0},
		givenFlag{"--buckets-above", w.BucketsAbove != 0}); err != nil || w.Prometheus == "" {
		return err
	}
	switch {
	case len(w.Targets) > 0 || w.File != "":
		return usagef("--prometheus reads the fleet from the server: give no targets")
	case w.Demo:
		return usagef("--demo and --prometheus exclude each other (vtop sim serves a fleet a Prometheus can scrape)")
	case w.MaxSeries < 0:
		return usagef("--max-series %d: want a positive count", w.MaxSeries)
	case w.BucketsAbove < -1:
		return usagef("--buckets-above %d: want a count of scrape targets, or -1 for never", w.BucketsAbove)
	}
	return nil
}

// Run watches until ctx ends, q is pressed, --duration is over or (with
// --once) one window has been reported.
func (w *Watch) Run(ctx context.Context, env *Env) error {
	w.resolve()
	if err := w.validate(); err != nil {
		return err
	}
	if w.pastFlags.asked() {
		return w.runPast(ctx, env)
	}
	if err := w.validateRecord(w); err != nil {
		return err
	}
	if err := w.checkInputs(ctx); err != nil {
		return err
	}
	if !w.Once && !w.JSONL && (!isTerminal(env.Stdin) || !isTerminal(env.Stdout)) {
		// After the flags and files, whose mistakes are said first, and
		// before anything starts (a demo fleet, a recording).
		return errNoTerminal
	}
	source, err := w.source(ctx, env)
	if err != nil {
		return err
	}
	defer w.gpuIn.stop()
	switch {
	case w.Once:
		return w.runOnce(ctx, source, env)
	case w.JSONL:
		err = w.runJSONL(ctx, source, env)
	default:
		err = w.runDashboard(ctx, source, env)
	}
	// The recording is closed, and what it holds said, however the watch ended.
	return errors.Join(err, w.finish(env))
}

// checkInputs reads what the flags name (targets, files, the client's
// options, the Prometheus URL) without starting anything.
func (w *Watch) checkInputs(ctx context.Context) error {
	if err := checkHeaders("--header", w.Header); err != nil {
		return err
	}
	if _, err := w.notifyFlags.alertmanager(nil); err != nil {
		return err
	}
	if w.Prometheus != "" {
		var err error
		w.prom, err = w.prometheusSource()
		return err
	}
	opts, err := w.options()
	if err != nil {
		return err
	}
	if _, err := scrape.NewClient(opts); err != nil {
		return usagef("%v", err)
	}
	if !w.Demo {
		_, err = w.listedTargets(ctx)
	}
	return err
}

// prometheusSource is the source that reads the fleet from --prometheus.
func (w *Watch) prometheusSource() (*promsource.Source, error) {
	maxMemory, err := w.maxMemory()
	if err != nil {
		return nil, err
	}
	src, err := promsource.New(promsource.Config{
		URL:       w.Prometheus,
		Selector:  w.Selector,
		GroupBy:   w.GroupBy,
		Interval:  w.Interval,
		Window:    w.Window,
		Timeout:   w.Timeout,
		MaxSeries: w.MaxSeries,
		MaxMemory: maxMemory,
		// 0 is the default; -1 (never) is promsource's negative.
		BucketsAbove: w.BucketsAbove,
		Histograms:   analysis.JudgedHistograms(w.config(w.Window, 1)),
		// The settings of the rules `vtop rules` writes, as the store's are matched.
		Rules: promql.RulesSettings{Window: w.Window, SLOTTFT: w.SLOTTFT, SLOITL: w.SLOITL, Hysteresis: analysis.DefaultConfig().Hysteresis},
		GPUs:  !w.NoGPUs,
		// The source line and the JSON say which store answered.
		IdentifyStore: true,
		Access: promsource.Access{
			BearerTokenFile: w.BearerTokenFile,
			BasicAuthFile:   w.BasicAuthFile,
			CAFile:          w.CAFile,
			Insecure:        w.Insecure,
			Headers:         w.Header,
		},
	})
	if err != nil {
		return nil, usagef("--prometheus: %v", err)
	}
	return src, nil
}

// source is where the readings come from: the fleet's Prometheus server
// (everything a store can), or vtop's own scrapes (readings alone).
func (w *Watch) source(ctx context.Context, env *Env) (monitor.Source, error) {
	if w.Prometheus == "" {
		poller, err := w.poller(ctx, env)
		return monitor.Of(poller), err
	}
	prom := w.prom
	var err error
	if w.gpuIn, err = w.startGPUs(ctx, nil, prom, nil); err != nil {
		return monitor.Source{}, err
	}
	return monitor.Source{Feed: prom, ReadingsAt: prom.ReadingsAt, Status: prom.Status, History: prom.History,
		SetWindow: prom.SetWindow, SetWanted: prom.SetWanted, SetInView: prom.SetInView}, nil
}

// poller is the source of vtop's own scrapes of the targets.
func (w *Watch) poller(ctx context.Context, env *Env) (*scrape.Poller, error) {
	clientOpts, err := w.options()
	if err != nil {
		return nil, err
	}
	if clientOpts.MaxMemory, err = w.maxMemory(); err != nil {
		return nil, err
	}
	softLimit(clientOpts.MaxMemory)
	targets, demoGPUs, err := w.targets(ctx)
	if err != nil {
		return nil, err
	}
	if w.gpuIn, err = w.startGPUs(ctx, targets, nil, demoGPUs); err != nil {
		return nil, err
	}
	opts := scrape.Options{Interval: w.Interval, Timeout: w.Timeout, Client: clientOpts}
	poller, err := w.recordFlags.poller(env, targets, w.config(w.Window, analysis.DefaultConfig().Hysteresis), opts)
	if err != nil {
		w.gpuIn.stop()
	}
	return poller, err
}

// targets are the demo fleet (and its GPUs' exporters), the arguments and
// -f FILE, or the servers local discovery finds.
func (w *Watch) targets(ctx context.Context) ([]scrape.Target, []demoExporter, error) {
	if w.Demo {
		return startDemo(ctx, w.DemoFleet, sim.Scenario(w.DemoScenario), w.faults, w.gpuFaults, !w.NoGPUs)
	}
	if len(w.Targets) == 0 && w.File == "" {
		targets, f, err := w.discoverTargets(ctx)
		w.found = f
		return targets, nil, err
	}
	targets, err := w.listedTargets(ctx)
	return targets, nil, err
}

// readTargetsFile reads -f FILE (scrape.ReadTargetsFile) until ctx ends:
// a FIFO that nothing writes to (a hung -f <(kubectl …)) blocks the open
// or the read, which neither Ctrl-C nor SIGTERM interrupts; the read left
// blocked ends with the process.
func readTargetsFile(ctx context.Context, path string) ([]scrape.Target, error) {
	targets, err := untilDone(ctx, func() ([]scrape.Target, error) { return scrape.ReadTargetsFile(path) })
	if ctx.Err() != nil {
		return nil, usagef("-f %s: stopped while waiting for its targets: nothing was written to it", path)
	}
	return targets, err
}

// checkHeaders refuses a header no request can carry, naming the flag and
// the key, never the value.
func checkHeaders(flag string, lines []string) error {
	for _, l := range lines {
		if _, _, err := httperr.ParseHeader(l); err != nil {
			return usagef("%s %v", flag, err)
		}
	}
	return nil
}

// listedTargets are the targets of the arguments and -f FILE. The file is
// read once: it may be a pipe (-f <(kubectl …)), which a second read finds
// empty.
func (w *Watch) listedTargets(ctx context.Context) ([]scrape.Target, error) {
	if w.listed != nil {
		return w.listed, nil
	}
	var targets []scrape.Target
	for _, arg := range w.Targets {
		t, err := scrape.ParseTarget(arg)
		if err != nil {
			return nil, usagef("%v", err)
		}
		targets = append(targets, t)
	}
	if w.File != "" {
		more, err := readTargetsFile(ctx, w.File)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if len(more) == 0 {
			return nil, usagef("%s: no targets in it (one host:port or URL per line)", w.File)
		}
		targets = append(targets, more...)
	}
	w.listed = targets
	return targets, nil
}

// runOnce reports on one window, counting the wait down on a terminal's
// stderr unless the source holds the window already (Prometheus).
func (w *Watch) runOnce(ctx context.Context, source monitor.Source, env *Env) error {
	wait := w.Window
	if source.HoldsWindow() {
		wait = 0
	}
	targets := len(source.Readings(nil))
	noun := "targets"
	if targets == 1 {
		noun = "target"
	}
	what := fmt.Sprintf("vtop --once: reading %d %s over a %s window", targets, noun, strings.Replace(w.Window.String(), "m0s", "m", 1))
	progress := startCountdown(env.Stderr, what, wait)
	report, err := monitor.Once(ctx, source, w.config(w.Window, 1), w.Window)
	progress.end()
	if err != nil {
		return err
	}
	if wait == 0 {
		// The report came at once: give the GPU readers started beside
		// the source (--dcgm exporters) their first read.
		w.gpuIn.settle(ctx, 3*time.Second)
	}
	monitor.AddGPUs(&report, w.gpuInput())
	w.sayFound(env)
	return printReport(env.Stdout, report, w.JSON)
}

// runJSONL runs the full live pipeline without a terminal: one JSON line per
// report (jsonLines).
func (w *Watch) runJSONL(ctx context.Context, source monitor.Source, env *Env) error {
	w.onStop(ctx, func(reason string) { fmt.Fprintf(env.Stderr, "vtop: %s; watching goes on\n", reason) })
	if w.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.Duration)
		defer cancel()
	}
	var sayMu sync.Mutex
	notifier, err := w.notifyFlags.startNotifier(ctx, func(notice string) {
		sayMu.Lock()
		defer sayMu.Unlock()
		fmt.Fprintf(env.Stderr, "vtop: %s\n", notice)
	})
	if err != nil {
		return err
	}
	defer notifier.stop()
	if w.Prometheus == "" {
		// Not through Prometheus: its refresh decodes answers of the
		// order of the live heap at once (see keepMemoryLimit).
		defer collectSooner()()
	}
	cfg := w.config(w.Window, analysis.DefaultConfig().Hysteresis)
	line := jsonLines(env.Stdout)
	mon := monitor.New(source, cfg, func(r analysis.Report) error {
		notifier.observe(r)
		return line(r)
	})
	mon.SetGPUs(w.gpuInput())
	w.tap(mon)
	w.sayFound(env)
	return mon.Run(ctx)
}

// runDashboard opens the live screen; reports reach it as messages.
func (w *Watch) runDashboard(ctx context.Context, source monitor.Source, env *Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.Prometheus == "" {
		// Not through Prometheus: see keepMemoryLimit.
		keepMemoryLimit(ctx)
	}
	windows := windowChoices
	if !slices.Contains(windows, w.Window) {
		windows = append(slices.Clone(windows), w.Window)
		slices.Sort(windows)
	}
	var program *tea.Program
	var notifier *notifier
	cfg := w.config(w.Window, analysis.DefaultConfig().Hysteresis)
	mon := monitor.New(source, cfg, func(r analysis.Report) error {
		ring := notifier.observe(r)
		program.Send(ui.ReportMsg{Report: r, Bell: ring})
		return nil
	})
	mon.SetGPUs(w.gpuInput())
	w.tap(mon)
	w.onStop(ctx, func(reason string) { program.Send(ui.RecordingMsg{Stopped: reason}) })
	points := max(1, int(w.History/w.Interval))
	// A source that holds the past (Prometheus) fills the charts at once.
	mon.SetHistory(w.History, points, func(h map[string][]analysis.Point) {
		program.Send(ui.HistoryMsg{Points: h})
	})
	colors, _ := ui.ParseColorMode(w.Color) // the parser lets only its modes through
	model := ui.New(ui.Options{
		History:   points,
		Interval:  w.Interval,
		Window:    w.Window,
		Windows:   windows,
		ScrapeNow: mon.Refresh,
		SetWindow: mon.SetWindow,
		Want:      mon.SetWanted,
		InView:    mon.SetInView,
		Insecure:  w.Insecure,
		Hint:      w.hint(),
		Demo:      w.Demo,
		Version:   env.Version,
		Theme:     ui.NewThemeFor(env.Stdout, colors),
		Recording: w.Record,
		Found:     w.found.Summary,
		Judgement: cfg,
	})
	program = tea.NewProgram(model, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx))
	// Once the program is there to show its notices, before the monitor.
	var err error
	notifier, err = w.notifyFlags.startNotifier(ctx, func(notice string) {
		program.Send(ui.NoticeMsg{Time: time.Now(), Text: notice})
	})
	if err != nil {
		return err
	}
	defer notifier.stop()
	return runBeside(ctx, cancel, program, mon)
}

// runBeside runs the dashboard and the monitor that feeds it until the
// dashboard ends; cancel (ctx's) then stops the monitor.
func runBeside(ctx context.Context, cancel context.CancelFunc, program *tea.Program, mon *monitor.Monitor) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mon.Run(ctx)
	}()
	_, err := program.Run()
	// A signal ends the program through ctx: that is a normal exit. The
	// check comes before cancel, which would make it always true.
	interrupted := ctx.Err() != nil
	cancel()
	<-done
	if err != nil && !interrupted {
		return fmt.Errorf("terminal: %w", err)
	}
	return nil
}

// demoWarmUp is how long the demo fleet has run before vtop looks at it:
// every state of the scenario has formed by the first frame.
const demoWarmUp = 2 * time.Minute

// hint is what the screen suggests while nothing answers at vLLM's
// default address: only when there was no /proc to find servers by, the
// one way a watch without targets falls back to it (discovery that finds
// nothing ends the watch with the ways to point vtop).
func (w *Watch) hint() string {
	if !w.found.Fallback {
		return ""
	}
	return "nothing at localhost:8000 (vLLM's default): try vtop HOST:PORT, vtop -f targets.txt, or vtop --demo"
}

// startDemo serves a simulated fleet on loopback for the life of ctx and
// returns its targets, watched as real servers are.
func startDemo(ctx context.Context, replicas int, scenario sim.Scenario, faults []faultSpec[sim.Fault], gpuFaults []faultSpec[sim.GPUFault], withGPUs bool) ([]scrape.Target, []demoExporter, error) {
	fleet, err := sim.NewFleet(sim.Options{Replicas: replicas, Scenario: scenario, Seed: uint64(time.Now().UnixNano())})
	if err != nil {
		return nil, nil, usagef("demo: %v", err)
	}
	urls, err := startFleet(ctx, fleet, demoWarmUp, faults)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	targets := make([]scrape.Target, 0, len(urls))
	for _, u := range urls {
		t, err := scrape.ParseTarget(u)
		if err != nil {
			return nil, nil, fmt.Errorf("demo: %w", err)
		}
		targets = append(targets, t)
	}
	if !withGPUs {
		return targets, nil, nil
	}
	addrs, err := serveGPUs(ctx, fleet, gpuFaults, "127.0.0.1")
	if err != nil {
		return nil, nil, fmt.Errorf("demo: GPUs: %w", err)
	}
	exporters := make([]demoExporter, 0, len(addrs))
	for i, a := range addrs[:min(len(addrs), len(targets))] {
		exporters = append(exporters, demoExporter{target: targets[i].Name, addr: a, pod: sim.PodName(i), namespace: sim.PodNamespace()})
	}
	return targets, exporters, nil
}
