package verdicts

import "math"

// Scenario is a fleet of modelled replicas over some virtual seconds.
type Scenario struct {
	// Name names the scenario in the report.
	Name string
	// Steady marks a scenario whose configuration does not change over
	// time: vtop's verdict should not change either (the flaps goal).
	Steady bool
	// Seconds is how long it runs.
	Seconds int
	// Replicas are the replicas' configurations.
	Replicas []Config
}

// base is one replica ≈ Llama 3.1 8B on one H100 as commonly served:
// max_num_seqs 64, 27,000 KV blocks of 16 tokens (432 k tokens), prefill
// at 10 k tokens/s, a decode step of 8 ms + 0.4 ms per running request,
// chat-like requests of about 1,000 prompt and 200 output tokens (±25 %).
// Its capacity at the cap is about 9.4 requests/s.
func base() Config {
	return Config{
		MaxNumSeqs: 64, KVBlocks: 27000, BlockSize: 16,
		PrefillTokensPerSecond: 10000, StepBase: 0.008, StepPerSeq: 0.0004,
		PromptTokens: 1000, OutputTokens: 200, Spread: 0.25,
	}
}

// steady returns c with a constant arrival rate of share × its capacity.
func steady(c Config, share float64) Config { return perSecond(c, share*c.Capacity()) }

// perSecond returns c with a constant arrival rate in requests/s.
func perSecond(c Config, rate float64) Config {
	c.Arrivals = func(float64) float64 { return rate }
	return c
}

// longPrompts returns c with prompts of mean tokens.
func longPrompts(c Config, tokens float64) Config {
	c.PromptTokens = tokens
	return c
}

// shortKV returns c with a KV cache of blocks, smaller than the batch
// its arrivals make.
func shortKV(c Config, blocks int) Config {
	c.KVBlocks = blocks
	return c
}

// spike returns c at half its capacity, with three times that from 60 s
// to 120 s.
func spike(c Config) Config {
	rate := 0.5 * c.Capacity()
	c.Arrivals = func(t float64) float64 {
		if t >= 60 && t < 120 {
			return 3 * rate
		}
		return rate
	}
	return c
}

// slowFill returns c with arrivals that grow from 0.6 to 1.4 times its
// capacity over 240 s.
func slowFill(c Config) Config {
	capacity := c.Capacity()
	c.Arrivals = func(t float64) float64 { return (0.6 + 0.8*t/240) * capacity }
	return c
}

// drains returns c at 0.4 times its capacity, with twice its capacity
// from 60 s to 90 s: a backlog that then drains.
func drains(c Config) Config {
	capacity := c.Capacity()
	c.Arrivals = func(t float64) float64 {
		if t >= 60 && t < 90 {
			return 2 * capacity
		}
		return 0.4 * capacity
	}
	return c
}

// bigSpike returns c at half its capacity, with four times that for 90 s
// (twice what it carries), then just over what it carries for 90 s (the
// queue grows slowly: the count must hold, not swing), then half again.
func bigSpike(c Config) Config {
	rate := 0.5 * c.Capacity()
	c.Arrivals = func(t float64) float64 {
		switch {
		case t >= 60 && t < 150:
			return 4 * rate
		case t >= 150 && t < 240:
			return 2.2 * rate
		}
		return rate
	}
	return c
}

// Scenarios are the benchmark's scenarios; every one runs with each seed.
func Scenarios() []Scenario {
	b := base()
	fill := slowFill(b)
	// A bigger fleet and spike: twelve replicas (24 replicas' worth at
	// the spike's top).
	big := make([]Config, 12)
	for i := range big {
		big[i] = bigSpike(b)
	}
	// Clients that give up after 5 s in the queue, at replicas that get
	// 1.6 times what they carry: a third of what finishes is aborts.
	aborting := steady(b, 1.6)
	aborting.AbortAfter = 5
	restart := steady(b, 0.6)
	restart.Outages = []Outage{{At: 120, For: 12}}
	// A slow second: the scrapes of 4 of 6 replicas, all up and serving,
	// run past the timeout at 100 s, as on a loaded host.
	late := steady(b, 0.6)
	late.LateScrapes = []int{100}
	// A target that never answers (a wrong address in the targets file)
	// beside a full replica.
	never := steady(b, 0.6)
	never.Outages = []Outage{{At: 0, For: math.Inf(1)}}
	stall := steady(b, 0.6)
	stall.Stalls = []Outage{{At: 100, For: 60}}
	return []Scenario{
		{Name: "steady healthy", Steady: true, Seconds: 240, Replicas: []Config{steady(b, 0.6)}},
		{Name: "steady full", Steady: true, Seconds: 240, Replicas: []Config{steady(b, 1.5)}},
		{Name: "preempting", Steady: true, Seconds: 240, Replicas: []Config{steady(shortKV(b, 2000), 0.8)}},
		// KV caches just large enough for the batch at the cap: FULL,
		// KV-bound, preempting now and then, never at a material cost
		// for long.
		{Name: "KV limit", Steady: true, Seconds: 240, Replicas: []Config{
			steady(shortKV(b, 4600), 1.3), steady(shortKV(b, 4625), 1.3), steady(shortKV(b, 4600), 1.4), steady(shortKV(b, 4650), 1.4),
		}},
		{Name: "slow", Steady: true, Seconds: 240, Replicas: []Config{perSecond(longPrompts(b, 14000), 2)}},
		{Name: "idle", Steady: true, Seconds: 180, Replicas: []Config{perSecond(b, 0)}},
		{Name: "restart", Seconds: 240, Replicas: []Config{restart}},
		{Name: "stall", Seconds: 300, Replicas: []Config{stall}},
		{Name: "spike", Seconds: 300, Replicas: []Config{spike(b), spike(b), spike(b)}},
		{Name: "big spike", Seconds: 330, Replicas: big},
		{Name: "aborts at full", Steady: true, Seconds: 240, Replicas: []Config{aborting, aborting}},
		{Name: "slow fill", Seconds: 240, Replicas: []Config{fill}},
		{Name: "backlog drains", Seconds: 240, Replicas: []Config{drains(b), drains(b)}},
		{Name: "just under SLO", Steady: true, Seconds: 240, Replicas: []Config{perSecond(longPrompts(b, 7200), 3)}},
		{Name: "just over SLO", Steady: true, Seconds: 240, Replicas: []Config{perSecond(longPrompts(b, 9200), 3)}},
		{Name: "timeout round", Steady: true, Seconds: 180, Replicas: []Config{late, late, late, late, steady(b, 0.6), steady(b, 0.6)}},
		{Name: "never answering", Steady: true, Seconds: 180, Replicas: []Config{never, steady(b, 1.5), steady(b, 0.6)}},
		{Name: "mixed fleet", Steady: true, Seconds: 240, Replicas: []Config{
			steady(b, 0.6), steady(b, 0.6), steady(b, 1.3),
			perSecond(longPrompts(b, 14000), 2), steady(shortKV(b, 2000), 0.8), perSecond(b, 0),
		}},
	}
}
