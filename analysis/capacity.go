package analysis

import (
	"math"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// capacitySettle is how long a replica must have been at its capacity (a
// queue in each of its readings) before what it finishes there is read as
// a replica's capacity. A batch that has just filled finishes the requests
// it admitted before the queue formed, fewer than it finishes at its
// steady pace: read over the first seconds, or over a window most of
// which was before the queue, a capacity is low and a count from it three
// times too high. Ten seconds hold about one service time of a chat-like
// request at the cap and some hundred finished requests of a replica.
const capacitySettle = 10 * time.Second

// atCapacity returns how long the replica has been at its capacity, the
// span of the window's newest readings that each hold a queue (for
// capacity, where the page splits the waiting by reason) with requests
// running, and what it finished successfully per second over that span:
// n/a with fewer than two such readings.
func (w *window) atCapacity(ev *evidence) (float64, Num) {
	queue := catalogue.Waiting
	if ev.WaitingCapacity.N > 0 {
		queue = catalogue.WaitingCapacity
	}
	n := len(w.samples)
	first := n
	for first > 0 {
		s := &w.samples[first-1].Total
		if !(s.Scalars[queue] > 0 && s.Scalars[catalogue.Running] > 0) {
			break
		}
		first--
	}
	if n-first < 2 {
		return 0, NA
	}
	secs := float64(w.ms[n-1]-w.ms[first]) / 1000
	if secs <= 0 {
		return 0, NA
	}
	ok := successfulIncrease(w.samples[first:])
	if math.IsNaN(ok) {
		return secs, NA
	}
	return secs, Num(ok / secs)
}

// successfulIncrease is what the samples' replica finished successfully
// from the first to the last of them: stops and lengths; every finished
// request where the page has no finish reasons (as successfulPerSecond).
// NaN when neither is known.
func successfulIncrease(samples []*catalogue.Sample) float64 {
	finished := func(r catalogue.FinishReason) func(*catalogue.Sample) float64 {
		return func(s *catalogue.Sample) float64 { return s.Total.Finished[r] }
	}
	ok := plainIncrease(samples, finished(catalogue.FinishStop))
	if math.IsNaN(ok) {
		return plainIncrease(samples, func(s *catalogue.Sample) float64 { return s.Total.Scalars[catalogue.FinishedRequests] })
	}
	if length := plainIncrease(samples, finished(catalogue.FinishLength)); !math.IsNaN(length) {
		ok += length
	}
	return ok
}

// plainIncrease is counterIncrease of one value of the samples: the sum of
// its rises, a drop counted as a reset, no extrapolation; NaN when fewer
// than two samples know it.
func plainIncrease(samples []*catalogue.Sample, value func(*catalogue.Sample) float64) float64 {
	inc, last, known := 0.0, math.NaN(), 0
	for _, s := range samples {
		v := value(s)
		if math.IsNaN(v) {
			continue
		}
		switch {
		case known == 0:
		case v >= last:
			inc += v - last
		default:
			inc += v
		}
		last = v
		known++
	}
	if known < 2 {
		return math.NaN()
	}
	return inc
}
