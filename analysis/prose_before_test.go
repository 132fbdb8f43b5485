package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The sentences of the capacity advice as they were written
// with fmt.Sprintf, from the words as they were (format_before_test.go):
// the sentences appended into one buffer must read byte for byte as these.

// capacityWordsBefore is recommendByCapacity's recommendation as it was
// written.
func (a *Advice) capacityWordsBefore(rec float64, keep bool, backlog Num) string {
	arrivals, capacity := a.ArrivalsPerSecond.Float(), a.CapacityPerReplica.Float()
	carry := fmt.Sprintf("%s arriving ÷ %s a full replica finishes", perSecondBefore(arrivals), perSecondBefore(capacity))
	clears := ""
	if a.BacklogClearSeconds.Known() {
		clears = fmt.Sprintf("; %s clears the backlog of %s in about %s", countBefore(rec), countBefore(backlog.Float()),
			duration(time.Duration(a.BacklogClearSeconds.Float()*float64(time.Second))))
	}
	queueNote := ""
	if a.ReplicasByQueue.Known() && a.ReplicasByQueue.Float() > rec {
		queueNote = fmt.Sprintf("; the queue rule's %s is an HPA target, not a count to act on: the queue is a backlog to drain, not a rate to provision for",
			countBefore(a.ReplicasByQueue.Float()))
	}
	switch {
	case keep:
		return fmt.Sprintf("keep %s (capacity): %s carry the %s arriving, but do not scale down while the backlog drains%s%s",
			pluralBefore(rec, "replica"), countBefore(a.ReplicasByCapacity.Float()), perSecondBefore(arrivals), clears, queueNote)
	case rec == float64(a.Replicas):
		return fmt.Sprintf("keep %s (capacity): %s%s%s", pluralBefore(rec, "replica"), carry, clears, queueNote)
	}
	return fmt.Sprintf("act on %s (capacity), %s the %d up: %s%s%s",
		pluralBefore(rec, "replica"), changeWords(rec, a.Replicas), a.Replicas, carry, clears, queueNote)
}

// adviceSummaryBefore is adviceSummary as it was.
func adviceSummaryBefore(a *Advice) []string {
	var s []string
	if a.ArrivalsPerSecond.Known() {
		s = append(s, fmt.Sprintf("arrivals %s across %s; a %s queue allows %s waiting per replica (Little's law)",
			perSecondBefore(a.ArrivalsPerSecond.Float()), pluralBefore(float64(a.Replicas), "replica"), secondsBefore(a.TargetQueueSeconds.Float()), amountBefore(a.WaitingTargetPerReplica.Float())))
	}
	if a.ReplicasByQueue.Known() {
		s = append(s, fmt.Sprintf("mean waiting %s per replica → %s by the queue (HPA rule: ceil(%d × %s ÷ %s), an autoscaler's target)",
			amountBefore(a.MeanWaitingPerReplica.Float()), pluralBefore(a.ReplicasByQueue.Float(), "replica"), a.Replicas,
			amountBefore(a.MeanWaitingPerReplica.Float()), amountBefore(a.WaitingTargetPerReplica.Float())))
	}
	if a.ReplicasByCapacity.Known() {
		s = append(s, fmt.Sprintf("a full replica finishes %s → %s by capacity (ceil(%s ÷ %s))",
			perSecondBefore(a.CapacityPerReplica.Float()), pluralBefore(a.ReplicasByCapacity.Float(), "replica"),
			amountBefore(a.ArrivalsPerSecond.Float()), amountBefore(a.CapacityPerReplica.Float())))
	}
	return s
}

func pluralBefore(n float64, noun string) string {
	if c := countBefore(n); c != "1" {
		return c + " " + noun + "s"
	}
	return "1 " + noun
}

func perSecondBefore(x float64) string { return amountBefore(x) + " req/s" }

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

// TestCapacityAdviceAsBefore: the capacity rule's recommendation and the
// sentences of the advice read byte for byte as the fmt.Sprintf of them
// did, over figures at the edges of their words.
func TestCapacityAdviceAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	wholes := []float64{1, 2, 3, 8, 1e6, 1 << 53}
	for range 50000 {
		a := Advice{
			Replicas:                []int{1, 2, 3, 8, 1000}[rng.IntN(5)],
			ArrivalsPerSecond:       Num(proseValue(rng)),
			TargetQueueSeconds:      Num(proseValue(rng)),
			WaitingTargetPerReplica: Num(proseValue(rng)),
			MeanWaitingPerReplica:   Num(proseValue(rng)),
			ReplicasByQueue:         NA,
			CapacityPerReplica:      Num(positiveValue(rng)),
			ReplicasByCapacity:      Num(wholes[rng.IntN(len(wholes))]),
			RecommendedReplicas:     NA,
			BacklogClearSeconds:     NA,
		}
		if rng.IntN(2) == 0 {
			a.ReplicasByQueue = Num(wholes[rng.IntN(len(wholes))])
		}
		if rng.IntN(2) == 0 {
			a.BacklogClearSeconds = Num(positiveValue(rng))
		}
		rec, keep, backlog := wholes[rng.IntN(len(wholes))], rng.IntN(3) == 0, Num(proseValue(rng))
		if got, want := a.capacityWords(rec, keep, backlog), a.capacityWordsBefore(rec, keep, backlog); got != want {
			t.Fatalf("advice %+v, %v replicas, keep %v, backlog %v:\n%q\nbefore\n%q", a, rec, keep, backlog, got, want)
		}
		if got, want := adviceSummary(&a, nil), adviceSummaryBefore(&a); !slices.Equal(got, want) {
			t.Fatalf("advice %+v:\n%q\nbefore\n%q", a, got, want)
		}
	}
}
