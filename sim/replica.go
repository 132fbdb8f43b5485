package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/catalogue"
)

// Replica is one simulated vLLM server: its engines, its metrics registry,
// its virtual clock and its fault. All methods are safe for concurrent use.
type Replica struct {
	mu      sync.Mutex
	index   int
	seed    uint64
	cfg     ReplicaConfig
	version string
	engines []*engine
	reg     *prometheus.Registry

	epoch     time.Time // wall time of virtual time 0
	vnow      float64   // virtual seconds since epoch
	restartAt float64   // virtual time of the last (re)start
	restarts  int
	startWall time.Time // process_start_time_seconds

	fault        Fault
	faultChanged chan struct{} // closed and replaced on every SetFault
	slowEvery    time.Duration

	// real-time mode
	clock      func() time.Time
	realtime   bool
	wallOrigin time.Time // wall time at which vnow was 0
	maxCatchUp time.Duration

	srv *server // nil when not serving
}

func newReplica(index int, cfg ReplicaConfig, o *Options) (*Replica, error) {
	if err := validate(&cfg); err != nil {
		return nil, fmt.Errorf("replica %d: %w", index, err)
	}
	r := &Replica{
		index: index, seed: o.Seed, cfg: cfg, version: o.VLLMVersion,
		epoch: o.Epoch, clock: o.Clock, maxCatchUp: o.MaxCatchUp, slowEvery: o.SlowByteInterval,
		fault: FaultNone, faultChanged: make(chan struct{}),
	}
	r.boot()
	return r, nil
}

func validate(c *ReplicaConfig) error {
	if err := validateSizes(c); err != nil {
		return err
	}
	if c.SpecTokens < 0 || c.SpecAcceptance < 0 || c.SpecAcceptance >= 1 {
		return fmt.Errorf("speculative decoding: tokens %d, acceptance %g (want ≥ 0 and in [0,1))", c.SpecTokens, c.SpecAcceptance)
	}
	if err := validateEngine(c); err != nil {
		return err
	}
	return validateWorkload(c)
}

// validateSizes checks the replica's engines, cache, batch and model
// length are positive.
func validateSizes(c *ReplicaConfig) error {
	switch {
	case c.Engines < 1:
		return fmt.Errorf("engines %d < 1", c.Engines)
	case c.MaxNumSeqs < 1 || c.NumGPUBlocks < 2 || c.BlockSize < 1:
		return fmt.Errorf("max_num_seqs %d, num_gpu_blocks %d, block_size %d: all must be positive", c.MaxNumSeqs, c.NumGPUBlocks, c.BlockSize)
	case c.MaxBatchedTokens < 1 || c.PrefillTokensPerSec <= 0 || c.DecodeBase <= 0:
		return fmt.Errorf("token budget, prefill rate and decode time must be positive")
	case c.MaxModelLen < 2:
		return fmt.Errorf("max_model_len %d < 2", c.MaxModelLen)
	}
	return nil
}

// validateWorkload checks each phase of the workload has classes when it
// has a rate, and each class asks for tokens the model's length holds.
func validateWorkload(c *ReplicaConfig) error {
	for _, p := range c.Workload.Phases {
		if p.Rate < 0 || (p.Rate > 0 && len(p.Classes) == 0) {
			return fmt.Errorf("workload phase with rate %g and %d classes", p.Rate, len(p.Classes))
		}
		for _, cl := range p.Classes {
			if cl.MaxTokens < 1 || cl.MaxTokens >= c.MaxModelLen {
				return fmt.Errorf("max_tokens %d outside [1, max_model_len)", cl.MaxTokens)
			}
		}
	}
	return nil
}

// boot starts the server process afresh: new engines with empty caches and
// zeroed counters, a new registry, a new process start time.
func (r *Replica) boot() {
	w := r.cfg.Workload.scaled(1 / float64(r.cfg.Engines))
	r.engines = make([]*engine, r.cfg.Engines)
	for i := range r.engines {
		stream := uint64(r.index)<<32 | uint64(r.restarts)<<16 | uint64(i)
		r.engines[i] = newEngine(&r.cfg, w, rand.New(rand.NewPCG(r.seed, stream)))
	}
	r.restartAt = r.vnow
	r.startWall = r.epoch.Add(seconds(r.vnow))
	r.reg = prometheus.NewPedanticRegistry()
	if r.cfg.Engine == EngineVLLM {
		r.reg.MustRegister(newCollector(r))
	} else {
		r.reg.MustRegister(otherCollector{r})
	}
}

// Index is the replica's position in its fleet.
func (r *Replica) Index() int { return r.index }

// Config returns the replica's configuration.
func (r *Replica) Config() ReplicaConfig { return r.cfg }

// Advance steps the replica's virtual clock by d, running its engines
// through it. It is deterministic for a seed.
func (r *Replica) Advance(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(d.Seconds())
}

func (r *Replica) advance(d float64) {
	if d <= 0 {
		return
	}
	r.vnow += d
	for _, e := range r.engines {
		e.advance(r.vnow - r.restartAt)
	}
}

// Now is the replica's virtual time since its fleet began.
func (r *Replica) Now() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return seconds(r.vnow)
}

// syncToWall advances a real-time replica to the wall clock. After a long
// pause (a suspended laptop) it catches up at most maxCatchUp and lets the
// rest go, so one scrape never costs more than that much simulation.
func (r *Replica) syncToWall() {
	if !r.realtime {
		return
	}
	target := r.clock().Sub(r.wallOrigin).Seconds()
	if lag := target - r.vnow; lag > r.maxCatchUp.Seconds() {
		skip := lag - r.maxCatchUp.Seconds()
		r.wallOrigin = r.wallOrigin.Add(seconds(skip))
		// Virtual time 0 moves with it, or a restart after the skip would
		// date its process start that far in the past.
		r.epoch = r.wallOrigin
		target -= skip
	}
	r.advance(target - r.vnow)
}

// uptime is the virtual time since the last (re)start.
func (r *Replica) uptime() float64 { return r.vnow - r.restartAt }

// sumStats sums f over the engines.
func (r *Replica) sumStats(f func(s *engineStats) float64) float64 {
	var sum float64
	for _, e := range r.engines {
		sum += f(e.stats)
	}
	return sum
}

// inFlight is the number of requests inside the server.
func (r *Replica) inFlight() int {
	n := 0
	for _, e := range r.engines {
		n += len(e.running) + len(e.waiting)
	}
	return n
}

// Gather returns the replica's metric families as client_golang gathers
// them, after advancing a real-time replica to now.
func (r *Replica) Gather() ([]*dto.MetricFamily, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncToWall()
	return r.reg.Gather()
}

// Render returns the replica's /metrics page in the given format
// (expfmt.NewFormat(expfmt.TypeTextPlain) for what vLLM serves).
func (r *Replica) Render(format expfmt.Format) ([]byte, error) { return render(r.Gather, format) }

// render writes what gather returns in format.
func render(gather func() ([]*dto.MetricFamily, error), format expfmt.Format) ([]byte, error) {
	mfs, err := gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// Stats is the simulator's own accounting of a replica, summed over its
// engines: what tests compare the exported metrics with.
type Stats struct {
	// Running and Waiting are the current batch and queue.
	Running, Waiting int
	// Finished counts finished requests (every reason).
	Finished float64
	// Preemptions counts preemptions.
	Preemptions float64
	// RunningSeconds is ∫ running dt since the last start: mean running =
	// RunningSeconds ÷ elapsed.
	RunningSeconds float64
	// InferenceSeconds is Σ time running (first scheduled → finish) over the
	// requests that finished normally.
	InferenceSeconds float64
	// Completed counts the requests that finished normally (stop or length),
	// the ones InferenceSeconds sums over.
	Completed float64
	// Uptime is the virtual time since the last start.
	Uptime time.Duration
}

// Stats returns the replica's own accounting.
func (r *Replica) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s Stats
	for _, e := range r.engines {
		s.Running += len(e.running)
		s.Waiting += len(e.waiting)
		for _, n := range e.stats.finished {
			s.Finished += n
		}
		s.Completed += e.stats.finished[catalogue.FinishStop] + e.stats.finished[catalogue.FinishLength]
		s.Preemptions += e.stats.preemptions
		s.RunningSeconds += e.stats.runningArea
		s.InferenceSeconds += e.stats.inferenceSum
	}
	s.Uptime = seconds(r.uptime())
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
