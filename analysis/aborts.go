package analysis

import (
	"fmt"
	"slices"
)

// materialAbortShare is the share of a replica's finished requests
// aborted by their clients from which the aborts are a reason on any
// state: below it they are the usual cancelled streams and closed tabs.
const materialAbortShare = 0.10

// MaterialAborts reports whether the aborts among the finished requests
// are material: the screens then say them beside the req/s.
func (f *Figures) MaterialAborts() bool {
	return f.AbortShare >= materialAbortShare && f.FinishedPerSecond.Abort > 0
}

// withAbortReason is reasons with, second, the sentence of material
// aborts; reasons is not changed in place.
func withAbortReason(reasons []string, f *Figures, atCapacity bool) []string {
	if !f.MaterialAborts() {
		return reasons
	}
	why := "clients gave up before their answer ended"
	if atCapacity {
		why = "clients give up waiting"
	}
	s := fmt.Sprintf("%s of finished requests were client aborts (%s/s): %s", percent(f.AbortShare.Float()), amount(f.FinishedPerSecond.Abort.Float()), why)
	return slices.Insert(slices.Clone(reasons), min(1, len(reasons)), s)
}

// abortedWords is what a throughput of finished requests says beside it
// when aborts are among them.
func abortedWords(f *Figures) (successful, included string) {
	if !(f.FinishedPerSecond.Abort > 0) {
		return "", ""
	}
	return ", " + amount(successfulPerSecond(f).Float()) + " successful", ", aborts included"
}
