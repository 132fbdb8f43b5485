package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// vLLM's bucket lists from the catalogue, each with its +Inf bucket as a
// page carries it.
var (
	inf            = math.Inf(1)
	ttftBounds     = withInf(catalogue.TTFTBuckets)
	itlBounds      = withInf(catalogue.ITLBuckets)
	latencyBounds  = withInf(catalogue.RequestLatencyBuckets)
	tokenBounds    = withInf(catalogue.TokenBuckets(catalogue.DefaultMaxModelLen))
	boundsOfHistog = [catalogue.NumHistograms][]float64{
		catalogue.TTFT: ttftBounds, catalogue.ITL: itlBounds, catalogue.E2E: latencyBounds, catalogue.QueueTime: latencyBounds,
		catalogue.PrefillTime: latencyBounds, catalogue.DecodeTime: latencyBounds, catalogue.PromptLength: tokenBounds, catalogue.GenerationLength: tokenBounds,
	}
	t0 = time.Date(2026, 5, 4, 14, 0, 0, 0, time.UTC)
)

// withInf returns a copy of bounds with the +Inf bound appended.
func withInf(bounds []float64) []float64 { return append(slices.Clone(bounds), inf) }

// server is a hand-driven vLLM replica: it holds the cumulative counters a
// real server exports and produces one Sample per scrape. Every finished
// request observes the per-request values below in every histogram.
type server struct {
	running, waiting, kv float64
	kvCapacity           float64

	// finished counts per reason, tokens, preemptions and the optional
	// counter families (NaN = not exported).
	finished      [catalogue.NumFinishReasons]float64
	prompt, gen   float64
	preemptions   float64
	prefixQueries float64
	prefixHits    float64
	specDrafts    float64
	specDraftToks float64
	specAccepted  float64
	httpRequests  float64
	startTime     float64
	hist          [catalogue.NumHistograms]catalogue.Buckets
	noHistograms  bool
	engines       []string // data-parallel engine names; nil for one
	engineRunning []float64
	// refused are the figures whose values the page sends but a parser
	// refuses (NaN, past 2^53): n/a in the sample, marked refused.
	refused catalogue.FigureSet
}

// newServer returns a server with every core metric at zero and no prefix
// cache or spec-decode counters.
func newServer() *server {
	s := &server{kvCapacity: 430_000, startTime: 1.7e9, prefixQueries: math.NaN(), prefixHits: math.NaN(),
		specDrafts: math.NaN(), specDraftToks: math.NaN(), specAccepted: math.NaN()}
	for r := range s.finished {
		s.finished[r] = 0
	}
	for h := range s.hist {
		s.hist[h] = catalogue.Buckets{Bounds: boundsOfHistog[h], Counts: make([]float64, len(boundsOfHistog[h])), Sum: 0, Count: 0}
	}
	return s
}

// request is what one finished request observed.
type request struct {
	reason                                 catalogue.FinishReason
	prompt, gen                            float64
	ttft, itl, e2e, queue, prefill, decode float64
}

// chat is a typical chat request: 500 prompt tokens, 300 output, 0.5 s TTFT.
var chat = request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 0.5, itl: 0.027, e2e: 8.5, queue: 0.05, prefill: 0.45, decode: 8}

// finish records n finished requests like r.
func (s *server) finish(n float64, r request) {
	s.finished[r.reason] += n
	s.prompt += n * r.prompt
	s.gen += n * r.gen
	s.httpRequests += n
	obs := [catalogue.NumHistograms]float64{catalogue.TTFT: r.ttft, catalogue.ITL: r.itl, catalogue.E2E: r.e2e, catalogue.QueueTime: r.queue, catalogue.PrefillTime: r.prefill,
		catalogue.DecodeTime: r.decode, catalogue.PromptLength: r.prompt, catalogue.GenerationLength: r.gen}
	for h, v := range obs {
		b := &s.hist[h]
		counts := make([]float64, len(b.Counts)) // a new slice per scrape, as a parser makes
		for j, upper := range b.Bounds {
			counts[j] = b.Counts[j]
			if v <= upper {
				counts[j] += n
			}
		}
		b.Counts, b.Sum, b.Count = counts, b.Sum+n*v, b.Count+n
	}
}

// scrape returns the page the server exports at t.
func (s *server) scrape(t time.Time) catalogue.Sample {
	tot := catalogue.NewSeries()
	tot.Scalars[catalogue.Running], tot.Scalars[catalogue.Waiting], tot.Scalars[catalogue.KVCacheUsage] = s.running, s.waiting, s.kv
	tot.Scalars[catalogue.PromptTokens], tot.Scalars[catalogue.GenerationTokens], tot.Scalars[catalogue.Preemptions] = s.prompt, s.gen, s.preemptions
	tot.Scalars[catalogue.PrefixCacheQueries], tot.Scalars[catalogue.PrefixCacheHits] = s.prefixQueries, s.prefixHits
	tot.Scalars[catalogue.SpecDrafts], tot.Scalars[catalogue.SpecDraftTokens], tot.Scalars[catalogue.SpecAcceptedTokens] = s.specDrafts, s.specDraftToks, s.specAccepted
	tot.Finished = s.finished
	if !s.noHistograms {
		tot.Histograms = s.hist
	}
	smp := catalogue.Sample{Time: t, HasVLLM: true, Model: "meta-llama/Llama-3.1-8B-Instruct", Total: tot,
		KVCapacityTokens: s.kvCapacity, ProcessStartTime: s.startTime, ProcessRSSBytes: 3e9,
		GCCollections: math.NaN(), HTTPRequests: s.httpRequests, Refused: s.refused}
	for i, name := range s.engines {
		e := catalogue.Engine{Name: name, Series: halve(tot, len(s.engines))}
		if i < len(s.engineRunning) {
			e.Scalars[catalogue.Running] = s.engineRunning[i]
		}
		smp.Engines = append(smp.Engines, e)
	}
	return smp
}

// halve splits the counters of a series evenly over n engines.
func halve(s catalogue.Series, n int) catalogue.Series {
	out := s
	for k := range out.Scalars {
		if catalogue.Scalar(k) != catalogue.KVCacheUsage {
			out.Scalars[k] /= float64(n)
		}
	}
	for r := range out.Finished {
		out.Finished[r] /= float64(n)
	}
	for h := range out.Histograms {
		b := out.Histograms[h]
		counts := make([]float64, len(b.Counts))
		for j := range counts {
			counts[j] = b.Counts[j] / float64(n)
		}
		out.Histograms[h] = catalogue.Buckets{Bounds: b.Bounds, Counts: counts, Sum: b.Sum / float64(n), Count: b.Count / float64(n)}
	}
	return out
}

// step is what happens to a server in one scrape interval.
type step func(s *server, i int)

// run scrapes the server n+1 times, every interval, starting at t0, calling
// each step between scrapes; it returns the samples and the time of the
// last.
func run(s *server, n int, interval time.Duration, steps ...step) ([]catalogue.Sample, time.Time) {
	samples := []catalogue.Sample{s.scrape(t0)}
	for i := 1; i <= n; i++ {
		for _, st := range steps {
			st(s, i)
		}
		samples = append(samples, s.scrape(t0.Add(time.Duration(i)*interval)))
	}
	return samples, samples[len(samples)-1].Time
}

// finishing finishes n requests like r every interval.
func finishing(n float64, r request) step { return func(s *server, _ int) { s.finish(n, r) } }

// queueing sets waiting to first + i·growth.
func queueing(first, growth float64) step {
	return func(s *server, i int) { s.waiting = first + float64(i)*growth }
}

// preempting adds n preemptions every interval.
func preempting(n float64) step { return func(s *server, _ int) { s.preemptions += n } }

// analyzeOne evaluates one target with the default config and no history.
func analyzeOne(samples []catalogue.Sample, now time.Time, cfg Config) ReplicaReport {
	return Analyze(now, []catalogue.Readings{{Target: "gpu-a:8000", Samples: samples}}, cfg, nil).Replicas[0]
}

// queueShowing is a trail whose newest readings show a queue at last
// moving as growth does (queueTrend), as a replica's readings show a
// queue that grows or shrinks at that pace.
func queueShowing(last, growth float64) gaugeStats {
	first := last
	switch {
	case growth > 0:
		first = last - 1
	case growth < 0:
		first = last + 1
	}
	return gaugeStats{First: first, Last: last, Min: math.Min(first, last), Max: math.Max(first, last), Mean: (first + last) / 2, N: 3}
}
