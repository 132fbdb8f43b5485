package command

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// Sim serves simulated inference servers for other tools (Prometheus, a
// second vtop, curl) until interrupted.
type Sim struct {
	Replicas     int           `default:"4" help:"How many replicas to serve."`
	Scenario     string        `default:"mixed" enum:"healthy,full,slow,preempting,spike,mixed,idle,engines,disaggregated" help:"Traffic and hardware of the fleet (${enum}); engines serves replica i with the i-th engine in turn, disaggregated pairs prefill and decode replicas."`
	Engine       string        `enum:"vllm,sglang,trtllm,tgi,llamacpp," default:"" help:"Serve every replica as this engine's page (vllm, sglang, trtllm at /prometheus/metrics, tgi, llamacpp); default: as the scenario says."`
	Listen       string        `default:"127.0.0.1:0" help:"Address of the first replica; port 0 gives each replica a free port, port P gives replica i port P+i."`
	Seed         uint64        `default:"1" help:"Seed of the simulation."`
	VLLMVersion  string        `name:"vllm-version" default:"v1" enum:"v1,v0,latest" help:"Metric names to export: v1 (current), v0 (the V0 engine's names) or latest (v1 plus waiting by reason, sleep state, admission rejections, prompt tokens by source, preemptions per request, NIXL and speculative decoding by position)."`
	WarmUp       time.Duration `default:"2m" help:"Simulated time the fleet runs before it starts serving, so that queues and histograms have formed."`
	DataParallel int           `name:"data-parallel" default:"0" help:"Data-parallel engines per vLLM replica (the engine label's values on each page, as vLLM's --data-parallel-size gives); 0 keeps the scenario's."`
	Fault        []string      `placeholder:"KIND[@N]" help:"Put replica N (from 1, in the order of the URLs; all without @N) into a fault: ${faults}. Repeatable. restart restarts it every minute."`
	DCGM         bool          `name:"dcgm" help:"Also serve a dcgm-exporter page per replica (its GPUs' utilisation follows the batch, memory the KV cache, labelled with the pod vllm-N): after the replicas' URLs, one line 'dcgm URL' each, in the same order."`
	GPUFault     []string      `placeholder:"KIND[@N]" help:"With --dcgm: put the GPUs of replica N (from 1; all without @N) into a fault: ${gpufaults}. Repeatable."`
	History      time.Duration `placeholder:"SPAN" help:"Serve nothing: play SPAN of the fleet in virtual time and write its scrapes, one every --step, as OpenMetrics text with timestamps and the labels of Prometheus's scrape of job vllm (instance, job, up): the input of promtool tsdb create-blocks-from openmetrics and of VictoriaMetrics' /api/v1/import/prometheus."`
	Step         time.Duration `default:"5s" help:"With --history: the scrape interval."`
	End          string        `placeholder:"TIME" help:"With --history: the time of the last scrape (RFC 3339, Unix seconds, or now+D / now-D; default now). A time ahead lets a store be read as the present while the history is back-filled."`
	Output       string        `short:"o" placeholder:"OUT" help:"With --history: write to file OUT, which must not exist (default: standard output); with --chunk, into directory OUT."`
	Chunk        time.Duration `placeholder:"D" help:"With --history and --output DIR: one file per D of scrapes (DIR/000000.om, …, each renamed from .part when whole), waiting while two are left for a consumer to take, so that a long history never fills the disk."`
}

// Run serves the fleet, prints one URL per replica once every replica
// listens, and serves until ctx ends.
func (s *Sim) Run(ctx context.Context, env *Env) error {
	if err := s.validate(); err != nil {
		return err
	}
	faults, err := parseFaults("fault", s.Fault, s.Replicas)
	if err != nil {
		return err
	}
	gpuFaults, err := parseGPUFaults("gpu-fault", s.GPUFault, s.Replicas)
	if err != nil {
		return err
	}
	if len(gpuFaults) > 0 && !s.DCGM {
		return usagef("--gpu-fault goes with --dcgm")
	}
	fleet, err := sim.NewFleet(s.options())
	if err != nil {
		return usagef("%v", err)
	}
	if s.History != 0 {
		if s.DCGM || len(faults) > 0 {
			return usagef("--history writes the replicas' pages only: no --dcgm, no --fault")
		}
		return s.writeHistory(ctx, env, fleet)
	}
	if err := s.serve(ctx, env, fleet, faults, gpuFaults); err != nil {
		_ = fleet.Close()
		return err
	}
	<-ctx.Done()
	return fleet.Close()
}

// validate checks the flags that need no parsing.
func (s *Sim) validate() error {
	switch {
	case s.Replicas < 1 || s.Replicas > 2000:
		return usagef("--replicas %d: want 1 to 2000", s.Replicas)
	case s.WarmUp < 0 || s.WarmUp > time.Hour:
		return usagef("--warm-up %s: want 0 to 1h", s.WarmUp)
	case s.History == 0 && (s.End != "" || s.Output != "" || s.Chunk != 0):
		return usagef("--end, --output and --chunk go with --history")
	}
	if err := checkListen(s.Listen); err != nil {
		return usagef("--listen %q: %v", s.Listen, err)
	}
	if s.DataParallel < 0 || s.DataParallel > maxSimEngines {
		return usagef("--data-parallel %d: want 0 to %d", s.DataParallel, maxSimEngines)
	}
	return nil
}

// options is the fleet the flags ask for.
func (s *Sim) options() sim.Options {
	opts := sim.Options{
		Replicas:    s.Replicas,
		Scenario:    sim.Scenario(s.Scenario),
		Seed:        s.Seed,
		VLLMVersion: s.VLLMVersion,
		Engine:      s.Engine,
		Listen:      s.Listen,
	}
	if engines := s.DataParallel; engines > 0 {
		// Every replica serves that many engines, the traffic the scenario
		// gives it shared among them.
		opts.Configure = func(_ int, c *sim.ReplicaConfig) { c.Engines = engines }
	}
	return opts
}

// serve starts the fleet (and its GPUs' pages with --dcgm) and prints a
// URL a line.
func (s *Sim) serve(ctx context.Context, env *Env, fleet *sim.Fleet, faults []faultSpec[sim.Fault], gpuFaults []faultSpec[sim.GPUFault]) error {
	lines, err := startFleet(ctx, fleet, s.WarmUp, faults)
	if err != nil {
		return err
	}
	if s.DCGM {
		host := cmp.Or(hostOf(s.Listen), "127.0.0.1")
		addrs, err := serveGPUs(ctx, fleet, gpuFaults, host)
		if err != nil {
			return fmt.Errorf("dcgm-exporter pages: %w", err)
		}
		for _, a := range addrs {
			lines = append(lines, scrape.DCGMLinePrefix+"http://"+a+"/metrics")
		}
	}
	for _, u := range lines {
		if _, err := fmt.Fprintln(env.Stdout, u); err != nil {
			return fmt.Errorf("printing the URLs: %w", err)
		}
	}
	return nil
}

// maxSimEngines caps --data-parallel: the page parser reads at most
// page.MaxEngines engine values, and 64 already makes a page of megabytes.
const maxSimEngines = 64

// checkListen accepts HOST:PORT with a port from 0 to 65535 (0: a free
// port per replica); whether it can be bound is for Run to find out.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT, such as 127.0.0.1:0")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want 0 to 65535", port)
	}
	return nil
}
