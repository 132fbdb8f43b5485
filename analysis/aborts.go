package analysis

import (
	"fmt"
	"slices"
)

// materialAbortShare is the share of a replica's finished requests
// aborted by their clients from which the aborts are a reason on its
// state, whatever the state: a tenth of the answers given up is work the
// users did not get, and a throughput or an efficiency that counts them
// reads as service that was not given. Below it, aborts are the usual
// cancelled streams and closed tabs.
const materialAbortShare = 0.10

// MaterialAborts reports whether the aborts among the finished requests
// are material (materialAbortShare): the screens then say them beside
// the req/s, which counts them.
func (f *Figures) MaterialAborts() bool {
	return f.AbortShare >= materialAbortShare && f.FinishedPerSecond.Abort > 0
}

// withAbortReason is reasons with, second, the sentence of material
// aborts: how many of the finished requests were aborted and what that
// says, the clients giving up waiting where the replica is at its
// capacity. reasons is not changed in place.
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
// when aborts are among them: what succeeded, and that aborts are
// counted. Empty when none was aborted.
func abortedWords(f *Figures) (successful, included string) {
	if !(f.FinishedPerSecond.Abort > 0) {
		return "", ""
	}
	return ", " + amount(successfulPerSecond(f).Float()) + " successful", ", aborts included"
}
