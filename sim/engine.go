package sim

import (
	"math"
	"math/rand/v2"

	"github.com/vtop-dev/vtop/catalogue"
)

// request is one request inside an engine. Times are virtual seconds.
type request struct {
	arrival     float64
	prompt      int // prompt tokens
	target      int // tokens the model generates before it stops (≤ maxTokens)
	maxTokens   int
	cached      int // prompt tokens served from the prefix cache
	computed    int // tokens whose KV is in the cache (prefill progress)
	generated   int // output tokens so far
	blocks      int // KV blocks held
	scheduled   float64
	firstToken  float64
	lastToken   float64
	started     bool // scheduled at least once (queue time observed)
	gotFirst    bool // its first token was emitted
	decoding    bool // prefill done: one token per step from now on
	preemptions int
	ready       float64 // when its KV transfer ends (decode role)
	transferred int     // prompt tokens whose KV came over NIXL
}

// context is every token the request knows: its prompt plus what it has
// generated. A prefill (or the recomputation after a preemption) must put
// all of them in the KV cache before the next token can be sampled.
func (r *request) context() int { return r.prompt + r.generated }

// engineStats is the cumulative accounting one engine exports: the
// counters and histograms of the vLLM catalogue, plus the simulator's own
// bookkeeping used by tests (Little's law).
type engineStats struct {
	promptTokens, generationTokens float64
	promptCached, promptComputed   float64
	finished                       [catalogue.NumFinishReasons]float64
	preemptions                    float64
	retractedInput                 float64 // prompt tokens of preempted requests (SGLang's retractions)
	retractedOutput                float64 // tokens they had generated
	prefixQueries, prefixHits      float64
	specDrafts, specDraftTokens    float64
	specAccepted                   float64
	specAcceptedPerPos             []float64
	httpRequests                   float64
	busySeconds                    float64
	arrived, rejected              float64 // requests sent, and refused by admission control
	promptExternal                 float64 // prompt tokens whose KV came over NIXL
	nixlFailed                     float64
	steps, maxStepTokens           float64 // forward passes, and the most tokens in one
	prefillSeconds, decodeSeconds  float64 // busy time of steps with and without prefill
	busySlots                      float64 // Σ running over steps

	ttft, itl, tpot, e2e, queue, inference, prefill, decode *hist
	promptLen, genLen, kvComputed, maxGen, paramsMaxTokens  *hist
	paramsN, iterationTokens                                *hist
	preemptionsPerReq, nixlTime, nixlBytes                  *hist
	stepPrefill, stepDecode                                 *hist // TGI's batch inference durations

	// runningArea is ∫ running dt, for Little's law from the inside.
	runningArea float64
	// inferenceSum is Σ (finish − first scheduled) over finished requests.
	inferenceSum float64
}

func newEngineStats(c *ReplicaConfig) *engineStats {
	b := bucketsOf(c)
	return &engineStats{
		specAcceptedPerPos: make([]float64, c.SpecTokens),
		ttft:               newHist(b.ttft),
		itl:                newHist(b.itl),
		tpot:               newHist(b.tpot),
		e2e:                newHist(b.e2e),
		queue:              newHist(b.queue),
		inference:          newHist(b.e2e),
		prefill:            newHist(catalogue.RequestLatencyBuckets),
		decode:             newHist(catalogue.RequestLatencyBuckets),
		promptLen:          newHist(b.tokens),
		genLen:             newHist(b.tokens),
		kvComputed:         newHist(b.tokens),
		maxGen:             newHist(b.tokens),
		paramsMaxTokens:    newHist(b.tokens),
		paramsN:            newHist(catalogue.ParamsNBuckets),
		iterationTokens:    newHist(catalogue.IterationTokenBuckets),
		preemptionsPerReq:  newHist(b.preemptions),
		nixlTime:           newHist(catalogue.NIXLTimeBuckets),
		nixlBytes:          newHist(catalogue.NIXLBytesBuckets),
		stepPrefill:        newHist(catalogue.TGIDurationBuckets),
		stepDecode:         newHist(catalogue.TGIDurationBuckets),
	}
}

// bucketLists are the bounds of one engine's histograms.
type bucketLists struct {
	ttft, itl, tpot, e2e, queue, tokens, preemptions []float64
}

// bucketsOf returns the bucket lists of the engine the replica
// impersonates, as its pages show them (catalogue).
func bucketsOf(c *ReplicaConfig) bucketLists {
	switch c.Engine {
	case EngineSGLang:
		return bucketLists{catalogue.SGLangTTFTBuckets, catalogue.SGLangITLBuckets, catalogue.SGLangITLBuckets,
			catalogue.SGLangE2EBuckets, catalogue.SGLangQueueBuckets, catalogue.TokenBuckets(c.MaxModelLen),
			catalogue.SGLangRetractionsBuckets}
	case EngineTGI:
		d := catalogue.TGIDurationBuckets
		return bucketLists{d, d, d, d, d, catalogue.TGILengthBuckets(c.MaxModelLen), catalogue.PreemptionsBuckets}
	}
	return bucketLists{catalogue.TTFTBuckets, catalogue.ITLBuckets, catalogue.ITLBuckets,
		catalogue.RequestLatencyBuckets, catalogue.RequestLatencyBuckets, catalogue.TokenBuckets(c.MaxModelLen),
		catalogue.PreemptionsBuckets}
}

// engine is one vLLM engine core: a scheduler doing continuous batching over
// a KV cache of fixed size, stepped in virtual time.
type engine struct {
	cfg     *ReplicaConfig
	rng     *rand.Rand
	arr     arrivals
	now     float64 // virtual seconds since the replica started
	waiting []*request
	running []*request
	// deferred are the requests waiting for their KV to arrive (decode
	// role): vLLM counts them as waiting, for reason "deferred".
	deferred []*request
	free     int // free KV blocks
	stats    *engineStats
	// stalled is set while the engine does not step (FaultStall).
	stalled bool

	// scratch, reused across steps to avoid allocation
	chunk []int
}

func newEngine(cfg *ReplicaConfig, w Workload, rng *rand.Rand) *engine {
	e := &engine{cfg: cfg, rng: rng, free: cfg.NumGPUBlocks, stats: newEngineStats(cfg)}
	e.arr = newArrivals(w, rng)
	return e
}

// advance runs the engine until its clock reaches until. Idle time is
// skipped in one jump to the next event, so an idle engine costs nothing.
// A step in flight at until completes, so the clock may pass until by at
// most one step.
func (e *engine) advance(until float64) {
	if e.stalled {
		e.stallTo(until)
		return
	}
	for e.now < until {
		e.admitArrivals()
		if len(e.running) == 0 && len(e.waiting) == 0 {
			e.now = min(until, e.arr.next, e.nextReady())
			continue
		}
		e.step()
	}
	e.admitArrivals()
}

// stallTo moves a stalled engine's clock to until: nothing steps, so no
// token comes out and no request finishes or is aborted, while the
// requests that arrive join the queue and the batch stands as it was.
func (e *engine) stallTo(until float64) {
	if until <= e.now {
		return
	}
	e.stats.runningArea += float64(len(e.running)) * (until - e.now)
	e.now = until
	e.queueArrivals()
}

// admitArrivals moves the requests that arrived by now into the waiting
// queue (or, for a decode instance, behind their KV transfer), refuses
// those beyond --max-num-queued-reqs, and drops the ones whose client gave
// up waiting. A sleeping engine is sent nothing.
func (e *engine) admitArrivals() {
	e.queueArrivals()
	e.transfersDone()
	e.abortTimedOut()
}

// queueArrivals is the part of admitArrivals done by the API server, which
// a stalled engine still has: the arrivals join the queue.
func (e *engine) queueArrivals() {
	for e.arr.next <= e.now {
		if e.cfg.SleepLevel > 0 {
			e.arr.next = e.arr.after(e.arr.next, e.rng)
			continue
		}
		// The request is drawn before the next arrival, as it always was:
		// a seed plays the same traffic whatever the knobs below.
		r := e.newRequest(e.arr.next)
		e.arr.next = e.arr.after(e.arr.next, e.rng)
		e.stats.arrived++
		if q := e.cfg.MaxQueuedRequests; q > 0 && len(e.waiting)+len(e.deferred) >= q {
			e.stats.rejected++
			continue
		}
		if e.cfg.Role == RoleDecode {
			e.startTransfer(r)
			continue
		}
		e.waiting = append(e.waiting, r)
	}
}

// kvBytesPerToken is the KV cache of one token of Llama 3.1 8B in bf16:
// 2 (K, V) × 32 layers × 8 KV heads × 128 dims × 2 bytes.
const kvBytesPerToken = 2 * 32 * 8 * 128 * 2

// startTransfer defers a request of a decode instance until the KV of its
// prompt has come over NIXL from the prefill instance.
func (e *engine) startTransfer(r *request) {
	bytes := float64(r.prompt * kvBytesPerToken)
	d := 0.002 + bytes/e.cfg.KVTransferBandwidth
	r.ready = r.arrival + d
	e.stats.nixlTime.observe(d)
	e.stats.nixlBytes.observe(bytes)
	e.deferred = append(e.deferred, r)
}

// transfersDone moves the requests whose KV has arrived to the waiting
// queue. A failed transfer leaves the prompt to be computed here.
func (e *engine) transfersDone() {
	kept := e.deferred[:0]
	for _, r := range e.deferred {
		if r.ready > e.now {
			kept = append(kept, r)
			continue
		}
		if e.rng.Float64() < e.cfg.KVTransferFailure {
			e.stats.nixlFailed++
		} else {
			r.transferred = r.prompt - 1 // the last token is computed here
			r.cached = r.transferred
		}
		e.waiting = append(e.waiting, r)
	}
	clear(e.deferred[len(kept):])
	e.deferred = kept
}

// nextReady is when the next KV transfer ends (+Inf when none is under way).
func (e *engine) nextReady() float64 {
	next := math.Inf(1)
	for _, r := range e.deferred {
		next = min(next, r.ready)
	}
	return next
}

func (e *engine) newRequest(at float64) *request {
	c := pickClass(e.arr.w.at(at), e.rng)
	prompt := min(logNormal(e.rng, c.PromptMedian, c.PromptSigma), e.cfg.MaxModelLen-c.MaxTokens)
	maxTokens := min(c.MaxTokens, e.cfg.MaxModelLen-prompt)
	r := &request{
		arrival:   at,
		prompt:    max(1, prompt),
		maxTokens: maxTokens,
		target:    min(logNormal(e.rng, c.OutputMedian, c.OutputSigma), maxTokens),
	}
	if e.cfg.Role == RolePrefill {
		// The prefill instance computes the prompt and one token; the
		// decode instance does the rest.
		r.maxTokens, r.target = 1, 1
	}
	if e.cfg.PrefixCaching {
		// Shared system prompts and documents: a share of the prompt, in
		// whole blocks, is already in the cache. The last token is always
		// computed, as in vLLM.
		share := e.cfg.PrefixHitShare * (0.5 + e.rng.Float64())
		hit := int(float64(r.prompt)*min(share, 1)) / e.cfg.BlockSize * e.cfg.BlockSize
		r.cached = min(hit, r.prompt-1)
	}
	return r
}

// abortTimedOut finishes with reason "abort" the waiting requests whose
// client disconnected after waiting ClientTimeout.
func (e *engine) abortTimedOut() {
	if e.cfg.ClientTimeout <= 0 {
		return
	}
	limit := e.now - e.cfg.ClientTimeout.Seconds()
	for len(e.waiting) > 0 && e.waiting[0].arrival < limit && !e.waiting[0].started {
		r := e.waiting[0]
		e.waiting = e.waiting[1:]
		e.stats.finished[catalogue.FinishAbort]++
		e.stats.httpRequests++
		e.stats.e2e.observe(e.now - r.arrival)
	}
}

// blocksFor is the number of KV blocks holding n tokens.
func (e *engine) blocksFor(n int) int { return (n + e.cfg.BlockSize - 1) / e.cfg.BlockSize }

// step runs one scheduler iteration, as vLLM V1 does: first the running
// requests (one decode token each, or their next prefill chunk), preempting
// the newest request when the KV cache runs out; then, if nothing was
// preempted, new requests from the waiting queue while the batch, the token
// budget and the cache allow. Then the forward pass takes its time and the
// tokens come out.
func (e *engine) step() {
	budget := e.cfg.MaxBatchedTokens
	e.chunk = e.chunk[:0]
	preempted := false
	prefillTokens, decodeSeqs := 0, 0
	for i := 0; i < len(e.running) && budget > 0; i++ {
		r := e.running[i]
		n := 1 + e.cfg.SpecTokens
		if !r.decoding {
			n = min(r.context()-r.computed, budget)
		}
		need := e.blocksFor(r.computed+n) - r.blocks
		for need > e.free {
			victim := e.running[len(e.running)-1]
			e.preempt()
			preempted = true
			if victim == r {
				break
			}
		}
		if i >= len(e.running) { // r itself was preempted
			break
		}
		e.free -= need
		r.blocks += need
		e.chunk = append(e.chunk, n)
		if !r.decoding {
			prefillTokens += n
			budget -= n
		} else {
			decodeSeqs++
			budget--
		}
	}
	if !preempted {
		prefillTokens += e.admitWaiting(&budget)
	}
	if len(e.chunk) == 0 {
		// Nothing fits (a lone request larger than the cache): fail it as
		// vLLM rejects prompts longer than the cache can hold.
		e.failHead()
		return
	}
	dur := e.stepDuration(prefillTokens, len(e.chunk))
	e.stats.runningArea += float64(len(e.running)) * dur
	e.stats.busySeconds += dur
	e.countStep(dur, prefillTokens, decodeSeqs)
	start := e.now
	e.now += dur
	e.stats.iterationTokens.observe(float64(prefillTokens + decodeSeqs))
	e.finishStep(start)
}

// countStep records what llama.cpp and TGI count of a forward pass.
func (e *engine) countStep(dur float64, prefillTokens, decodeSeqs int) {
	s := e.stats
	s.steps++
	s.maxStepTokens = max(s.maxStepTokens, float64(prefillTokens+decodeSeqs))
	s.busySlots += float64(len(e.running))
	if prefillTokens > 0 {
		s.prefillSeconds += dur
		s.stepPrefill.observe(dur)
	} else {
		s.decodeSeconds += dur
		s.stepDecode.observe(dur)
	}
}

// admitWaiting moves requests from the head of the waiting queue into the
// batch and returns the prefill tokens scheduled for them.
func (e *engine) admitWaiting(budget *int) int {
	tokens := 0
	watermark := e.cfg.NumGPUBlocks / 100
	for len(e.waiting) > 0 && *budget > 0 && len(e.running) < e.cfg.MaxNumSeqs {
		r := e.waiting[0]
		start := 0
		if r.preemptions == 0 {
			start = r.cached
		}
		n := min(r.context()-start, *budget)
		need := e.blocksFor(start + n)
		if e.free-need < watermark {
			break
		}
		e.waiting = e.waiting[1:]
		if !r.started {
			r.started = true
			r.scheduled = e.now
			e.stats.queue.observe(e.now - r.arrival)
			e.stats.prefixQueries += float64(r.prompt)
			e.stats.prefixHits += float64(r.cached - r.transferred)
		}
		r.computed = start
		r.blocks = need
		e.free -= need
		e.running = append(e.running, r)
		e.chunk = append(e.chunk, n)
		tokens += n
		*budget -= n
	}
	return tokens
}

// preempt sends the newest running request back to the front of the waiting
// queue, freeing its KV blocks: its computed tokens are lost and will be
// recomputed (vLLM V1's recompute preemption).
func (e *engine) preempt() {
	last := len(e.running) - 1
	r := e.running[last]
	e.running = e.running[:last]
	if len(e.chunk) > last {
		e.chunk = e.chunk[:last]
	}
	e.free += r.blocks
	r.blocks, r.computed = 0, 0
	r.decoding = false
	r.preemptions++
	e.stats.preemptions++
	e.stats.retractedInput += float64(r.prompt)
	e.stats.retractedOutput += float64(r.generated)
	e.waiting = append(e.waiting, nil)
	copy(e.waiting[1:], e.waiting)
	e.waiting[0] = r
}

// failHead finishes the head of the waiting queue with reason "error": it
// can never fit in the cache.
func (e *engine) failHead() {
	if len(e.waiting) == 0 {
		return
	}
	r := e.waiting[0]
	e.waiting = e.waiting[1:]
	e.stats.finished[catalogue.FinishError]++
	e.stats.httpRequests++
	e.stats.e2e.observe(e.now - r.arrival)
}

// stepDuration is the time of one forward pass: prefill is compute-bound
// (tokens ÷ prefill rate), decode is memory-bound (a fixed cost to read the
// weights plus a cost per sequence to read its KV cache). Speculative
// decoding runs a draft model and verifies k+1 tokens per sequence.
func (e *engine) stepDuration(prefillTokens, seqs int) float64 {
	base := e.cfg.DecodeBase.Seconds()
	perSeq := e.cfg.DecodePerSeq.Seconds()
	if k := e.cfg.SpecTokens; k > 0 {
		base *= 1.3
		perSeq *= 1 + 0.1*float64(k)
	}
	return base + perSeq*float64(seqs) + float64(prefillTokens)/e.cfg.PrefillTokensPerSec
}

// finishStep applies the tokens of the step that began at start and ended at
// e.now: prefill progress, first tokens, decode tokens, finished requests.
func (e *engine) finishStep(start float64) {
	var batchedITL uint64
	kept := e.running[:0]
	for i, r := range e.running {
		if !r.decoding {
			r.computed += e.chunk[i]
			if r.computed >= r.context() {
				e.emitPrefillToken(r)
			}
		} else {
			produced := 1 + e.speculate()
			r.generated += produced
			r.computed = r.context() - 1
			e.stats.generationTokens += float64(produced)
			if r.lastToken == start {
				batchedITL++
			} else {
				e.stats.itl.observe(e.now - r.lastToken)
			}
			r.lastToken = e.now
		}
		if r.generated >= r.target {
			e.finish(r)
			continue
		}
		kept = append(kept, r)
	}
	clear(e.running[len(kept):])
	e.running = kept
	e.stats.itl.observeN(e.now-start, batchedITL)
}

// emitPrefillToken records the token sampled at the end of a prefill: the
// request's first token, or its next one after a recomputation. From now on
// the request decodes; the new token's KV is written by the next step.
func (e *engine) emitPrefillToken(r *request) {
	r.generated++
	r.decoding = true
	r.computed = r.context() - 1
	e.stats.generationTokens++
	if !r.gotFirst {
		r.gotFirst = true
		r.firstToken = e.now
		e.stats.ttft.observe(e.now - r.arrival)
		e.stats.prefill.observe(e.now - r.scheduled)
		e.stats.promptTokens += float64(r.prompt)
		e.stats.promptCached += float64(r.cached - r.transferred)
		e.stats.promptExternal += float64(r.transferred)
		e.stats.promptComputed += float64(r.prompt - r.cached)
	} else {
		e.stats.itl.observe(e.now - r.lastToken)
	}
	r.lastToken = e.now
}

// speculate returns the draft tokens accepted for one request in one step:
// k tokens are drafted, and accepted one after another until the first
// rejection.
func (e *engine) speculate() int {
	k := e.cfg.SpecTokens
	if k == 0 {
		return 0
	}
	e.stats.specDrafts++
	e.stats.specDraftTokens += float64(k)
	accepted := 0
	for accepted < k && e.rng.Float64() < e.cfg.SpecAcceptance {
		e.stats.specAcceptedPerPos[accepted]++
		accepted++
	}
	e.stats.specAccepted += float64(accepted)
	return accepted
}

// finish records a finished request and frees its KV blocks.
func (e *engine) finish(r *request) {
	r.generated = min(r.generated, r.target)
	reason := catalogue.FinishStop
	if r.generated >= r.maxTokens {
		reason = catalogue.FinishLength
	}
	s := e.stats
	s.finished[reason]++
	s.httpRequests++
	e.free += r.blocks
	r.blocks = 0
	s.e2e.observe(e.now - r.arrival)
	s.inference.observe(e.now - r.scheduled)
	s.inferenceSum += e.now - r.scheduled
	s.decode.observe(e.now - r.firstToken)
	if r.generated > 1 {
		s.tpot.observe((e.now - r.firstToken) / float64(r.generated-1))
	}
	s.promptLen.observe(float64(r.prompt))
	s.genLen.observe(float64(r.generated))
	s.kvComputed.observe(float64(r.prompt - r.cached))
	s.maxGen.observe(float64(r.maxTokens))
	s.paramsMaxTokens.observe(float64(r.maxTokens))
	s.paramsN.observe(1)
	s.preemptionsPerReq.observe(float64(r.preemptions))
}

// kvUsage is vLLM's 1 − free/(num_gpu_blocks − 1), clamped to 0–1.
func (e *engine) kvUsage() float64 {
	n := float64(e.cfg.NumGPUBlocks - 1)
	if n <= 0 {
		return 0
	}
	return math.Max(0, math.Min(1, 1-float64(e.free)/n))
}
