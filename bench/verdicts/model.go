package verdicts

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Config is one replica of the model: the server's configuration and the
// traffic it receives. Every figure the benchmark judges vtop by follows
// from it; nothing is set by hand on the page.
type Config struct {
	// MaxNumSeqs is the batch cap (vLLM's max_num_seqs): at most this
	// many requests run at once; the rest wait in the queue.
	MaxNumSeqs int
	// KVBlocks is the KV cache in blocks of BlockSize tokens. A running
	// request holds the blocks of its prompt and of the tokens generated
	// so far; when the batch needs more than there are, the request
	// admitted last is preempted.
	KVBlocks, BlockSize int
	// PrefillTokensPerSecond is how fast a prompt is prefilled: a prompt
	// of P tokens takes P ÷ this seconds from admission to its first
	// token (chunked prefill, not slowed by the batch).
	PrefillTokensPerSecond float64
	// StepBase and StepPerSeq give the decode step, the time between two
	// tokens of a running request: StepBase + StepPerSeq × running
	// seconds (a memory-bound step reads the weights and the batch's KV
	// cache).
	StepBase, StepPerSeq float64
	// PromptTokens and OutputTokens are the means of the request shape;
	// each request draws its lengths uniformly from mean × [1−Spread,
	// 1+Spread], so the tail of TTFT is bounded and known.
	PromptTokens, OutputTokens, Spread float64
	// Arrivals is the arrival rate in requests per second at virtual
	// time t (seconds since the start); arrivals are Poisson.
	Arrivals func(t float64) float64
	// Outages are the process's deaths: at each, every request in the
	// server is lost, the scrapes fail for its duration, and the process
	// comes back empty with its counters at 0.
	Outages []Outage
	// LateScrapes are the virtual seconds at which a scrape of the
	// replica gets no answer within the scrape timeout while the process
	// is up and serving (the host that scrapes it loaded): the scrape
	// fails, timed out; the truth does not change.
	LateScrapes []int
	// Stalls are the engine's hangs (a collective that never returns, a
	// GPU fault): for each, the process stays up and scraped, but no step
	// happens: no token, no admission, no finish, no preemption; the
	// batch stands and the arrivals still join the queue. After it the
	// engine steps on where it stopped.
	Stalls []Outage
	// AbortAfter, when above 0, is how long a client waits for its
	// request to be admitted: a request that has waited longer in the
	// queue is given up by its client and leaves the queue, counted as
	// finished with reason abort (vLLM's
	// request_success_total{finished_reason="abort"}). It never ran, so
	// it records no latency.
	AbortAfter float64
}

// Outage is one death and restart of the server process.
type Outage struct {
	// At is when the process dies, For how long it stays away (seconds).
	At, For float64
}

// Step is the decode step at running requests: the time between two
// tokens of each of them.
func (c *Config) Step(running int) float64 { return c.StepBase + c.StepPerSeq*float64(running) }

// ServiceSeconds is how long a mean request holds a batch slot in a batch
// of n: its prefill, then its tokens after the first at that batch's step.
func (c *Config) ServiceSeconds(n int) float64 {
	return c.PromptTokens/c.PrefillTokensPerSecond + (c.OutputTokens-1)*c.Step(n)
}

// Capacity is the rate, in requests per second, that the replica finishes
// at its cap (Little's law: MaxNumSeqs ÷ ServiceSeconds). Arrivals above
// it grow the queue.
func (c *Config) Capacity() float64 { return float64(c.MaxNumSeqs) / c.ServiceSeconds(c.MaxNumSeqs) }

// HeldSeqs is the batch the KV cache holds at the mean request's
// footprint over its life (its prompt and half its output), at most
// MaxNumSeqs: the cap a KV-short replica runs at.
func (c *Config) HeldSeqs() int {
	held := int(float64(c.KVBlocks*c.BlockSize) / (c.PromptTokens + c.OutputTokens/2))
	return max(1, min(c.MaxNumSeqs, held))
}

// HeldCapacity is Capacity at the batch the KV cache holds: the rate a
// KV-short replica can sustain. It is Capacity when the KV cache holds
// the whole batch.
func (c *Config) HeldCapacity() float64 {
	return float64(c.HeldSeqs()) / c.ServiceSeconds(c.HeldSeqs())
}

// request is one request in the server.
type request struct {
	arrival        float64
	prompt, output int
	admitted       float64 // the start of its current admission (a preempted request is admitted again)
	firstAdmitted  float64
	prefillEnd     float64 // when the prefill of its current admission ends
	generated      float64 // tokens generated so far, fractional between tokens
	started        bool    // it has had its first token
	firstToken     float64 // time of its first token
	timesAdmitted  int
	firstPrefillTo float64 // prefill end of its first admission
}

// blocks is how many KV blocks the request holds now.
func (r *request) blocks(blockSize int) int {
	return (r.prompt + int(r.generated) + blockSize - 1) / blockSize
}

// StepRecord is the model's state at the end of one step: what the truth
// is judged from.
type StepRecord struct {
	// End is the time at the end of the step.
	End float64
	// Up is false while the process is away (an outage).
	Up bool
	// Running and Waiting are the batch and the queue at the end of the
	// step; KVBlocksUsed the blocks the batch holds.
	Running, Waiting, KVBlocksUsed int
	// Blocked is true when the head of the queue could not be admitted
	// for want of KV blocks although the batch was below its cap.
	Blocked bool
	// Preemptions happened in this step; Recomputed are the tokens they
	// threw out of the KV cache (each request's prompt and the tokens it
	// had generated), which its next admission prefills again.
	Preemptions, Recomputed int
	// Generated are the tokens generated in this step, Finished the
	// requests that finished in it.
	Generated, Finished int
	// Arrivals came in this step (lost ones included).
	Arrivals int
	// Step is the decode step of the batch during this step (seconds).
	Step float64
	// Stalled is true while the engine does not step (a stall).
	Stalled bool
}

// Served is one request's first token: when, and its TTFT.
type Served struct {
	At, TTFT float64
	// Admitted is the time from the admission that led to the first
	// token to the token: the TTFT less the time spent waiting.
	Admitted float64
}

// Replica steps one server of the model in virtual time and records its
// true state. Events that the page reports go to its Exporter.
type Replica struct {
	cfg     Config
	rng     *rand.Rand
	now     float64
	running []*request // in admission order
	queue   []*request // the head is queue[0]
	// Steps are the records of every step so far.
	Steps []StepRecord
	// FirstTokens are the first tokens so far, oldest first.
	FirstTokens []Served
	// Exporter is the page of the current process; replaced at a restart.
	Exporter *Exporter
	// Finished counts the requests finished so far, over every process;
	// Aborted those of them given up in the queue by their client.
	Finished, Aborted int
	up                bool
	// generated and finished count the tokens and requests of the step
	// in progress, for its record.
	generated, finished int
}

// NewReplica returns a replica of cfg with its own seeded source of
// randomness, its process started at time 0.
func NewReplica(cfg Config, seed uint64) *Replica {
	r := &Replica{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), up: true}
	r.Exporter = NewExporter(cfg, 0)
	return r
}

// Up reports whether the process is running at time t: outside every
// outage [At, At+For).
func (c *Config) Up(t float64) bool {
	for _, o := range c.Outages {
		if t >= o.At && t < o.At+o.For {
			return false
		}
	}
	return true
}

// Stalled reports whether the engine is stalled at time t: inside a
// stall [At, At+For).
func (c *Config) Stalled(t float64) bool {
	for _, o := range c.Stalls {
		if t >= o.At && t < o.At+o.For {
			return true
		}
	}
	return false
}

// poisson draws from a Poisson distribution of mean m (Knuth's method;
// the means of one step are small).
func poisson(rng *rand.Rand, m float64) int {
	if m <= 0 {
		return 0
	}
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// draw returns a length uniform in mean × [1−spread, 1+spread], at least 1.
func (r *Replica) draw(mean float64) int {
	return max(1, int(math.Round(mean*(1-r.cfg.Spread+2*r.cfg.Spread*r.rng.Float64()))))
}

// Advance steps the replica by dt seconds.
func (r *Replica) Advance(dt float64) {
	t0, t1 := r.now, r.now+dt
	rec := StepRecord{End: t1, Up: r.cfg.Up(t1 - dt/2)}
	r.generated, r.finished = 0, 0
	n := poisson(r.rng, r.cfg.Arrivals(t0+dt/2)*dt)
	rec.Arrivals = n
	if !rec.Up {
		// The process is gone: what it held is lost, and so are the
		// arrivals (connection refused).
		r.running, r.queue, r.up = nil, nil, false
		r.now = t1
		r.Steps = append(r.Steps, rec)
		return
	}
	if !r.up {
		// Back: a new process, its counters at 0.
		r.up = true
		r.Exporter = NewExporter(r.cfg, t0)
	}
	r.arrive(n, t0, dt)
	r.abandon(t0)
	if r.cfg.Stalled(t0 + dt/2) {
		r.stall(t0, t1, &rec)
		return
	}
	// Admission: the head of the queue, in order, while the batch has a
	// slot and the KV cache the blocks of its prompt. A request that
	// arrived in this step is admitted at its arrival.
	used := r.used()
	r.refill(t0, &used, &rec, nil)
	step := r.cfg.Step(len(r.running))
	rec.Step = step
	freed := r.decode(t0, t1, step)
	used = r.used()
	r.refill(t1, &used, &rec, freed)
	used = r.preempt(used, &rec)
	rec.Running, rec.Waiting, rec.KVBlocksUsed = len(r.running), len(r.queue), used
	rec.Generated, rec.Finished = r.generated, r.finished
	r.Exporter.SetGauges(rec.Running, rec.Waiting, float64(used)/float64(r.cfg.KVBlocks))
	r.now = t1
	r.Steps = append(r.Steps, rec)
}

// arrive queues n requests arriving at random times over [t0, t0+dt), in
// the order they arrive.
func (r *Replica) arrive(n int, t0, dt float64) {
	times := make([]float64, n)
	for i := range times {
		times[i] = t0 + dt*r.rng.Float64()
	}
	slices.Sort(times)
	for _, at := range times {
		r.queue = append(r.queue, &request{arrival: at, prompt: r.draw(r.cfg.PromptTokens), output: r.draw(r.cfg.OutputTokens)})
	}
}

// decode runs the batch over [t0, t1) at the step time of the batch as
// it is, and returns when each finished request freed its slot, oldest
// first: a freed slot is refilled from the queue at once, and the request
// admitted to it runs from then.
func (r *Replica) decode(t0, t1, step float64) []float64 {
	var freed []float64
	kept := r.running[:0]
	for _, q := range r.running {
		if end, done := r.advance(q, t0, t1, step); done {
			freed = append(freed, end)
		} else {
			kept = append(kept, q)
		}
	}
	clear(r.running[len(kept):])
	r.running = kept
	slices.Sort(freed)
	return freed
}

// preempt sends the request admitted last back to the head of the queue
// while the batch holds more blocks than there are (used), and returns
// the blocks used then.
func (r *Replica) preempt(used int, rec *StepRecord) int {
	for used > r.cfg.KVBlocks && len(r.running) > 0 {
		q := r.running[len(r.running)-1]
		r.running = r.running[:len(r.running)-1]
		used -= q.blocks(r.cfg.BlockSize)
		r.queue = append([]*request{q}, r.queue...)
		rec.Preemptions++
		rec.Recomputed += q.prompt + int(q.generated)
		r.Exporter.Preempted()
	}
	return used
}

// stall is a step [t0, t1) in which the engine does not step: the
// arrivals have joined the queue; nothing is admitted, generated,
// finished or preempted, and a prefill under way is pushed back by the
// step, since it makes no progress either.
func (r *Replica) stall(t0, t1 float64, rec *StepRecord) {
	rec.Stalled = true
	for _, q := range r.running {
		if q.prefillEnd > t0 {
			q.prefillEnd += t1 - t0
			if q.timesAdmitted == 1 {
				q.firstPrefillTo = q.prefillEnd
			}
		}
	}
	rec.Running, rec.Waiting, rec.KVBlocksUsed = len(r.running), len(r.queue), r.used()
	r.Exporter.SetGauges(rec.Running, rec.Waiting, float64(rec.KVBlocksUsed)/float64(r.cfg.KVBlocks))
	r.now = t1
	r.Steps = append(r.Steps, *rec)
}

// abandon takes out of the queue the requests that were never admitted
// and have waited AbortAfter or longer by time at: their clients gave up.
func (r *Replica) abandon(at float64) {
	if r.cfg.AbortAfter <= 0 {
		return
	}
	kept := r.queue[:0]
	for _, q := range r.queue {
		if q.timesAdmitted == 0 && at-q.arrival >= r.cfg.AbortAfter {
			r.Finished++
			r.Aborted++
			r.Exporter.Aborted()
			continue
		}
		kept = append(kept, q)
	}
	clear(r.queue[len(kept):])
	r.queue = kept
}

// used is how many KV blocks the batch holds.
func (r *Replica) used() int {
	n := 0
	for _, q := range r.running {
		n += q.blocks(r.cfg.BlockSize)
	}
	return n
}

// refill admits the head of the queue while the batch has a slot and the
// KV cache the blocks it needs (else the step is Blocked). Each admission
// takes the earliest of the freed slot times, or at when none is left,
// and never precedes the request's arrival. A request admitted before the
// step's end t1 runs from its admission to t1.
func (r *Replica) refill(at float64, used *int, rec *StepRecord, freed []float64) {
	for len(r.queue) > 0 && len(r.running) < r.cfg.MaxNumSeqs {
		q := r.queue[0]
		need := q.blocks(r.cfg.BlockSize)
		if *used+need > r.cfg.KVBlocks {
			rec.Blocked = true
			return
		}
		*used += need
		r.queue = r.queue[1:]
		when, midStep := at, false
		if len(freed) > 0 {
			when, freed, midStep = freed[0], freed[1:], true
		}
		r.admit(q, math.Max(when, q.arrival))
		if midStep {
			// Admitted to a slot freed during the step: it runs from
			// then to the step's end.
			if _, done := r.advance(q, q.admitted, rec.End, rec.Step); done {
				r.running = r.running[:len(r.running)-1]
				*used -= need
			}
		}
	}
}

// admit puts q in the batch at time at: its prompt (and, after a
// preemption, the tokens it had generated) is prefilled again.
func (r *Replica) admit(q *request, at float64) {
	q.admitted = at
	q.prefillEnd = at + float64(q.prompt+int(q.generated))/r.cfg.PrefillTokensPerSecond
	if q.timesAdmitted == 0 {
		q.firstAdmitted = at
		q.firstPrefillTo = q.prefillEnd
		r.Exporter.Admitted(q.prompt)
	}
	q.timesAdmitted++
	r.running = append(r.running, q)
}

// advance moves q through [t0, t1) at the decode step; it reports
// whether q finished in it, and when.
func (r *Replica) advance(q *request, t0, t1, step float64) (end float64, done bool) {
	if q.prefillEnd >= t1 {
		return t1, false
	}
	from := math.Max(t0, q.prefillEnd)
	before := q.generated
	if !q.started {
		// The prefill's end is the first token.
		q.started, q.firstToken = true, q.prefillEnd
		q.generated = 1
		ttft := q.prefillEnd - q.arrival
		r.FirstTokens = append(r.FirstTokens, Served{At: q.prefillEnd, TTFT: ttft, Admitted: q.prefillEnd - q.admitted})
		r.Exporter.FirstToken(ttft)
	}
	q.generated += (t1 - from) / step
	done = q.generated >= float64(q.output)
	end = t1
	if done {
		end = t1 - (q.generated-float64(q.output))*step
		q.generated = float64(q.output)
	}
	if tokens := int(q.generated) - int(before); tokens > 0 {
		r.generated += tokens
		// The first token's latency is TTFT, not an inter-token gap.
		gaps := tokens
		if before == 0 {
			gaps--
		}
		r.Exporter.Tokens(tokens, gaps, step)
	}
	if done {
		r.Finished++
		r.finished++
		r.Exporter.Finished(finished{
			e2e: end - q.arrival, queue: q.firstAdmitted - q.arrival, prefill: q.firstPrefillTo - q.firstAdmitted,
			decode: end - q.firstToken, inference: end - q.firstAdmitted, prompt: q.prompt, output: q.output,
		})
	}
	return end, done
}
