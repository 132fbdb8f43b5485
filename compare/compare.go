// Package compare sets two recordings side by side (vtop diff): the load
// each one served, whether that makes the comparison fair, the latency,
// throughput and quality figures with their deltas, and one verdict line
// naming the trade-off. Compare is pure over the recordings; Text and the
// JSON form of Result render it.
package compare

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
)

// UnfairShare is how far apart (relative) the arrival rates or the mean
// prompt lengths of two recordings may be before the comparison is called
// unfair.
const UnfairShare = 0.10

// Options select the part of each recording compared and the SLOs.
type Options struct {
	// Skip is how much of the start of each recording to leave out (the
	// warm-up), Length how much to compare after it (0: to the end).
	Skip, Length time.Duration
	// Config holds the SLOs of goodput (its Window is ignored).
	Config analysis.Config
}

// Load is the traffic a recording served.
type Load struct {
	ArrivalsPerSecond analysis.Num `json:"arrivals_per_second"`
	// Concurrency is the mean number of running requests.
	Concurrency          analysis.Num `json:"concurrency"`
	MeanPromptTokens     analysis.Num `json:"mean_prompt_tokens"`
	PromptTokensP50      analysis.Num `json:"prompt_tokens_p50"`
	PromptTokensP90      analysis.Num `json:"prompt_tokens_p90"`
	MeanGenerationTokens analysis.Num `json:"mean_generation_tokens"`
	GenerationTokensP50  analysis.Num `json:"generation_tokens_p50"`
	GenerationTokensP90  analysis.Num `json:"generation_tokens_p90"`
}

// Side is one recording's figures over the part compared.
type Side struct {
	Name     string    `json:"name"`
	Replicas int       `json:"replicas"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Load     Load      `json:"load"`

	TTFT                      analysis.Quantiles   `json:"ttft_seconds"`
	ITL                       analysis.Quantiles   `json:"itl_seconds"`
	E2E                       analysis.Quantiles   `json:"e2e_seconds"`
	RequestsPerSecond         analysis.Num         `json:"requests_per_second"`
	PromptTokensPerSecond     analysis.Num         `json:"prompt_tokens_per_second"`
	GenerationTokensPerSecond analysis.Num         `json:"generation_tokens_per_second"`
	Goodput                   analysis.Num         `json:"goodput"` // share of requests within the SLOs
	GoodputPerSecond          analysis.Num         `json:"goodput_per_second"`
	Finished                  analysis.FinishRates `json:"finished_share"` // share of finished requests by reason
	PreemptionsPerSecond      analysis.Num         `json:"preemptions_per_second"`
	KVCacheUsage              analysis.Num         `json:"kv_cache_usage_mean"`
	// Warnings are what summing the replicas left out.
	Warnings []string `json:"warnings,omitempty"`
}

// Result is the comparison of a baseline and a candidate.
type Result struct {
	Baseline  Side `json:"baseline"`
	Candidate Side `json:"candidate"`
	// Unfair lists why the loads differ too much for a fair comparison.
	Unfair []string `json:"unfair,omitempty"`
	// Verdict is one line naming the trade-off.
	Verdict string `json:"verdict"`
}

// ErrTooShort is returned when the part compared holds fewer than two
// readings of a recording.
var ErrTooShort = errors.New("the part compared holds fewer than two readings")

// Compare compares candidate with baseline.
func Compare(baseline, candidate *record.Recording, baseName, candName string, opts Options) (Result, error) {
	b, err := side(baseline, baseName, opts)
	if err != nil {
		return Result{}, err
	}
	c, err := side(candidate, candName, opts)
	if err != nil {
		return Result{}, err
	}
	return Result{Baseline: b, Candidate: c, Unfair: unfair(b.Load, c.Load), Verdict: verdict(b, c)}, nil
}

// side computes one recording's figures over the part selected.
func side(rec *record.Recording, name string, opts Options) (Side, error) {
	from := rec.Start().Add(opts.Skip)
	if ticks := rec.Ticks(); len(ticks) > 0 && ticks[0].Time.Add(opts.Skip).After(from) {
		from = ticks[0].Time.Add(opts.Skip)
	}
	to := rec.End()
	if opts.Length > 0 && from.Add(opts.Length).Before(to) {
		to = from.Add(opts.Length)
	}
	samples, silent := fleetSamples(rec, from, to)
	if len(samples) < 2 {
		return Side{}, errors.Join(ErrTooShort, errors.New(name))
	}
	cfg := opts.Config
	if cfg.SLOTTFT == 0 {
		cfg = analysis.DefaultConfig()
	}
	end := samples[len(samples)-1].Time
	cfg.Window = end.Sub(samples[0].Time)
	rep := analysis.Analyze(end, []catalogue.Readings{{Target: name, Samples: samples}}, cfg, nil).Replicas[0]
	f := rep.Figures
	s := Side{
		Name: name, Replicas: len(rec.Targets()) - len(silent), From: samples[0].Time, To: end,
		TTFT: f.TTFT, ITL: f.ITL, E2E: f.E2E,
		RequestsPerSecond: f.RequestsPerSecond, PromptTokensPerSecond: f.PromptTokensPerSecond,
		GenerationTokensPerSecond: f.GenerationTokensPerSecond, Goodput: f.Goodput,
		GoodputPerSecond: f.Goodput * f.RequestsPerSecond, PreemptionsPerSecond: f.PreemptionsPerSecond,
		Finished:     shares(f.FinishedPerSecond, f.RequestsPerSecond),
		KVCacheUsage: mean(samples, catalogue.KVCacheUsage),
		Load:         load(samples, f),
	}
	for _, target := range silent {
		s.Warnings = append(s.Warnings, silentWarning(target))
	}
	for _, smp := range samples {
		for _, w := range smp.Warnings {
			if !slices.Contains(s.Warnings, w) {
				s.Warnings = append(s.Warnings, w)
			}
		}
	}
	return s, nil
}

// load describes the traffic from the merged samples.
func load(samples []catalogue.Sample, f analysis.Figures) Load {
	first, last := &samples[0].Total, &samples[len(samples)-1].Total
	pp50, pp90 := lengthQuantiles(first.Histograms[catalogue.PromptLength], last.Histograms[catalogue.PromptLength])
	gp50, gp90 := lengthQuantiles(first.Histograms[catalogue.GenerationLength], last.Histograms[catalogue.GenerationLength])
	return Load{
		ArrivalsPerSecond: f.ArrivalsPerSecond, Concurrency: mean(samples, catalogue.Running),
		MeanPromptTokens: f.MeanPromptTokens, PromptTokensP50: pp50, PromptTokensP90: pp90,
		MeanGenerationTokens: f.MeanGenerationTokens, GenerationTokensP50: gp50, GenerationTokensP90: gp90,
	}
}

// mean averages a gauge over the samples.
func mean(samples []catalogue.Sample, g catalogue.Scalar) analysis.Num {
	total, n := 0.0, 0
	for _, s := range samples {
		if v := s.Total.Scalars[g]; !math.IsNaN(v) {
			total, n = total+v, n+1
		}
	}
	if n == 0 {
		return analysis.NA
	}
	return analysis.Num(total / float64(n))
}

// shares turns finish rates into shares of all finished requests.
func shares(r analysis.FinishRates, total analysis.Num) analysis.FinishRates {
	div := func(v analysis.Num) analysis.Num {
		if !v.Known() || !total.Known() || total == 0 {
			return analysis.NA
		}
		return v / total
	}
	return analysis.FinishRates{Stop: div(r.Stop), Length: div(r.Length), Abort: div(r.Abort), Error: div(r.Error), Repetition: div(r.Repetition)}
}

// lengthQuantiles reads p50 and p90 of the observations between two
// readings of a length histogram: histogram_quantile over the increases.
func lengthQuantiles(first, last catalogue.Buckets) (p50, p90 analysis.Num) {
	if !first.Present() || !last.Present() || len(first.Counts) != len(last.Counts) {
		return analysis.NA, analysis.NA
	}
	inc := make([]analysis.Bucket, len(last.Counts))
	for i := range inc {
		inc[i] = analysis.Bucket{Upper: last.Bounds[i], Count: last.Counts[i] - first.Counts[i]}
	}
	return analysis.HistogramQuantile(0.5, inc), analysis.HistogramQuantile(0.9, inc)
}
