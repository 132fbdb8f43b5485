package sim

import (
	"fmt"
	"time"
)

// ReplicaConfig is the hardware, the engine settings and the traffic of one
// simulated replica. The defaults model Llama 3.1 8B on one H100.
type ReplicaConfig struct {
	// Model is the model_name label.
	Model string
	// Engines is the number of data-parallel engine cores (the engine
	// label); each has its own scheduler and KV cache and gets an equal
	// share of the traffic.
	Engines int
	// MaxNumSeqs caps the running batch (--max-num-seqs).
	MaxNumSeqs int
	// NumGPUBlocks and BlockSize size the KV cache of each engine.
	NumGPUBlocks, BlockSize int
	// MaxModelLen is the longest context (--max-model-len); it also sets
	// the 1-2-5 buckets of the token-count histograms.
	MaxModelLen int
	// MaxBatchedTokens is the chunked-prefill token budget of one step.
	MaxBatchedTokens int
	// PrefillTokensPerSec is the compute-bound prefill throughput.
	PrefillTokensPerSec float64
	// DecodeBase and DecodePerSeq give the memory-bound step time: a fixed
	// cost plus a cost per sequence in the batch.
	DecodeBase, DecodePerSeq time.Duration
	// PrefixCaching turns on the prefix cache; PrefixHitShare is the mean
	// share of a prompt found in it.
	PrefixCaching  bool
	PrefixHitShare float64
	// SpecTokens is num_speculative_tokens (0: no speculative decoding);
	// SpecAcceptance is the chance that each draft token is accepted.
	SpecTokens     int
	SpecAcceptance float64
	// ClientTimeout is how long a client waits in the queue before it
	// disconnects (the request finishes as "abort"); 0 waits forever.
	ClientTimeout time.Duration
	// Workload is the traffic sent to the whole replica.
	Workload Workload

	// Engine is the server the replica impersonates (EngineVLLM by
	// default): the same queueing model, that engine's page.
	Engine string
	// MaxQueuedRequests is --max-num-queued-reqs: an arrival that finds
	// this many requests waiting is refused with a 503, which the newest
	// vLLM counts in vllm:admission_rejections. 0 admits every request.
	MaxQueuedRequests int
	// SleepLevel puts every engine to sleep (vLLM's /sleep): 1 offloads the
	// weights, 2 discards them. A sleeping engine is sent no traffic.
	SleepLevel int
	// Role is the replica's part in disaggregated serving: "" does both,
	// RolePrefill computes prompts and one token, RoleDecode receives each
	// prompt's KV over NIXL before it can run the request.
	Role string
	// KVTransferBandwidth is the NIXL link of a decode replica in bytes per
	// second; KVTransferFailure the share of transfers that fail (the
	// prompt is then recomputed locally).
	KVTransferBandwidth float64
	KVTransferFailure   float64
}

// Roles in disaggregated serving.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// DefaultConfig is one replica of Llama 3.1 8B on one H100 under chat
// traffic: ~27 k blocks of 16 tokens, 256 sequences, ~22 k prompt tokens/s,
// decode steps of 8 ms + 0.4 ms per sequence.
func DefaultConfig() ReplicaConfig {
	return ReplicaConfig{
		Model:               "meta-llama/Llama-3.1-8B-Instruct",
		Engines:             1,
		MaxNumSeqs:          256,
		NumGPUBlocks:        27000,
		BlockSize:           16,
		MaxModelLen:         32768,
		MaxBatchedTokens:    8192,
		PrefillTokensPerSec: 22000,
		DecodeBase:          8 * time.Millisecond,
		DecodePerSeq:        400 * time.Microsecond,
		ClientTimeout:       3 * time.Minute,
		Workload:            Steady(5, Chat),
	}
}

// Scenario names a kind of traffic and hardware for a fleet.
type Scenario string

// The scenarios. Each sets physical knobs (arrival rate, lengths, cache
// size), never the outputs.
const (
	// Healthy is chat traffic well within capacity (~30 running), light
	// enough that prefill chunks keep p99 ITL under the 100 ms default SLO.
	Healthy Scenario = "healthy"
	// Full sends more requests than 256 sequences drain: the queue grows
	// with the batch at its max_num_seqs cap.
	Full Scenario = "full"
	// Slow sends long RAG prompts at low load: TTFT over a second with an
	// empty queue.
	Slow Scenario = "slow"
	// Preempting gives the engine a KV cache too small for the batch of
	// long answers it admits, so it preempts.
	Preempting Scenario = "preempting"
	// Spike plays healthy → full → preempting → recovery, every 6 minutes.
	Spike Scenario = "spike"
	// Mixed gives each replica a different state: healthy, full, slow,
	// preempting, repeating; replica 0 has two data-parallel engines and
	// replica 1 prefix caching and speculative decoding.
	Mixed Scenario = "mixed"
	// Idle sends nothing.
	Idle Scenario = "idle"
	// MixedEngines is the mixed scenario served by every engine in turn:
	// replica i runs Engines()[i%5], in the state of mixed replica i, so a
	// fleet of five shows each engine's page with what it can and cannot
	// tell.
	MixedEngines Scenario = "engines"
	// Disaggregated pairs prefill and decode replicas (even: prefill, odd:
	// decode) over a 25 GB/s NIXL link; with VLLMVersion Latest their pages
	// carry the NIXL families and the decode side's deferred waiting.
	Disaggregated Scenario = "disaggregated"
)

// mixedOrder is the state of replica i%4 in the mixed scenario.
var mixedOrder = [...]Scenario{Healthy, Full, Slow, Preempting}

// ScenarioConfig returns the configuration of replica index of a fleet
// playing scenario s.
func ScenarioConfig(s Scenario, index int) (ReplicaConfig, error) {
	c := DefaultConfig()
	switch s {
	case Healthy:
		c.Workload = Steady(3, Chat)
	case Full:
		// 256 sequences at 8 + 0.4×256 ms per step drain ≈ 7.7 requests/s
		// of 300 output tokens; 16/s keeps the queue growing.
		c.Workload = Steady(16, Chat)
	case Slow:
		// Enough requests for a p99 to mean something (≥ 20 in a 30 s window)
		// while prefill stays well below saturation (6 k tokens ≈ 0.27 s
		// each); the prompts' long tail puts p99 TTFT over a second.
		c.Workload = Steady(1, LongRAG)
	case Preempting:
		// A bigger model leaves room for 4 k blocks (64 k tokens); long
		// answers outgrow it after admission.
		c.NumGPUBlocks = 4096
		c.Workload = Steady(1.1, LongChat)
	case Spike:
		c.Workload = spikeWorkload()
	case Idle:
		c.Workload = Workload{}
	case Mixed:
		return mixedConfig(index)
	case MixedEngines:
		c, err := mixedConfig(index)
		c.Engine = Engines()[index%len(Engines())]
		return c, err
	case Disaggregated:
		c.Workload = Steady(4, Chat)
		c.Role = RolePrefill
		if index%2 == 1 {
			c.Role, c.KVTransferBandwidth = RoleDecode, 25e9
		}
	default:
		return c, fmt.Errorf("unknown scenario %q", s)
	}
	return c, nil
}

// spikeWorkload is the spike scenario's cycle. Chat within capacity;
// then 12/s, above the ≈ 7.7/s 256 sequences drain (FULL); then long
// reports at 1.5/s, which the cache cannot hold once their answers grow
// (PREEMPTING, once the chat backlog has cleared); then light chat while
// the backlog drains (back to HEALTHY before the cycle repeats). The ~135
// reports of the long phase are finished within the recovery, so the
// queue does not carry over from one cycle to the next.
func spikeWorkload() Workload {
	return Workload{Phases: []Phase{
		{Duration: 60 * time.Second, Load: Load{Rate: 3, Classes: []Class{Chat}}},
		{Duration: 60 * time.Second, Load: Load{Rate: 12, Classes: []Class{Chat}}},
		{Duration: 90 * time.Second, Load: Load{Rate: 1.5, Classes: []Class{LongReport}}},
		{Duration: 150 * time.Second, Load: Load{Rate: 1.5, Classes: []Class{Chat}}},
	}}
}

// mixedConfig is replica index of the mixed fleet: the states in
// mixedOrder, the first replica with two engines (and twice the load),
// the second with prefix caching and speculative decoding.
func mixedConfig(index int) (ReplicaConfig, error) {
	c, err := ScenarioConfig(mixedOrder[index%len(mixedOrder)], index)
	if err != nil {
		return c, err
	}
	switch index {
	case 0:
		c.Engines = 2
		c.Workload = c.Workload.scaled(2)
	case 1:
		c.PrefixCaching, c.PrefixHitShare = true, 0.4
		c.SpecTokens, c.SpecAcceptance = 3, 0.7
	}
	return c, nil
}
