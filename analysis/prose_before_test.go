package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// The sentences of FULL as they were written
// with fmt.Sprintf, from the words as they were (format_before_test.go):
// the sentences appended into one buffer must read byte for byte as these.

// fullReasonsBefore is fullVerdict's reasons as they were written.
func fullReasonsBefore(f *Figures, ev *evidence, run, wait gaugeStats) []string {
	bound := "max_num_seqs cap"
	if ev.KVCacheUsage.Last >= kvBoundUsage {
		bound = "KV-bound, KV cache at " + percentBefore(ev.KVCacheUsage.Last)
	}
	waitingWord := "waiting"
	if ev.WaitingCapacity.N > 0 {
		waitingWord = "waiting for capacity"
	}
	reasons := []string{fmt.Sprintf("%s %s → %s over %s while running stays at %s (%s)",
		waitingWord, countBefore(wait.First), countBefore(wait.Last), secondsBefore(ev.SpanSeconds), countBefore(run.Last), bound)}
	if ev.Rejections > 0 {
		reasons = append(reasons, rejectionText(f, ev))
	}
	if f.WaitingGrowth < 0 && wait.Last < wait.First {
		reasons = append(reasons, fmt.Sprintf("the queue shrinks by %s/s: empty in about %s at that rate",
			amountBefore(float64(-f.WaitingGrowth)), secondsBefore(wait.Last/float64(-f.WaitingGrowth))))
	}
	if ev.Samples < fullMinSamples {
		// Said, because one more reading is the usual standard of proof.
		reasons = append(reasons, fmt.Sprintf("judged on %d readings: a queue of %s and %s at the cap is full without waiting for a third",
			ev.Samples, countBefore(wait.First), countBefore(wait.Last)))
	}
	if share := ratio(f.Queue.Mean, f.TTFT.Mean); share.Known() {
		reasons = append(reasons, fmt.Sprintf("queue time is %s of TTFT (mean %s of %s)",
			percentBefore(share.Float()), secondsBefore(f.Queue.Mean.Float()), secondsBefore(f.TTFT.Mean.Float())))
	}
	if f.Efficiency.Known() {
		reasons = append(reasons, fmt.Sprintf("arrivals %s req/s against %s finished/s (efficiency %s)",
			amountBefore(f.ArrivalsPerSecond.Float()), amountBefore(f.RequestsPerSecond.Float()), percentBefore(f.Efficiency.Float())))
	}
	return reasons
}

// proseValue picks a figure for a sentence: mostly an edge of the words
// (format_before_test.go), otherwise a random value of any magnitude.
func proseValue(rng *rand.Rand) float64 {
	if rng.IntN(3) > 0 {
		return wordEdges[rng.IntN(len(wordEdges))]
	}
	return math.Pow(10, rng.Float64()*16-8) * (rng.Float64() - 0.2)
}

// positiveValue picks a positive figure, an edge or random.
func positiveValue(rng *rand.Rand) float64 {
	for {
		if x := proseValue(rng); x > 0 {
			return x
		}
	}
}

// TestFullVerdictAsBefore: FULL's reasons read byte for byte as
// the fmt.Sprintf of them did, over figures at the edges of their words.
func TestFullVerdictAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50000 {
		running := positiveValue(rng)
		ev := evidence{
			Samples:     2 + rng.IntN(3),
			SpanSeconds: proseValue(rng),
			Running:     gaugeStats{First: running, Last: proseValue(rng), Min: running, Max: running, Mean: running, N: 3},
			Waiting: gaugeStats{First: proseValue(rng), Last: proseValue(rng), Min: positiveValue(rng) + 10*float64(rng.IntN(2)),
				N: 3},
			KVCacheUsage: gaugeStats{Last: proseValue(rng)},
			Rejections:   proseValue(rng),
			Kind:         catalogue.EngineKind(rng.IntN(int(catalogue.NumEngineKinds))),
		}
		if rng.IntN(2) == 0 {
			ev.WaitingCapacity = ev.Waiting
		}
		f := naFigures()
		f.WaitingGrowth, f.Efficiency = Num(proseValue(rng)), Num(proseValue(rng))
		f.ArrivalsPerSecond, f.RequestsPerSecond = Num(proseValue(rng)), Num(proseValue(rng))
		f.Queue.Mean, f.TTFT.Mean = Num(proseValue(rng)), Num(proseValue(rng))
		f.AdmissionRejectionsPerSecond = Num(proseValue(rng))
		run, wait := ev.Running, ev.queueStats()
		if got, want := fullReasons(&f, &ev, run, wait), fullReasonsBefore(&f, &ev, run, wait); !slices.Equal(got, want) {
			t.Fatalf("figures %+v, evidence %+v:\n%q\nbefore\n%q", f, ev, got, want)
		}
	}
}
