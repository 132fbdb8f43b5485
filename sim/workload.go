package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// Class is one kind of request in the traffic: its prompt and output lengths
// are log-normal around a median, and the client caps the output with
// max_tokens (a request that reaches the cap finishes with reason "length").
type Class struct {
	// Weight is the share of this class among arrivals (relative to the
	// other classes of the same Load).
	Weight float64
	// PromptMedian and PromptSigma give the log-normal prompt length in
	// tokens (sigma of the underlying normal).
	PromptMedian, PromptSigma float64
	// OutputMedian and OutputSigma give the log-normal number of tokens the
	// model would generate before stopping on its own.
	OutputMedian, OutputSigma float64
	// MaxTokens is the max_tokens request parameter.
	MaxTokens int
}

// Chat is chat-like traffic: prompts around 500 tokens, outputs around 300
// (mean ≈ 300 with the sigma below).
var Chat = Class{Weight: 1, PromptMedian: 450, PromptSigma: 0.7, OutputMedian: 250, OutputSigma: 0.6, MaxTokens: 1024}

// LongRAG is retrieval over several documents: prompts around 6 k tokens
// with a long tail (the design's RAG traffic, I/O ratio ~30:1).
var LongRAG = Class{Weight: 1, PromptMedian: 6000, PromptSigma: 0.6, OutputMedian: 190, OutputSigma: 0.4, MaxTokens: 512}

// LongChat is chat with long answers (reasoning, code): outputs around 1.5 k.
var LongChat = Class{Weight: 1, PromptMedian: 900, PromptSigma: 0.6, OutputMedian: 1400, OutputSigma: 0.5, MaxTokens: 4096}

// LongReport writes long reports from documents: prompts around 3 k tokens
// and answers around 1.5 k. A batch of them holds ~4.5 k tokens per
// sequence at the end, so a full H100 cache (~430 k tokens) holds fewer
// than 100 of them: the engine admits more than it can finish and preempts.
var LongReport = Class{Weight: 1, PromptMedian: 3000, PromptSigma: 0.4, OutputMedian: 1500, OutputSigma: 0.4, MaxTokens: 4096}

// Load is the traffic offered to a replica during one phase.
type Load struct {
	// Rate is the mean arrival rate in requests per second (Poisson).
	Rate float64
	// Classes is the traffic mix.
	Classes []Class
}

// Phase is a Load held for a duration.
type Phase struct {
	Duration time.Duration
	Load
}

// Workload is the traffic of a replica over time: its phases are played in
// order and the cycle repeats. A Workload with one phase is stationary.
type Workload struct {
	Phases []Phase
}

// Steady returns a stationary workload.
func Steady(rate float64, classes ...Class) Workload {
	return Workload{Phases: []Phase{{Duration: time.Hour, Load: Load{Rate: rate, Classes: classes}}}}
}

// at returns the load in force at virtual time t (seconds since start).
func (w Workload) at(t float64) *Load {
	if len(w.Phases) == 0 {
		return nil
	}
	var cycle float64
	for _, p := range w.Phases {
		cycle += p.Duration.Seconds()
	}
	if cycle <= 0 {
		return &w.Phases[0].Load
	}
	t = math.Mod(t, cycle)
	for i := range w.Phases {
		d := w.Phases[i].Duration.Seconds()
		if t < d {
			return &w.Phases[i].Load
		}
		t -= d
	}
	return &w.Phases[len(w.Phases)-1].Load
}

// maxRate is the highest arrival rate of any phase: the envelope used to
// thin a homogeneous Poisson process into the time-varying one.
func (w Workload) maxRate() float64 {
	var m float64
	for _, p := range w.Phases {
		m = max(m, p.Rate)
	}
	return m
}

// scaled returns the workload with every rate multiplied by f (used to split
// a replica's traffic among its data-parallel engines).
func (w Workload) scaled(f float64) Workload {
	out := Workload{Phases: make([]Phase, len(w.Phases))}
	copy(out.Phases, w.Phases)
	for i := range out.Phases {
		out.Phases[i].Rate *= f
	}
	return out
}

// arrivals generates a non-homogeneous Poisson process by thinning: candidate
// arrivals at the envelope rate, each kept with probability rate(t)/envelope.
type arrivals struct {
	w        Workload
	envelope float64
	next     float64 // time of the next accepted arrival; +Inf when none
}

func newArrivals(w Workload, rng *rand.Rand) arrivals {
	a := arrivals{w: w, envelope: w.maxRate(), next: 0}
	a.next = a.after(0, rng)
	return a
}

// after returns the first accepted arrival strictly after t.
func (a *arrivals) after(t float64, rng *rand.Rand) float64 {
	if a.envelope <= 0 {
		return math.Inf(1)
	}
	for {
		t += rng.ExpFloat64() / a.envelope
		if rng.Float64()*a.envelope < a.w.at(t).Rate {
			return t
		}
	}
}

// pick chooses a class of the load in force at t.
func pickClass(l *Load, rng *rand.Rand) Class {
	var total float64
	for _, c := range l.Classes {
		total += c.Weight
	}
	x := rng.Float64() * total
	for _, c := range l.Classes {
		if x < c.Weight {
			return c
		}
		x -= c.Weight
	}
	return l.Classes[len(l.Classes)-1]
}

// logNormal draws a positive integer around median with the given sigma.
func logNormal(rng *rand.Rand, median, sigma float64) int {
	return max(1, int(math.Round(median*math.Exp(sigma*rng.NormFloat64()))))
}
