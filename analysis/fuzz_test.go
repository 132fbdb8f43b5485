package analysis

import (
	"encoding/json"
	"github.com/vtop-dev/vtop/testutil"
	"math"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// fuzzBoundSets are the bucket layouts a fuzzed histogram switches between:
// a real one, one without +Inf, and one with a negative and a duplicate
// bound.
var fuzzBoundSets = [][]float64{
	{0.1, 0.5, 1, 2.5, math.Inf(1)},
	{0.1, 0.5, 1, 2.5},
	{-1, 0, 1, 1, math.Inf(1)},
}

// fuzzSamples builds a sample sequence from fuzz bytes: random intervals,
// failed scrapes, counter resets, NaN (absent) values, non-monotonic
// buckets and missing +Inf.
func fuzzSamples(data []byte) []catalogue.Sample {
	in := testutil.NewFuzzBytes(data)
	n := 2 + int(in.Next()%40)
	at := t0
	cur := catalogue.NewSeries()
	for k := range cur.Scalars {
		cur.Scalars[k] = 0
	}
	for r := range cur.Finished {
		cur.Finished[r] = 0
	}
	var samples []catalogue.Sample
	for range n {
		at = at.Add(time.Duration(in.Next()%4)*time.Second + time.Duration(in.Next())*time.Millisecond)
		op := in.Next()
		if op%13 == 1 {
			samples = append(samples, catalogue.Sample{Time: at, Err: "boom"})
			continue
		}
		if op%11 == 2 { // restart: every counter back to zero
			for k := range cur.Scalars {
				cur.Scalars[k] = 0
			}
			for r := range cur.Finished {
				cur.Finished[r] = 0
			}
		}
		for k := range cur.Scalars {
			if catalogue.Scalar(k).IsCounter() {
				cur.Scalars[k] += float64(in.Next())
			} else {
				cur.Scalars[k] = float64(in.Next())
			}
		}
		for r := range cur.Finished {
			if in.Next()%7 == 3 { // one reason resets alone
				cur.Finished[r] = 0
			}
			cur.Finished[r] += float64(in.Next() % 16)
		}
		page := cur
		if op%5 == 3 {
			page.Scalars[in.Next()%uint8(catalogue.NumScalars)] = math.NaN()
			page.Finished[in.Next()%uint8(catalogue.NumFinishReasons)] = math.NaN()
		}
		for h := range catalogue.NumHistograms {
			bounds := fuzzBoundSets[in.Next()%uint8(len(fuzzBoundSets))]
			counts := make([]float64, len(bounds))
			c := 0.0
			for j := range counts {
				c += float64(in.Next() % 8)
				counts[j] = c
				if in.Next()%9 == 0 {
					counts[j] = float64(in.Next()) // non-monotonic
				}
			}
			page.Histograms[h] = catalogue.Buckets{Bounds: bounds, Counts: counts, Sum: float64(in.Next()), Count: c}
		}
		samples = append(samples, catalogue.Sample{Time: at, HasVLLM: op%17 != 4, Total: page,
			KVCapacityTokens: float64(in.Next()) * 1000, ProcessStartTime: float64(op % 2),
			ProcessRSSBytes: 1, GCCollections: math.NaN(), HTTPRequests: math.NaN()})
	}
	return samples
}

// observedIncrease is the counter increase the good samples of the window
// show, resets counted as in Prometheus: an extrapolated increase is at
// most 1 + 2×1.1 = 3.2 times this.
func observedIncrease(samples []catalogue.Sample, now time.Time, window time.Duration, value func(*catalogue.Sample) float64) float64 {
	var total float64
	last := math.NaN()
	for i := range samples {
		s := &samples[i]
		if !s.OK() || s.Time.Before(now.Add(-window)) || s.Time.After(now) {
			continue
		}
		v := value(s)
		if math.IsNaN(v) {
			continue
		}
		if !math.IsNaN(last) {
			if v >= last {
				total += v - last
			} else {
				total += v
			}
		}
		last = v
	}
	return total
}

// watched is the range a rate is over: the window, or less when the first
// good sample is inside it (vtop has watched the target for less).
func watched(samples []catalogue.Sample, now time.Time, window time.Duration) float64 {
	for i := range samples {
		if samples[i].OK() {
			if since := now.Sub(samples[i].Time); since > 0 && since < window {
				return since.Seconds()
			}
			break
		}
	}
	return window.Seconds()
}

// figuresTime is the latest end of a window the figures of a report on
// samples can be over: the newest sample's time, or, when that scrape
// failed, the newest good one's, since a failing replica keeps the figures
// it had when last seen. A window ending earlier holds a suffix of the
// samples this one holds and has watched no longer, so the bound at this
// time holds for it too.
func figuresTime(samples []catalogue.Sample) time.Time {
	newest := samples[len(samples)-1]
	if newest.OK() {
		return newest.Time
	}
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].OK() {
			return samples[i].Time
		}
	}
	return newest.Time
}

func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{5, 0, 0, 0})
	f.Add([]byte{30, 1, 200, 2, 9, 9, 9, 11, 13, 7, 3, 250, 1, 1, 0, 3, 4, 5, 6})
	f.Add([]byte("restarts and NaN and buckets without +Inf, many of them"))
	f.Fuzz(func(t *testing.T, data []byte) {
		samples := fuzzSamples(data)
		now := samples[len(samples)-1].Time
		cfg := DefaultConfig()
		cfg.SLOE2E = 2 * time.Second
		first := Analyze(now.Add(-time.Second), []catalogue.Readings{{Target: "x", Samples: samples}}, cfg, nil)
		rep := Analyze(now, []catalogue.Readings{{Target: "x", Samples: samples}}, cfg, &first)
		r := rep.Replicas[0]
		if r.State > StateDown {
			t.Fatalf("state %d", r.State)
		}
		rates := map[string]struct {
			got   Num
			value func(*catalogue.Sample) float64
		}{
			"stop/s":        {r.FinishedPerSecond.Stop, func(s *catalogue.Sample) float64 { return s.Total.Finished[catalogue.FinishStop] }},
			"abort/s":       {r.FinishedPerSecond.Abort, func(s *catalogue.Sample) float64 { return s.Total.Finished[catalogue.FinishAbort] }},
			"prompt tok/s":  {r.PromptTokensPerSecond, func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.PromptTokens] }},
			"preemptions/s": {r.PreemptionsPerSecond, func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.Preemptions] }},
		}
		judgedAt := figuresTime(samples)
		for name, rt := range rates {
			if !rt.got.Known() {
				continue
			}
			limit := 3.2*observedIncrease(samples, judgedAt, cfg.Window, rt.value)/watched(samples, judgedAt, cfg.Window) + 1e-9
			if rt.got < 0 || rt.got.Float() > limit {
				t.Errorf("%s = %v, outside [0, %v]", name, rt.got, limit)
			}
		}
		for name, share := range map[string]Num{"success": r.SuccessRate, "goodput": r.Goodput, "abort share": r.AbortShare} {
			if share.Known() && (share < 0 || share > 1) {
				t.Errorf("%s = %v, outside [0, 1]", name, share)
			}
		}
		lo, hi := -1.0, 2.5 // the extremes of fuzzBoundSets
		for _, q := range []Quantiles{r.TTFT, r.ITL, r.E2E, r.Queue, r.Prefill, r.Decode} {
			for i, v := range []Num{q.P50, q.P90, q.P99} {
				if !math.IsNaN(v.Float()) && (v.Float() < lo || v.Float() > hi) {
					t.Errorf("quantile %v outside the bucket bounds [%v, %v]", v, lo, hi)
				}
				b := []QuantileBucket{q.P50Bucket, q.P90Bucket, q.P99Bucket}[i]
				if math.IsNaN(v.Float()) != !b.known() {
					t.Errorf("quantile %v with bucket %v: both known or neither", v, b)
				}
				if b.known() && (v < b.Lower || v > b.Upper) {
					t.Errorf("quantile %v outside its own bucket %v", v, b)
				}
			}
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Errorf("JSON: %v", err)
		}
	})
}
