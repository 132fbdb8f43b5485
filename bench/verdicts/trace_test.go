package verdicts

import (
	"fmt"
	"strings"
)

// Trace writes the seconds of a run at which vtop's state differs from
// the truth, or either changes: per replica the truth, the state shown,
// the model's running and waiting, vtop's first reason and its action;
// and the seconds at which the advice or the right count changes, with
// the advice's sentence.
func Trace(run Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, seed %d\n", run.Scenario, run.Seed)
	for i := range run.Right {
		if i > 0 && (run.Advice[i] != run.Advice[i-1] || run.Right[i] != run.Right[i-1]) {
			fmt.Fprintf(&b, "%3ds advice %s right %s | %s\n", i+1, num(run.Advice[i]), num(run.Right[i]), run.AdviceText[i])
		}
		for _, tl := range run.Replicas {
			changed := i > 0 && (tl.Truth[i] != tl.Truth[i-1] || tl.Shown[i] != tl.Shown[i-1])
			if tl.Truth[i] == tl.Shown[i] && !changed {
				continue
			}
			fmt.Fprintf(&b, "%3ds %s truth %-10s shown %-10s run %3d wait %4d advice %s right %s | %s | %s\n",
				i+1, tl.Target, tl.Truth[i], tl.Shown[i], tl.Running[i], tl.Waiting[i],
				num(run.Advice[i]), num(run.Right[i]), tl.Reason[i], tl.Action[i])
		}
	}
	return b.String()
}
