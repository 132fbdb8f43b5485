// Package sim simulates a fleet of inference servers: a discrete-time
// model of continuous batching (Poisson arrivals, chunked prefill, decode
// steps that slow down with the batch, a KV cache of fixed size, recompute
// preemption, admission control, sleep, KV transfer between a prefill and a
// decode replica) exporting the real metric catalogue of vLLM (V0, V1 or
// the newest page), SGLang, TensorRT-LLM, TGI or llama.cpp through
// client_golang over real HTTP. It drives vtop's demo mode, the sim command
// and end-to-end tests.
//
// A fleet runs in one of two modes. In virtual mode (the default) time moves
// only when the caller calls Advance, so a test can play ten minutes in a
// fraction of a second, deterministically for a seed. In real-time mode
// (after Start) each scrape advances its replica to the wall clock before
// rendering, so an unscraped fleet costs no CPU.
package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// Options configure a Fleet.
type Options struct {
	// Replicas is the number of replicas (default 4).
	Replicas int
	// Scenario is the traffic and hardware of the fleet (default Mixed).
	Scenario Scenario
	// Seed makes the simulation reproducible.
	Seed uint64
	// VLLMVersion is V1 (default), V0 or Latest, the names a vLLM replica
	// exports.
	VLLMVersion string
	// Engine, when set, makes every replica impersonate that engine (one
	// of Engines()); otherwise the scenario says (vLLM but for
	// MixedEngines).
	Engine string
	// Listen is the address of the first replica, "127.0.0.1:0" by
	// default. With port 0 every replica gets its own free port; with port
	// p, replica i listens on p+i.
	Listen string
	// Model overrides the model_name label.
	Model string
	// Configure, when set, may change each replica's configuration after
	// the scenario has set it.
	Configure func(index int, c *ReplicaConfig)
	// Epoch is the wall time of virtual time 0 in virtual mode (default
	// 2026-01-01 UTC); it sets process_start_time_seconds.
	Epoch time.Time
	// Clock is the wall clock of real-time mode (default time.Now).
	Clock func() time.Time
	// MaxCatchUp caps the virtual time one scrape simulates in real-time
	// mode (default 30 s); a replica left alone longer skips the rest.
	MaxCatchUp time.Duration
	// SlowByteInterval is the pace of FaultSlow (default 1 s per byte).
	SlowByteInterval time.Duration
}

func (o *Options) defaults() error {
	if o.Replicas == 0 {
		o.Replicas = 4
	}
	if o.Replicas < 0 {
		return fmt.Errorf("replicas %d < 0", o.Replicas)
	}
	if o.Scenario == "" {
		o.Scenario = Mixed
	}
	switch o.VLLMVersion {
	case "":
		o.VLLMVersion = V1
	case V0, V1, Latest:
	default:
		return fmt.Errorf("unknown vLLM version %q (want %q, %q or %q)", o.VLLMVersion, V1, V0, Latest)
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Epoch.IsZero() {
		o.Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.MaxCatchUp <= 0 {
		o.MaxCatchUp = 30 * time.Second
	}
	if o.SlowByteInterval <= 0 {
		o.SlowByteInterval = time.Second
	}
	return nil
}

// Fleet is a set of simulated replicas.
type Fleet struct {
	opts     Options
	replicas []*Replica

	mu      sync.Mutex
	started bool
	closed  bool
	stopCtx context.CancelFunc
	wg      sync.WaitGroup
}

// NewFleet builds the replicas of a scenario, in virtual mode at time 0.
func NewFleet(o Options) (*Fleet, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	f := &Fleet{opts: o}
	for i := range o.Replicas {
		cfg, err := ScenarioConfig(o.Scenario, i)
		if err != nil {
			return nil, err
		}
		if o.Model != "" {
			cfg.Model = o.Model
		}
		if o.Engine != "" {
			cfg.Engine = o.Engine
		}
		if o.Configure != nil {
			o.Configure(i, &cfg)
		}
		r, err := newReplica(i, cfg, &o)
		if err != nil {
			return nil, err
		}
		f.replicas = append(f.replicas, r)
	}
	return f, nil
}

// Replicas returns the fleet's replicas, in index order.
func (f *Fleet) Replicas() []*Replica { return f.replicas }

// Advance steps every replica's virtual clock by d (virtual mode).
func (f *Fleet) Advance(d time.Duration) {
	for _, r := range f.replicas {
		r.Advance(d)
	}
}

// Start switches the fleet to real time and serves each replica's /metrics
// and /health on its own port. It returns one URL per replica, in index
// order (http://127.0.0.1:PORT/metrics, or TensorRT-LLM's path). The
// fleet serves until ctx is done or Close is called.
func (f *Fleet) Start(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started || f.closed {
		return nil, errors.New("sim: fleet already started or closed")
	}
	host, port, err := splitListen(f.opts.Listen)
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(f.replicas))
	for i, r := range f.replicas {
		addr := net.JoinHostPort(host, "0")
		if port != 0 {
			addr = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		if err := r.serve(addr, f.opts.Clock()); err != nil {
			f.stopAll()
			return nil, err
		}
		urls = append(urls, "http://"+r.Addr()+r.MetricsPath())
	}
	f.started = true
	ctx, cancel := context.WithCancel(ctx)
	f.stopCtx = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		<-ctx.Done()
		f.stopAll()
	}()
	return urls, nil
}

func splitListen(listen string) (string, int, error) {
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("sim: listen address %q: %w", listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("sim: listen address %q: bad port", listen)
	}
	return host, port, nil
}

func (f *Fleet) stopAll() {
	for _, r := range f.replicas {
		r.stopServing()
	}
}

// Close stops serving and releases every port; it waits for the servers to
// end. It is safe to call more than once.
func (f *Fleet) Close() error {
	f.mu.Lock()
	f.closed = true
	cancel := f.stopCtx
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	f.wg.Wait()
	f.stopAll()
	return nil
}

// serve starts the replica's HTTP server in real-time mode; virtual time
// continues from where it is.
func (r *Replica) serve(addr string, wall time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.realtime = true
	r.wallOrigin = wall.Add(-seconds(r.vnow))
	r.epoch = r.wallOrigin
	r.startWall = r.epoch.Add(seconds(r.restartAt))
	r.srv = &server{addr: addr}
	if r.fault == FaultDown {
		return nil // it will listen when the fault clears
	}
	return r.srv.listen(r)
}

func (r *Replica) stopServing() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		r.srv.closed = true
		r.srv.stop()
	}
}

// Addr is the replica's host:port while serving ("" before Start).
func (r *Replica) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv == nil {
		return ""
	}
	return r.srv.addr
}
