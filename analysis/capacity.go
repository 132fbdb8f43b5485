package analysis

import (
	"math"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// capacitySettle is how long a replica must have been at its capacity
// before what it finishes there is read as its capacity: a batch that has
// just filled finishes fewer than at its steady pace, and a count from it
// comes out three times too high. Ten seconds hold about one service time
// of a chat-like request at the cap.
const capacitySettle = 10 * time.Second

// atCapacity returns how long the replica has been at its capacity
// (capacityStart); what it finished successfully per second over that
// span; what arrived, and how fast the queue grew, per second over the
// newest capacitySettle of it (n/a when shorter): a spike's arrivals from
// its own seconds. rising is set while the finish rate of the newest half
// of the span is above the whole's beyond the noise: a batch that has just
// filled still finishes what it admitted before the queue.
func (w *window) atCapacity(ev *evidence) (secs float64, capacity, arrivals, growth Num, rising bool) {
	n := len(w.samples)
	first := w.capacityStart(ev)
	if n-first < 2 {
		return 0, NA, NA, NA, false
	}
	secs = float64(w.ms[n-1]-w.ms[first]) / 1000
	if secs <= 0 {
		return 0, NA, NA, NA, false
	}
	capacity, rising = w.finishedAtCapacity(first, secs)
	arrivals, growth = NA, NA
	if secs >= capacitySettle.Seconds() {
		arrivals, growth = w.arrivalsAtCapacity(first)
	}
	return secs, capacity, arrivals, growth, rising
}

// capacityStart is the index of the first reading of the newest run at
// capacity, a queue and a batch both standing, since the newest stall
// (len(w.samples) when the newest reading is not at capacity). One reading
// without a queue does not end the run, as FULL allows it; two in a row do.
func (w *window) capacityStart(ev *evidence) int {
	queue := ev.queueScalar()
	held := func(i int) bool {
		s := &w.samples[i].Total
		return s.Scalars[queue] > 0 && s.Scalars[catalogue.Running] > 0
	}
	n := len(w.samples)
	first := n
	stallEnd := w.stallEnd(ev)
	for i := n - 1; i >= stallEnd; i-- {
		if held(i) {
			first = i
			continue
		}
		if i == stallEnd || !held(i-1) {
			break // two readings in a row without a queue: not at capacity
		}
	}
	return first
}

// finishedAtCapacity is what the replica finished successfully per second
// over the secs from reading first on (n/a when unknown), and whether the
// newest half of that span finished faster beyond the noise.
func (w *window) finishedAtCapacity(first int, secs float64) (capacity Num, rising bool) {
	ok := successfulIncrease(w.samples[first:])
	if math.IsNaN(ok) {
		return NA, false
	}
	capacity = Num(ok / secs)
	n := len(w.samples)
	mid := first
	for mid < n-1 && w.ms[n-1]-w.ms[mid+1] >= w.ms[mid+1]-w.ms[first] {
		mid++
	}
	if half := float64(w.ms[n-1]-w.ms[mid]) / 1000; n-mid >= 2 && half > 0 {
		newest := Num(successfulIncrease(w.samples[mid:]) / half)
		rising = newest > capacity && beyondNoise(newest, capacity, half)
	}
	return capacity, rising
}

// arrivalsAtCapacity is what arrived per second, and how fast the queue
// grew, over the newest capacitySettle of the run at capacity from reading
// first on, or over the whole run when that agrees within the noise.
func (w *window) arrivalsAtCapacity(first int) (arrivals, growth Num) {
	n := len(w.samples)
	from := n - 1
	for from > first && w.ms[n-1]-w.ms[from] < capacitySettle.Milliseconds() {
		from--
	}
	arrivals, growth = w.arrivedSince(from)
	if whole, wholeGrowth := w.arrivedSince(first); whole.Known() && arrivals.Known() && !beyondNoise(arrivals, whole, capacitySettle.Seconds()) {
		return whole, wholeGrowth
	}
	return arrivals, growth
}

// stallEnd is the index of the reading that ends the window's newest
// stall of stalledSpan or longer (0 when none, or when the engine counts
// only when requests end): a queue behind an engine that does not step is
// not a batch at its capacity.
func (w *window) stallEnd(ev *evidence) int {
	if ev.countsAtEnd() {
		return 0
	}
	end := -1 // the newest reading of the quiet stretch being walked
	for i := len(w.samples) - 1; i > 0; i-- {
		if changed, known := workMoved(&w.samples[i-1].Total, &w.samples[i].Total); changed || !known {
			end = -1
			continue
		}
		if end < 0 {
			end = i
		}
		if w.ms[end]-w.ms[i-1] >= stalledSpan.Milliseconds() {
			return end
		}
	}
	return 0
}

// arrivedSince is what arrived per second from the window's reading from
// to its newest (arrivedPerSecond), and how fast the queue grew.
func (w *window) arrivedSince(from int) (arrivals, growth Num) {
	n := len(w.samples)
	secs := float64(w.ms[n-1]-w.ms[from]) / 1000
	growth = NA
	if d := w.samples[n-1].Total.Scalars[catalogue.Waiting] - w.samples[from].Total.Scalars[catalogue.Waiting]; !math.IsNaN(d) && secs > 0 {
		growth = Num(d / secs)
	}
	return arrivedPerSecond(w.samples[from:], secs), growth
}

// beyondNoise reports whether a rate read over secs differs from a
// steadier one by more than twice a Poisson count's standard deviation:
// a change of load, not the scatter of arrivals.
func beyondNoise(rate, steadier Num, secs float64) bool {
	sd := math.Sqrt(math.Max(rate.Float(), steadier.Float())*secs) / secs
	return math.Abs(rate.Float()-steadier.Float()) > 2*sd
}

// arrivedPerSecond is what arrived at the samples' replica per second
// over secs, their span: every request that finished plus the growth of
// the batch and the queue. n/a when the finished requests are unknown.
func arrivedPerSecond(samples []*catalogue.Sample, secs float64) Num {
	finished := math.NaN()
	for r := range catalogue.NumFinishReasons {
		if inc := plainIncrease(len(samples), func(i int) float64 { return samples[i].Total.Finished[r] }); !math.IsNaN(inc) {
			finished = nanZero(finished) + inc
		}
	}
	if total := plainIncrease(len(samples), func(i int) float64 { return samples[i].Total.Scalars[catalogue.FinishedRequests] }); total > nanZero(finished) {
		finished = total
	}
	if math.IsNaN(finished) || !(secs > 0) {
		return NA
	}
	a, b := &samples[0].Total, &samples[len(samples)-1].Total
	growth := 0.0
	for _, k := range []catalogue.Scalar{catalogue.Running, catalogue.Waiting} {
		if d := b.Scalars[k] - a.Scalars[k]; !math.IsNaN(d) {
			growth += d
		}
	}
	return Num(math.Max(0, finished+growth) / secs)
}

// nanZero is x, or 0 when x is NaN.
func nanZero(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// capacitySettled reports whether a replica at capacity for secs has
// shown its capacity: capacitySettle of it, with its finish rate no
// longer rising; once settled, it stays so while at capacity, so that one
// reading's scatter does not take the count away.
func capacitySettled(secs float64, rising bool, prev *ReplicaReport) bool {
	if secs < capacitySettle.Seconds() {
		return false
	}
	return !rising || prev != nil && prev.CapacitySettled && prev.AtCapacitySeconds > 0
}

// successfulIncrease is what the samples' replica finished successfully
// from the first to the last of them, as successfulPerSecond counts it.
func successfulIncrease(samples []*catalogue.Sample) float64 {
	finished := func(r catalogue.FinishReason) float64 {
		return plainIncrease(len(samples), func(i int) float64 { return samples[i].Total.Finished[r] })
	}
	ok := finished(catalogue.FinishStop)
	if math.IsNaN(ok) {
		return plainIncrease(len(samples), func(i int) float64 { return samples[i].Total.Scalars[catalogue.FinishedRequests] })
	}
	if length := finished(catalogue.FinishLength); !math.IsNaN(length) {
		ok += length
	}
	return ok
}

// plainIncrease is the plain increase of one value over n readings,
// oldest first: the sum of its rises, a drop counted as a reset, no
// extrapolation; NaN when fewer than two readings know it. value(i) is
// the i-th reading's value, NaN where it has none.
func plainIncrease(n int, value func(i int) float64) float64 {
	inc, last, known := 0.0, math.NaN(), 0
	for i := range n {
		v := value(i)
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

// countsFinished reports whether a page counts finished requests, in
// total or by finish reason (llama.cpp's does not).
func countsFinished(s *catalogue.Series) bool {
	if !math.IsNaN(s.Scalars[catalogue.FinishedRequests]) {
		return true
	}
	for _, v := range s.Finished {
		if !math.IsNaN(v) {
			return true
		}
	}
	return false
}
