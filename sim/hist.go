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

// Bucket lists of vLLM (vllm/v1/metrics/loggers.py), see the metric
// catalogue §5.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
		20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterationTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	paramsNBuckets        = []float64{1, 2, 5, 10, 20}
)

// buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, … while the
// value does not exceed maxValue (maxValue itself is not appended).
func buckets125(maxValue int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxValue) {
				return out
			}
			out = append(out, v)
		}
	}
}
