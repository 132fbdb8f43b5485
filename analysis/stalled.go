package analysis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// stalledSpan is how long work must be present with no token generated
// and no request finished before an engine is STALLED: some two hundred
// decode steps, longer than any one prefill step, and well within the
// 15 s an on-call engineer should wait.
const stalledSpan = 5 * time.Second

// stalledAction is the first action for an engine that stopped stepping.
const stalledAction = "the engine stopped stepping: restart it; check the GPU (Xid errors in the kernel log, nvidia-smi) and its interconnect (NCCL, NVLink)"

// quiet is the evidence of an engine that stopped stepping: the readings
// since its work counters last moved, and whether anything else on the
// page moved over them, which tells a live API server over a hung engine
// from frozen values.
type quiet struct {
	// Known is set when a work counter is on the page of two readings.
	Known bool
	// Since is the newest reading at which a work counter moved (Found),
	// else the oldest known without one; either may be carried.
	Since time.Time
	Found bool
	// Seconds and Readings are the time from Since to the newest good
	// reading and the good readings in hand over it.
	Seconds  float64
	Readings int
	// What moved over those readings besides the work counters.
	Running, Waiting, KV gaugeStats
	HTTP                 float64
	GC                   bool
}

// Live reports whether anything on the page moved over the quiet readings.
func (q *quiet) Live() bool {
	return moved(q.Running) || moved(q.Waiting) || moved(q.KV) || q.HTTP > 0 || q.GC
}

// moved reports whether a gauge took more than one value.
func moved(g gaugeStats) bool { return g.N > 1 && g.Min != g.Max }

// still reports whether a gauge took at most one value (or is absent).
func still(g gaugeStats) bool { return !moved(g) }

// workCounters are the counters that move when an engine steps.
var workCounters = []catalogue.Scalar{catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.FinishedRequests}

// workHistograms are the histograms whose count moves with a token (ITL,
// even where the token counters move only when a request finishes, as
// SGLang's do), a first token or a finished request.
var workHistograms = []catalogue.Histogram{catalogue.ITL, catalogue.TTFT, catalogue.E2E, catalogue.PromptLength, catalogue.GenerationLength}

// workMoved reports whether a work counter changed from reading a to the
// later reading b (a drop is a restart), and whether any is known in both.
func workMoved(a, b *catalogue.Series) (changed, known bool) {
	cmp := func(x, y float64) {
		if math.IsNaN(x) || math.IsNaN(y) {
			return
		}
		known = true
		if x != y {
			changed = true
		}
	}
	for _, k := range workCounters {
		cmp(a.Scalars[k], b.Scalars[k])
	}
	for r := range catalogue.NumFinishReasons {
		cmp(a.Finished[r], b.Finished[r])
	}
	for _, h := range workHistograms {
		if a.Histograms[h].Present() && b.Histograms[h].Present() {
			cmp(a.Histograms[h].Count, b.Histograms[h].Count)
		}
	}
	return changed, known
}

// quietSpan is the quiet evidence of the samples in hand (oldest first,
// failed ones skipped); when no reading in hand shows a movement, the
// previous report's LastToken carries it. It allocates nothing: it runs
// for every replica at every evaluation.
func quietSpan(samples []catalogue.Sample, prev *ReplicaReport) quiet {
	var q quiet
	newest := len(samples) - 1
	for newest >= 0 && !samples[newest].OK() {
		newest--
	}
	if newest < 0 {
		return q
	}
	// first is the oldest good reading of the quiet stretch.
	first, readings := newest, 1
	for i := newest - 1; i >= 0; i-- {
		if !samples[i].OK() {
			continue
		}
		changed, known := workMoved(&samples[i].Total, &samples[first].Total)
		q.Known = q.Known || known
		if changed {
			q.Found = true
			break
		}
		first = i
		readings++
	}
	if !q.Known {
		return q
	}
	q.Since = samples[first].Time
	if !q.Found && prev != nil && !prev.LastToken.IsZero() && !prev.LastToken.After(q.Since) {
		q.Since, q.Found = prev.LastToken, !prev.lastTokenBound
	}
	quietOnes := samples[first : newest+1]
	q.Seconds, q.Readings = samples[newest].Time.Sub(q.Since).Seconds(), readings
	q.Running, q.Waiting, q.KV = sampleGauge(quietOnes, catalogue.Running), sampleGauge(quietOnes, catalogue.Waiting), sampleGauge(quietOnes, catalogue.KVCacheUsage)
	q.HTTP = plainIncrease(len(quietOnes), func(i int) float64 { return goodValue(&quietOnes[i], quietOnes[i].HTTPRequests) })
	q.GC = plainIncrease(len(quietOnes), func(i int) float64 { return goodValue(&quietOnes[i], quietOnes[i].GCCollections) }) > 0
	return q
}

// sampleGauge summarises gauge k of the good samples' totals, but for the
// mean; NaN when none knows it.
func sampleGauge(samples []catalogue.Sample, k catalogue.Scalar) gaugeStats {
	g := gaugeStats{First: math.NaN(), Last: math.NaN(), Min: math.NaN(), Max: math.NaN(), Mean: math.NaN()}
	for i := range samples {
		v := samples[i].Total.Scalars[k]
		if !samples[i].OK() || math.IsNaN(v) {
			continue
		}
		if g.N == 0 {
			g.First, g.Min, g.Max = v, v, v
		}
		g.Min, g.Max, g.Last = min(g.Min, v), max(g.Max, v), v
		g.N++
	}
	return g
}

// longEnoughForStall reports whether the quiet readings prove a stall:
// stalledSpan over staleMinSamples readings, and most of the window for
// an engine that counts only when requests end, as for STALE.
func (ev *evidence) longEnoughForStall(cfg Config) bool {
	q := &ev.Quiet
	if q.Readings < staleMinSamples || q.Seconds < stalledSpan.Seconds()-0.05 {
		return false
	}
	return !ev.countsAtEnd() || q.Seconds >= staleWindowShare*cfg.Window.Seconds()
}

// stalledVerdict: work is present and no token was generated nor request
// finished over stalledSpan, while the page is alive: the engine stopped
// stepping under an API server that still answers. A page on which
// nothing moves at all is frozen telemetry (staleVerdict).
func stalledVerdict(f *Figures, ev *evidence, cfg Config) (verdict, bool) {
	q := &ev.Quiet
	queue := f.Waiting
	if f.WaitingCapacity.Known() {
		queue = f.WaitingCapacity
	}
	if !q.Known || !(f.Running > 0 || queue > 0) || !q.Live() || !ev.longEnoughForStall(cfg) {
		return verdict{}, false
	}
	quiet := duration(time.Duration(q.Seconds * float64(time.Second)))
	since := fmt.Sprintf("for %s (since %s)", quiet, q.Since.Format(human.Clock))
	if !q.Found {
		since = fmt.Sprintf("for at least %s (none in any reading since %s)", quiet, q.Since.Format(human.Clock))
	}
	reasons := []string{fmt.Sprintf("no token generated %s while running %s, waiting %s; the API server still answers",
		since, count(f.Running.Float()), count(f.Waiting.Float()))}
	var live []string
	for _, g := range []struct {
		name  string
		stats gaugeStats
		word  func(float64) string
	}{{"waiting", q.Waiting, count}, {"running", q.Running, count}, {"KV cache", q.KV, percent}} {
		if moved(g.stats) {
			live = append(live, fmt.Sprintf("%s %s → %s", g.name, g.word(g.stats.First), g.word(g.stats.Last)))
		}
	}
	if q.HTTP > 0 {
		live = append(live, "http_requests_total rose by "+count(q.HTTP))
	}
	if q.GC {
		live = append(live, "the API server's own process counters move (python_gc_collections_total)")
	}
	reasons = append(reasons, "the page is live over those readings: "+strings.Join(live, ", "))
	return verdict{State: StateStalled, Reasons: reasons, Action: stalledAction}, true
}

// goodValue is v, a value of sample s, or NaN when s is a failed scrape.
func goodValue(s *catalogue.Sample, v float64) float64 {
	if !s.OK() {
		return math.NaN()
	}
	return v
}
