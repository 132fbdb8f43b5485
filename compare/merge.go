package compare

import (
	"math"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
)

// fleetSamples reads the part [from, to] of a recording and sums its
// replicas into one sample per interval: counters, gauges and buckets add
// up (KV usage is averaged), so the analysis of the sum is the fleet's.
// A counter reset in one replica inside the part reads as a reset of the
// sum, which overstates that part's rates: compare parts without restarts.
func fleetSamples(rec *record.Recording, from, to time.Time) []catalogue.Sample {
	per := targetSamples(rec, from, to)
	var out []catalogue.Sample
	for at := from; !at.After(to); at = at.Add(rec.Header.Interval) {
		var parts []*catalogue.Sample
		for _, ss := range per {
			if s := newestAt(ss, at); s != nil {
				parts = append(parts, s)
			}
		}
		if len(parts) == len(per) && len(parts) > 0 {
			out = append(out, sum(at, parts))
		}
	}
	return out
}

// targetSamples decodes the good samples of every target in [from, to].
func targetSamples(rec *record.Recording, from, to time.Time) [][]catalogue.Sample {
	cur := record.NewCursor(rec)
	defer cur.Close()
	per := make([][]catalogue.Sample, len(rec.Targets()))
	for ti := range rec.Targets() {
		for i, f := range rec.Frames(ti) {
			if f.Failed || f.Time.Before(from) || f.Time.After(to) {
				continue
			}
			if s := cur.Sample(ti, i); s.OK() {
				per[ti] = append(per[ti], s)
			}
		}
	}
	return per
}

// newestAt returns the newest sample at or before at.
func newestAt(ss []catalogue.Sample, at time.Time) *catalogue.Sample {
	i, _ := slices.BinarySearchFunc(ss, at, func(s catalogue.Sample, t time.Time) int {
		if s.Time.After(t) {
			return 1
		}
		return -1
	})
	if i == 0 {
		return nil
	}
	return &ss[i-1]
}

// sum adds samples up into one stamped at.
func sum(at time.Time, parts []*catalogue.Sample) catalogue.Sample {
	out := catalogue.Sample{Time: at, HasVLLM: true, Total: catalogue.NewSeries(), Model: parts[0].Model,
		KVCapacityTokens: math.NaN(), ProcessStartTime: math.NaN(), ProcessRSSBytes: math.NaN(), GCCollections: math.NaN(), HTTPRequests: math.NaN()}
	kv, kvN := 0.0, 0
	for _, p := range parts {
		t := &out.Total
		for i, v := range p.Total.Scalars {
			if catalogue.Scalar(i) == catalogue.KVCacheUsage {
				if !math.IsNaN(v) {
					kv, kvN = kv+v, kvN+1
				}
				continue
			}
			t.Scalars[i] = nanAdd(t.Scalars[i], v)
		}
		for i, v := range p.Total.Finished {
			t.Finished[i] = nanAdd(t.Finished[i], v)
		}
		for h := range p.Total.Histograms {
			t.Histograms[h] = addBuckets(t.Histograms[h], p.Total.Histograms[h])
		}
		out.KVCapacityTokens = nanAdd(out.KVCapacityTokens, p.KVCapacityTokens)
	}
	if kvN > 0 {
		out.Total.Scalars[catalogue.KVCacheUsage] = kv / float64(kvN)
	}
	return out
}

func nanAdd(acc, v float64) float64 {
	if math.IsNaN(acc) {
		return v
	}
	if math.IsNaN(v) {
		return acc
	}
	return acc + v
}

// addBuckets adds b to acc when their bounds agree; otherwise the sum has
// no such histogram.
func addBuckets(acc, b catalogue.Buckets) catalogue.Buckets {
	if !b.Present() {
		return acc
	}
	if !acc.Present() {
		return catalogue.Buckets{Bounds: b.Bounds, Counts: slices.Clone(b.Counts), Sum: b.Sum, Count: b.Count}
	}
	if !slices.Equal(acc.Bounds, b.Bounds) || len(acc.Counts) != len(b.Counts) {
		return catalogue.Buckets{}
	}
	for i := range acc.Counts {
		acc.Counts[i] += b.Counts[i]
	}
	acc.Sum += b.Sum
	acc.Count += b.Count
	return acc
}
