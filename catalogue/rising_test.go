package catalogue

import (
	"fmt"
	"math"
	"testing"
)

// TestMarkRising holds the histograms marked as rising to their rule: both
// readings present, the same bounds, a count per bound, no NaN, no drop.
func TestMarkRising(t *testing.T) {
	bounds := []float64{0.1, 1, math.Inf(1)}
	equal := []float64{0.1, 1, math.Inf(1)} // equal to bounds, another slice
	other := []float64{0.5, 1, math.Inf(1)}
	ttft := func(b []float64, counts ...float64) Series {
		s := NewSeries()
		s.Histograms[TTFT] = Buckets{Bounds: b, Counts: counts, Sum: math.NaN(), Count: math.NaN()}
		return s
	}
	nan := math.NaN()
	cases := []struct {
		name      string
		prev, cur Series
		rising    bool
	}{
		{"every bucket rises", ttft(bounds, 1, 2, 3), ttft(bounds, 2, 2, 5), true},
		{"no bucket moves", ttft(bounds, 1, 2, 3), ttft(bounds, 1, 2, 3), true},
		{"one bucket drops", ttft(bounds, 1, 2, 3), ttft(bounds, 2, 1, 5), false},
		{"NaN now", ttft(bounds, 1, 2, 3), ttft(bounds, 2, nan, 5), false},
		{"NaN before", ttft(bounds, 1, nan, 3), ttft(bounds, 2, 3, 5), false},
		{"absent before", NewSeries(), ttft(bounds, 2, 3, 5), false},
		{"absent now", ttft(bounds, 1, 2, 3), NewSeries(), false},
		{"equal bounds, another slice", ttft(bounds, 1, 2, 3), ttft(equal, 2, 3, 5), true},
		{"other bounds", ttft(bounds, 1, 2, 3), ttft(other, 2, 3, 5), false},
		{"a count short now", ttft(bounds, 1, 2, 3), ttft(bounds, 2, 3), false},
		{"a count short before", ttft(bounds, 1, 2), ttft(bounds, 2, 3, 5), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := Sample{Total: c.prev}
			cur := Sample{Total: c.cur}
			cur.MarkRising(&prev)
			if got := cur.Total.Rising.Has(TTFT); got != c.rising {
				t.Errorf("rising = %v, want %v", got, c.rising)
			}
			if cur.Total.Rising.Has(ITL) {
				t.Errorf("ITL, absent from both, is marked rising")
			}
		})
	}
}

// TestMarkRisingEngines holds the engines of a sample to be marked against
// the first engine of their name in the previous good sample, and a sample
// after a failure or none to be marked not rising.
func TestMarkRisingEngines(t *testing.T) {
	bounds := []float64{1, math.Inf(1)}
	series := func(counts ...float64) Series {
		s := NewSeries()
		s.Histograms[E2E] = Buckets{Bounds: bounds, Counts: counts, Sum: math.NaN(), Count: math.NaN()}
		return s
	}
	engine := func(name string, counts ...float64) Engine { return Engine{Name: name, Series: series(counts...)} }
	prev := Sample{Total: series(1, 2), Engines: []Engine{engine("0", 1, 1), engine("1", 5, 9), engine("1", 0, 0)}}
	cases := []struct {
		name    string
		prev    *Sample
		engines []Engine
		want    []bool // per engine, E2E marked rising
		total   bool
	}{
		{"in order", &prev, []Engine{engine("0", 1, 2), engine("1", 5, 9)}, []bool{true, true}, true},
		{"reordered", &prev, []Engine{engine("1", 6, 9), engine("0", 2, 2)}, []bool{true, true}, true},
		{"renamed", &prev, []Engine{engine("2", 9, 9)}, []bool{false}, true},
		// "1" is twice in prev: the first (5, 9) is the one paired, so
		// (1, 1), above the second, is a drop.
		{"a name twice before", &prev, []Engine{engine("1", 1, 1)}, []bool{false}, true},
		{"no sample before", nil, []Engine{engine("0", 1, 2)}, []bool{false}, false},
		{"a failed sample before", &Sample{Err: "connection refused", Total: series(0, 0)}, []Engine{engine("0", 1, 2)}, []bool{false}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := Sample{Total: series(1, 2), Engines: c.engines}
			cur.Total.Rising.Add(TTFT) // a stale mark, to be cleared
			for i := range cur.Engines {
				cur.Engines[i].Rising.Add(E2E)
			}
			cur.MarkRising(c.prev)
			if got := cur.Total.Rising.Has(E2E); got != c.total {
				t.Errorf("total rising = %v, want %v", got, c.total)
			}
			if cur.Total.Rising.Has(TTFT) {
				t.Errorf("stale TTFT mark kept")
			}
			for i, want := range c.want {
				if got := cur.Engines[i].Rising.Has(E2E); got != want {
					t.Errorf("engine %q rising = %v, want %v", cur.Engines[i].Name, got, want)
				}
			}
		})
	}
}

// TestMarkRisingLeavesAFailedSample holds a failed sample as it is: it has
// no figures to mark.
func TestMarkRisingLeavesAFailedSample(t *testing.T) {
	prev := Sample{Total: NewSeries()}
	cur := Sample{Err: "timeout", Total: NewSeries()}
	cur.Total.Rising.Add(ITL)
	cur.MarkRising(&prev)
	if cur.Total.Rising != 1<<ITL {
		t.Errorf("failed sample's marks changed to %b", cur.Total.Rising)
	}
}

// TestMarkRisingCounters holds the scalars, finish counts and histogram
// totals marked as rising to their rule: both readings known, and this
// one not below the other.
func TestMarkRisingCounters(t *testing.T) {
	nan := math.NaN()
	bounds := []float64{1, math.Inf(1)}
	cases := []struct {
		name      string
		prev, cur float64
		rising    bool
	}{
		{"rises", 3, 5, true},
		{"does not move", 3, 3, true},
		{"drops", 3, 2, false},
		{"NaN now", 3, nan, false},
		{"NaN before", nan, 3, false},
		{"both NaN", nan, nan, false},
		{"+Inf twice", math.Inf(1), math.Inf(1), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			series := func(v float64) Series {
				s := NewSeries()
				s.Scalars[GenerationTokens] = v
				s.Finished[FinishStop] = v
				s.Histograms[E2E] = Buckets{Bounds: bounds, Counts: []float64{0, 0}, Sum: v, Count: 1}
				s.Histograms[TTFT] = Buckets{Bounds: bounds, Counts: []float64{0, 0}, Sum: 1, Count: v}
				return s
			}
			prev, cur := Sample{Total: series(c.prev)}, Sample{Total: series(c.cur)}
			cur.MarkRising(&prev)
			got := cur.Total
			if got.RisingScalars.Has(GenerationTokens) != c.rising || got.RisingFinished.Has(FinishStop) != c.rising {
				t.Errorf("scalar rising %v, finish count rising %v; want %v", got.RisingScalars.Has(GenerationTokens), got.RisingFinished.Has(FinishStop), c.rising)
			}
			if got.RisingTotals.Has(E2E) != c.rising || got.RisingTotals.Has(TTFT) != c.rising {
				t.Errorf("totals rising with the sum moving %v, with the count moving %v; want %v", got.RisingTotals.Has(E2E), got.RisingTotals.Has(TTFT), c.rising)
			}
			if got.RisingScalars.Has(Running) || got.RisingTotals.Has(ITL) {
				t.Errorf("a scalar or histogram absent from both is marked rising")
			}
		})
	}
	t.Run("a failure before clears the marks", func(t *testing.T) {
		cur := Sample{Total: NewSeries()}
		cur.Total.RisingScalars, cur.Total.RisingFinished, cur.Total.RisingTotals = 1, 1, 1
		cur.MarkRising(&Sample{Err: "timeout"})
		if cur.Total.RisingScalars != 0 || cur.Total.RisingFinished != 0 || cur.Total.RisingTotals != 0 {
			t.Errorf("marks kept after a failed sample: %b %b %b", cur.Total.RisingScalars, cur.Total.RisingFinished, cur.Total.RisingTotals)
		}
	})
}

// TestMarkAbsent holds what a series is marked to lack to what it lacks:
// a NaN scalar or finish count and a histogram without bounds, and nothing
// that has a reading, zero and -0 included; with or without a sample before,
// and for every engine.
func TestMarkAbsent(t *testing.T) {
	bounds := []float64{1, math.Inf(1)}
	cases := []struct {
		name   string
		value  float64
		absent bool
	}{
		{"NaN", math.NaN(), true},
		{"zero", 0, false},
		{"-0", math.Copysign(0, -1), false},
		{"a reading", 12, false},
		{"+Inf", math.Inf(1), false},
	}
	for _, c := range cases {
		for _, prev := range []*Sample{nil, {Total: NewSeries()}} {
			t.Run(fmt.Sprintf("%s, a sample before %v", c.name, prev != nil), func(t *testing.T) {
				s := NewSeries()
				s.Scalars[Waiting] = c.value
				s.Finished[FinishAbort] = c.value
				if !c.absent {
					s.Histograms[ITL] = Buckets{Bounds: bounds, Counts: []float64{c.value, c.value}, Sum: c.value, Count: c.value}
				}
				cur := Sample{Total: s, Engines: []Engine{{Name: "0", Series: s}}}
				cur.MarkRising(prev)
				for _, got := range []*Series{&cur.Total, &cur.Engines[0].Series} {
					if got.AbsentScalars.Has(Waiting) != c.absent || got.AbsentFinished.Has(FinishAbort) != c.absent || got.AbsentHistograms.Has(ITL) != c.absent {
						t.Errorf("scalar absent %v, finish count absent %v, histogram absent %v; want %v",
							got.AbsentScalars.Has(Waiting), got.AbsentFinished.Has(FinishAbort), got.AbsentHistograms.Has(ITL), c.absent)
					}
					if !got.AbsentScalars.Has(Running) || !got.AbsentHistograms.Has(TTFT) {
						t.Errorf("a scalar or histogram the page lacks is not marked absent")
					}
				}
			})
		}
	}
}
