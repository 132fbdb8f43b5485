package command

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/vtop-dev/vtop/sim"
)

// Sim serves simulated vLLM replicas for other tools (Prometheus, a
// second vtop, curl) until interrupted.
type Sim struct {
	Replicas    int           `default:"4" help:"How many replicas to serve."`
	Scenario    string        `default:"mixed" enum:"healthy,full,slow,preempting,spike,mixed,idle" help:"Traffic and hardware of the fleet (${enum})."`
	Listen      string        `default:"127.0.0.1:0" help:"Address of the first replica; port 0 gives each replica a free port, port P gives replica i port P+i."`
	Seed        uint64        `default:"1" help:"Seed of the simulation."`
	VLLMVersion string        `name:"vllm-version" default:"v1" enum:"v1,v0" help:"Metric names to export: v1 (current) or v0 (the V0 engine's names)."`
	Engines     int           `default:"1" help:"Data-parallel engines per replica: each page then carries one series per engine (engine label), as vLLM's does with --data-parallel-size."`
	WarmUp      time.Duration `default:"2m" help:"Simulated time the fleet runs before it starts serving, so that queues and histograms have formed."`
	Fault       []string      `placeholder:"KIND[@N]" help:"Put replica N (from 1, in the order of the URLs; all without @N) into a fault: ${faults}. Repeatable. restart restarts it every minute."`
}

// Run serves the fleet, prints one URL per replica once every replica
// listens, and serves until ctx ends.
func (s *Sim) Run(ctx context.Context, env *Env) error {
	if s.Replicas < 1 || s.Replicas > 2000 {
		return usagef("--replicas %d: want 1 to 2000", s.Replicas)
	}
	if s.Engines < 1 || s.Engines > 16 {
		return usagef("--engines %d: want 1 to 16", s.Engines)
	}
	if s.WarmUp < 0 || s.WarmUp > time.Hour {
		return usagef("--warm-up %s: want 0 to 1h", s.WarmUp)
	}
	if err := checkListen(s.Listen); err != nil {
		return usagef("--listen %q: %v", s.Listen, err)
	}
	faults, err := parseFaults("fault", s.Fault, s.Replicas)
	if err != nil {
		return err
	}
	fleet, err := sim.NewFleet(sim.Options{
		Replicas:    s.Replicas,
		Scenario:    sim.Scenario(s.Scenario),
		Seed:        s.Seed,
		VLLMVersion: s.VLLMVersion,
		Listen:      s.Listen,
		Configure:   func(_ int, c *sim.ReplicaConfig) { c.Engines = s.Engines },
	})
	if err != nil {
		return usagef("%v", err)
	}
	fleet.Advance(s.WarmUp)
	urls, err := fleet.Start(ctx)
	if err != nil {
		return err
	}
	if err := applyFaults(ctx, fleet, faults); err != nil {
		_ = fleet.Close()
		return err
	}
	for _, u := range urls {
		if _, err := fmt.Fprintln(env.Stdout, u); err != nil {
			_ = fleet.Close()
			return fmt.Errorf("printing the URLs: %w", err)
		}
	}
	<-ctx.Done()
	return fleet.Close()
}

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
