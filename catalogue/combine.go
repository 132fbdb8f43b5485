package catalogue

import (
	"math"
	"slices"
	"time"
)

// The one way to combine readings. Whoever sums parts into a whole — the
// engines of a page, the scrape targets of a Prometheus group, the
// replicas of a fleet — sums them here, by one rule per figure:
//
//   - counters, and the gauges that count something (running, waiting),
//     sum; NaN is absent and adds nothing (NanAdd);
//   - the finish reasons sum reason by reason, the draft positions
//     position by position;
//   - histograms add bucket by bucket when their bounds are equal; on
//     different bounds the part's histogram is refused and the caller
//     says so (adding onto the union of the bounds would invent the
//     counts one side never had);
//   - the sleep level is the least asleep (the lowest level): a whole
//     with one part awake serves;
//   - KV cache usage is the mean weighted by KV capacity, so that usage ×
//     capacity of the whole is the tokens its parts hold; when a part
//     that reports usage lacks its capacity (always so for the engines of
//     one page, which are alike), the plain mean;
//   - KV capacity, resident memory, GC collections and HTTP requests sum;
//   - the process start time is the latest: the whole restarted when any
//     part did, since its counters then dropped;
//   - the description (model, engine kind, router, role) is the first
//     engine part's; the derived figures are any part's.

// NewSample returns a sample taken at t with every figure absent (NaN,
// or no buckets).
func NewSample(t time.Time) Sample {
	nan := math.NaN()
	return Sample{Time: t, Total: NewSeries(), KVCapacityTokens: nan, ProcessStartTime: nan,
		ProcessRSSBytes: nan, GCCollections: nan, HTTPRequests: nan}
}

// NanAdd adds what is known of a and b: NaN means absent, so NaN + x = x,
// and the sum is NaN only when both are.
func NanAdd(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return a + b
}

// Add adds src into b bucket by bucket (counts, _sum and _count, as
// NanAdd adds) and reports whether it could: buckets on different bounds
// are not added, and b is left as it was. An absent src adds nothing. An
// absent b becomes src itself, sharing its counts: add only into buckets
// that own theirs.
func (b *Buckets) Add(src Buckets) bool {
	if !src.Present() {
		return true
	}
	if !b.Present() {
		*b = src
		return true
	}
	if !slices.Equal(b.Bounds, src.Bounds) || len(b.Counts) != len(src.Counts) {
		return false
	}
	for i, c := range src.Counts {
		b.Counts[i] = NanAdd(b.Counts[i], c)
	}
	b.Sum = NanAdd(b.Sum, src.Sum)
	b.Count = NanAdd(b.Count, src.Count)
	return true
}

// combineRule is how the values of one scalar in several parts combine.
type combineRule uint8

// The rules of the scalars.
const (
	ruleSum   combineRule = iota // summed
	ruleMean                     // the mean weighted by KV capacity
	ruleLeast                    // the lowest
	ruleMost                     // the highest
)

// scalarRules are the scalars not summed. The tokens of a KV block are a
// size, alike in every part: adding them would multiply the capacity.
var scalarRules = [NumScalars]combineRule{KVCacheUsage: ruleMean, SleepLevel: ruleLeast, KVBlockTokens: ruleMost}

// FoldScalar adds v, one series' value of scalar k, to acc, what the
// series before it gave: summed (NanAdd), but for a size such as the
// tokens of a KV block, which is the largest. KV cache usage, averaged,
// is the caller's.
func FoldScalar(k Scalar, acc, v float64) float64 {
	if k < NumScalars && scalarRules[k] == ruleMost {
		return nanMax(acc, v)
	}
	return NanAdd(acc, v)
}

// addWhole folds v into the figure of the sample as a whole that t names:
// the latest process start, the sum of the others.
func (s *Sample) addWhole(t Target, v float64) {
	switch t {
	case ToKVCapacity:
		s.KVCapacityTokens = NanAdd(s.KVCapacityTokens, v)
	case ToProcessStart:
		s.ProcessStartTime = nanMax(s.ProcessStartTime, v)
	case ToRSS:
		s.ProcessRSSBytes = NanAdd(s.ProcessRSSBytes, v)
	case ToGC:
		s.GCCollections = NanAdd(s.GCCollections, v)
	case ToHTTP:
		s.HTTPRequests = NanAdd(s.HTTPRequests, v)
	}
}

// nanMax is the larger of what is known of a and b.
func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

// Merge sums parts into one whole by the rules above. Its zero value is
// an empty sum. It never modifies a part nor shares their counts.
type Merge struct {
	sum     Sample
	started bool
	kv      kvMean
}

// kvMean is KV cache usage over the parts that report it.
type kvMean struct {
	sum, n     float64 // the plain mean's
	tokens     float64 // usage × capacity
	capacity   float64
	unweighted bool // a part with usage lacks its capacity
}

func (k *kvMean) add(usage, capacity float64) {
	if math.IsNaN(usage) {
		return
	}
	k.sum, k.n = k.sum+usage, k.n+1
	if !(capacity > 0) {
		k.unweighted = true
		return
	}
	k.tokens, k.capacity = k.tokens+usage*capacity, k.capacity+capacity
}

func (k *kvMean) value() float64 {
	switch {
	case k.n == 0:
		return math.NaN()
	case k.unweighted:
		return k.sum / k.n
	}
	return k.tokens / k.capacity
}

func (m *Merge) start() {
	if !m.started {
		m.sum, m.started = NewSample(time.Time{}), true
	}
}

// Add adds a part's series (an engine's, without a capacity of its own)
// and returns the histograms refused for bounds unlike the sum's.
func (m *Merge) Add(s *Series) HistogramSet {
	return m.add(s, math.NaN())
}

// AddSample adds a part's sample: its Total, process figures and
// description. It returns the histograms refused for bounds unlike the
// sum's. Time, Err, Engines, Instances, Backends, LoRA and Warnings are
// the caller's to set on the whole.
func (m *Merge) AddSample(s *Sample) HistogramSet {
	refused := m.add(&s.Total, s.KVCapacityTokens)
	w := &m.sum
	w.addWhole(ToKVCapacity, s.KVCapacityTokens)
	w.addWhole(ToRSS, s.ProcessRSSBytes)
	w.addWhole(ToGC, s.GCCollections)
	w.addWhole(ToHTTP, s.HTTPRequests)
	w.addWhole(ToProcessStart, s.ProcessStartTime)
	if s.HasVLLM && !w.HasVLLM {
		w.HasVLLM = true
		w.Model, w.EngineKind, w.Router, w.Role = s.Model, s.EngineKind, s.Router, s.Role
	}
	w.Derived |= s.Derived
	w.Refused |= s.Refused
	return refused
}

func (m *Merge) add(s *Series, capacity float64) HistogramSet {
	m.start()
	t := &m.sum.Total
	for k, v := range s.Scalars {
		switch scalarRules[k] {
		case ruleMean:
			m.kv.add(v, capacity)
		case ruleLeast:
			if math.IsNaN(t.Scalars[k]) || v < t.Scalars[k] {
				t.Scalars[k] = v
			}
		case ruleMost:
			t.Scalars[k] = nanMax(t.Scalars[k], v)
		default:
			t.Scalars[k] = NanAdd(t.Scalars[k], v)
		}
	}
	for r, v := range s.Finished {
		t.Finished[r] = NanAdd(t.Finished[r], v)
	}
	var refused HistogramSet
	for h, b := range s.Histograms {
		if b.Present() && !t.Histograms[h].Present() {
			b.Counts = slices.Clone(b.Counts)
		}
		if !t.Histograms[h].Add(b) {
			refused.Add(Histogram(h))
		}
	}
	for len(t.SpecAcceptedPerPos) < len(s.SpecAcceptedPerPos) {
		t.SpecAcceptedPerPos = append(t.SpecAcceptedPerPos, math.NaN())
	}
	for p, v := range s.SpecAcceptedPerPos {
		t.SpecAcceptedPerPos[p] = NanAdd(t.SpecAcceptedPerPos[p], v)
	}
	return refused
}

// Series returns the sum of the parts' series.
func (m *Merge) Series() Series {
	m.start()
	m.sum.Total.Scalars[KVCacheUsage] = m.kv.value()
	return m.sum.Total
}

// Sample returns the sum of the parts' samples, its time zero.
func (m *Merge) Sample() Sample {
	m.sum.Total = m.Series()
	return m.sum
}
