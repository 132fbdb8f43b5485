package sim

import "sort"

// hist is a histogram the simulator fills without locks or atomics: the
// engine that owns it runs on one goroutine under its replica's mutex. It can
// take n equal observations at once, which is how one decode step of a whole
// batch records its inter-token latencies at the cost of one.
type hist struct {
	bounds []float64 // upper bounds, ascending, +Inf excluded
	counts []uint64  // per bucket (not cumulative); the last is +Inf
	sum    float64
	count  uint64
}

func newHist(bounds []float64) *hist {
	return &hist{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *hist) observe(v float64) { h.observeN(v, 1) }

// observeN records n observations of v.
func (h *hist) observeN(v float64, n uint64) {
	if n == 0 {
		return
	}
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: le is inclusive
	h.counts[i] += n
	h.sum += v * float64(n)
	h.count += n
}

// cumulative returns the cumulative bucket counts keyed by upper bound, the
// form client_golang's const histograms take.
func (h *hist) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(h.bounds))
	var acc uint64
	for i, b := range h.bounds {
		acc += h.counts[i]
		out[b] = acc
	}
	return out
}
