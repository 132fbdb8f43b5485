package analysis

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestFiguresDoNotDependOnMarks: the figures and the evidence of a window
// are the same, bit for bit, whether its samples carry the marks a source
// sets (MarkRising: what rose since the sample before, what the page
// lacks) or none, over random windows with missing readings, NaNs,
// counter resets, absent series, histograms that change bounds or lose
// counts, and windows of one sample. The marks only let the analysis skip
// readings (a histogram that rose throughout is read off its ends, an
// absent metric is not looked for); what the figures are is held to the
// definitions of rate() and histogram_quantile() by the tests of the
// figures on hand-made samples (definitions_test.go, TestFigures).
func TestFiguresDoNotDependOnMarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cfg := DefaultConfig()
	rising := 0         // histograms read off their first and last readings
	risingCounters := 0 // scalars, finish counts and totals read so
	everySample := 0    // counters in every sample, extrapolated over the window's own span
	stillGauges := 0    // queues and batches that never moved, whose slope is not worked out
	absent := 0         // metrics no series of the window has, not looked for
	for n := range 3000 {
		// A third of the windows are steady, their histograms rising
		// throughout as most real ones do, so that the short cut for
		// those is taken as often as the walk.
		steady := n%3 == 1
		samples, now := randomSamples(rng, steady)
		plain := unmarked(samples)
		markRising(samples)
		if n%3 == 0 {
			cfg.SLOE2E = 10 * time.Second
		} else {
			cfg.SLOE2E = 0
		}
		length := time.Duration(2+rng.IntN(20)) * time.Second
		marked, bare := newWindow(samples, now, length), newWindow(plain, now, length)
		if len(marked.samples) == 0 {
			continue
		}
		series := make([]*catalogue.Series, len(marked.samples))
		bareSeries := make([]*catalogue.Series, len(bare.samples))
		for i := range marked.samples {
			if steady || rng.IntN(8) != 0 {
				series[i], bareSeries[i] = &marked.samples[i].Total, &bare.samples[i].Total
			}
		}
		r := risingThroughout(series)
		rising += bits.OnesCount16(uint16(r.buckets))
		risingCounters += bits.OnesCount32(uint32(r.scalars)) + bits.OnesCount8(uint8(r.finished)) + bits.OnesCount16(uint16(r.totals))
		a := absentThroughout(series)
		absent += bits.OnesCount32(uint32(a.scalars)) + bits.OnesCount8(uint8(a.finished)) + bits.OnesCount16(uint16(a.histograms))
		// Filled over the figures of another window, as a report's are.
		gotF := naFigures()
		gotF.SpecDecodeAcceptanceByPosition = []Num{1}
		gotEv := marked.figures(&gotF, series, 1000, cfg)
		everySample += runsInEverySample(marked)
		wantF := naFigures()
		wantEv := bare.figures(&wantF, bareSeries, 1000, cfg)
		for _, g := range []gaugeStats{gotEv.Running, gotEv.Waiting} {
			if g.N >= 2 && g.Min == g.Max {
				stillGauges++
			}
		}
		if got, want := fmt.Sprintf("%+v", gotF), fmt.Sprintf("%+v", wantF); got != want {
			t.Fatalf("case %d: figures differ\n  marked %s\nunmarked %s", n, got, want)
		}
		if got, want := fmt.Sprintf("%+v", gotEv), fmt.Sprintf("%+v", wantEv); got != want {
			t.Fatalf("case %d: evidence differs\n  marked %s\nunmarked %s", n, got, want)
		}
	}
	if rising < 1000 {
		t.Errorf("only %d histograms rose throughout their window: the short cut is hardly tested", rising)
	}
	if risingCounters < 5000 {
		t.Errorf("only %d scalars, finish counts and totals rose throughout their window: the short cut is hardly tested", risingCounters)
	}
	if everySample < 5000 {
		t.Errorf("only %d counters were read in every sample of their window: the window's span is hardly tested", everySample)
	}
	if stillGauges < 300 {
		t.Errorf("only %d queues and batches never moved: the slope of a still gauge is hardly tested", stillGauges)
	}
	if absent < 5000 {
		t.Errorf("only %d metrics were absent throughout their window: skipping them is hardly tested", absent)
	}
	t.Logf("%d histograms and %d scalars, finish counts and totals rose throughout their window; %d counters were read in every sample; %d gauges never moved; %d metrics were absent throughout",
		rising, risingCounters, everySample, stillGauges, absent)
}

// unmarked is a copy of samples without any mark: nothing known to have
// risen, nothing known to be absent.
func unmarked(samples []catalogue.Sample) []catalogue.Sample {
	return eachSeries(samples, clearMarks)
}

// clearMarks takes every mark off s.
func clearMarks(s *catalogue.Series) {
	s.Rising, s.RisingScalars, s.RisingFinished, s.RisingTotals = 0, 0, 0, 0
	s.AbsentScalars, s.AbsentFinished, s.AbsentHistograms = 0, 0, 0
}

// runsInEverySample counts the runs of the window's last gatherRuns that
// read every sample of a window of at least two: those extrapolated over
// the window's own span (spanOf).
func runsInEverySample(w *window) int {
	n := 0
	count := func(runs []counterRun) {
		for _, r := range runs {
			if r.n >= 2 && r.n == len(w.ms) {
				n++
			}
		}
	}
	count(w.runs.scalars[:])
	count(w.runs.finished[:])
	count(w.runs.histSum[:])
	count(w.runs.histCount[:])
	return n
}

// markRising marks every sample against the good one before it, as the
// scraper does when it stores them.
func markRising(samples []catalogue.Sample) {
	var prev *catalogue.Sample
	for i := range samples {
		samples[i].MarkRising(prev)
		if samples[i].OK() {
			prev = &samples[i]
		}
	}
}

// randomSamples is a window's worth of random pages, some failed, and the
// time of the last. Steady pages keep their histograms' bounds and never
// lose or reset a bucket.
func randomSamples(rng *rand.Rand, steady bool) ([]catalogue.Sample, time.Time) {
	n := 1 + rng.IntN(14)
	boundSets := [][]float64{
		{0.1, 0.5, 1, 2.5, inf},
		append([]float64(nil), 0.1, 0.5, 1, 2.5, inf), // equal, not the same slice
		{-1, 0, 1, 10, inf},
		{1, 2, 4},                      // no +Inf bucket
		{0.5, 0.5, 1, inf},             // a bound twice
		{0.1, 0.2, 0.4, 0.8, 1.6, inf}, // another length
	}
	counters := walk{rng: rng}
	state := make(map[string]float64)
	absent := make(map[string]bool)
	still := make(map[string]bool) // a steady window's gauges that never move, as an empty queue
	value := func(key string, counter bool) float64 {
		if _, seen := state[key]; !seen {
			absent[key] = rng.IntN(4) == 0
			state[key] = float64(rng.IntN(5))
			still[key] = steady && !counter && rng.IntN(2) == 0
		}
		if absent[key] || rng.IntN(12) == 0 {
			return math.NaN()
		}
		if !still[key] {
			state[key] = counters.next(state[key], counter)
		}
		return state[key]
	}
	bucket := func(key string) float64 {
		if !steady {
			return value(key, true)
		}
		state[key] += float64(rng.IntN(3))
		return state[key]
	}
	histBounds := make(map[int][]float64)
	samples := make([]catalogue.Sample, n)
	t := t0
	for i := range samples {
		t = t.Add(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		s := &samples[i]
		s.Time = t
		if rng.IntN(10) == 0 {
			s.Err = "connection refused"
			continue
		}
		s.Total = catalogue.NewSeries()
		for k := range s.Total.Scalars {
			s.Total.Scalars[k] = value(fmt.Sprint("s", k), catalogue.Scalar(k).IsCounter())
		}
		for r := range s.Total.Finished {
			s.Total.Finished[r] = value(fmt.Sprint("f", r), true)
		}
		for h := range s.Total.Histograms {
			b, ok := histBounds[h]
			if !ok || !steady && rng.IntN(10) == 0 {
				b = boundSets[rng.IntN(len(boundSets))]
				if !steady && rng.IntN(5) == 0 {
					b = nil
				}
				histBounds[h] = b
			}
			counts := make([]float64, len(b))
			for j := range counts {
				counts[j] = bucket(fmt.Sprint("h", h, "b", j))
			}
			if !steady && len(counts) > 0 && rng.IntN(15) == 0 {
				counts = counts[:len(counts)-1]
			}
			s.Total.Histograms[h] = catalogue.Buckets{Bounds: b, Counts: counts,
				Sum: value(fmt.Sprint("h", h, "sum"), true), Count: value(fmt.Sprint("h", h, "count"), true)}
		}
		if rng.IntN(3) == 0 {
			pos := make([]float64, rng.IntN(4))
			for p := range pos {
				pos[p] = value(fmt.Sprint("pos", p), true)
			}
			s.Total.SpecAcceptedPerPos = pos
		}
	}
	return samples, t.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
}

// walk moves random readings: counters mostly up, now and then reset,
// gauges anywhere, with repeats and whole numbers so that equal readings
// and ties occur.
type walk struct{ rng *rand.Rand }

// next is the reading after v.
func (w walk) next(v float64, counter bool) float64 {
	switch r := w.rng.IntN(20); {
	case !counter:
		return float64(w.rng.IntN(50)) / 4
	case r == 0:
		return float64(w.rng.IntN(3)) // a reset
	case r < 5:
		return v // no change
	case r == 5:
		return v + w.rng.Float64()
	}
	return v + float64(w.rng.IntN(30))
}

// TestEngineReportsMatchSearchByName holds the engines found by index in
// samples whose engines are the newest page's, in order, to the engines
// found by name in every sample (engineSeries), over pages whose engines
// are renamed, reordered, missing, added or named twice.
func TestEngineReportsMatchSearchByName(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	names := []string{"0", "1", "2", "3"}
	cfg := DefaultConfig()
	for n := range 500 {
		samples, now := randomSamples(rng, false)
		for i := range samples {
			k := rng.IntN(5)
			for e := range k {
				name := names[e]
				if rng.IntN(6) == 0 {
					name = names[rng.IntN(len(names))]
				}
				series := samples[i].Total
				series.Scalars[catalogue.Running] = float64(e + i)
				samples[i].Engines = append(samples[i].Engines, catalogue.Engine{Name: name, Series: series})
			}
		}
		markRising(samples)
		w := newWindow(samples, now, 10*time.Second)
		if len(w.samples) == 0 {
			continue
		}
		engines := w.samples[len(w.samples)-1].Engines
		got := w.engineReports(engines, cfg, false)
		var want []EngineReport
		for _, e := range engines {
			series := make([]*catalogue.Series, len(w.samples))
			for i, s := range w.samples {
				series[i] = s.EngineSeries(e.Name)
			}
			want = append(want, EngineReport{Engine: e.Name})
			w.figures(&want[len(want)-1].Figures, series, math.NaN(), cfg)
		}
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Fatalf("case %d: engine reports differ\n got %s\nwant %s", n, g, w)
		}
	}
}
