package analysis

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the numbers of docs/verdicts.md")

// verdictsDoc is the written judgement, whose numbers are these constants.
const verdictsDoc = "../docs/verdicts.md"

// judgementNumbers are the thresholds of the states as docs/verdicts.md
// gives them: each row names the constant it is.
func judgementNumbers() [][3]string {
	cfg := DefaultConfig()
	return [][3]string{
		{"FULL: readings that must each hold a queue", fmt.Sprint(fullMinSamples), "fullMinSamples"},
		{"FULL: the trailing span they are read over", fullSpan.String(), "fullSpan"},
		{"FULL: a queue proven on two readings", fmt.Sprint(obviousQueue), "obviousQueue"},
		{"FULL: a queue proven on two readings, in batches (times the requests running)", fmt.Sprint(obviousQueueBatches), "obviousQueueBatches"},
		{"FULL: running at this share of the batch cap is at it", percent(atCapShare), "atCapShare"},
		{"FULL: KV cache usage from which a batch is KV-bound", percent(kvBoundUsage), "kvBoundUsage"},
		{"PREEMPTING: the trailing span a preemption counts over", preemptingSpan.String(), "preemptingSpan"},
		{"PREEMPTING: recomputed tokens against the tokens generated, over the window, from which the cost is material", percent(materialRecomputed), "materialRecomputed"},
		{"PREEMPTING: share of finished requests preempted, over the window, from which the cost is material", percent(materialPreempted), "materialPreempted"},
		{"HEALTHY, IDLE: the least span of readings", leastEvidence.String(), "leastEvidence"},
		{"SLOW: the p99 TTFT SLO (default)", cfg.SLOTTFT.String(), "DefaultConfig().SLOTTFT"},
		{"SLOW: the p99 ITL SLO (default)", cfg.SLOITL.String(), "DefaultConfig().SLOITL"},
		{"SLOW: observations a p99 is read from", fmt.Sprint(cfg.MinObservations), "DefaultConfig().MinObservations"},
		{"SLOW: leaves this far under the SLO", percent(cfg.SLOExitMargin), "DefaultConfig().SLOExitMargin"},
		{"SLOW: mean prompt from which slow TTFT is long prompts", count(longPromptTokens), "longPromptTokens"},
		{"STALE, STALLED: readings with no counter moving", fmt.Sprint(staleMinSamples), "staleMinSamples"},
		{"STALLED: work present with no token generated for", stalledSpan.String(), "stalledSpan"},
		{"RECOVERING: leaves this far under the SLO", percent(cfg.SLOExitMargin), "DefaultConfig().SLOExitMargin"},
		{"RECOVERING: the trailing span whose first tokens' mean TTFT is named", fullSpan.String(), "fullSpan"},
		{"a quantile is shown as its bucket's bounds when the upper is over this many times the lower", fmt.Sprint(wideBucketRatio), "wideBucketRatio"},
		{"DOWN: scrapes in a row with no answer within the timeout (late before)", fmt.Sprint(lateScrapes), "lateScrapes"},
		{"FULL of a queue in the HTTP pool: scrapes that waited over the last poolQueueSpan", fmt.Sprint(poolQueueLate), "poolQueueLate"},
		{"FULL of a queue in the HTTP pool: a scrape's wait for its page that counts", poolQueueWait.String(), "poolQueueWait"},
		{"FULL of a queue in the HTTP pool: the span its scrapes are counted over", poolQueueSpan.String(), "poolQueueSpan"},
		{"DOWN of a server whose fixed HTTP pool may hold its scrapes, busy at its last page: scrapes in a row with no answer", fmt.Sprint(lateScrapesBehindPool), "lateScrapesBehindPool"},
		{"late round: the fewest targets most of which timing out at once is vtop's side", fmt.Sprint(lateRoundMinTargets), "lateRoundMinTargets"},
		{"evaluations a judged change must hold (default)", fmt.Sprint(cfg.Hysteresis), "DefaultConfig().Hysteresis"},
		{"the analysis window (default)", cfg.Window.String(), "DefaultConfig().Window"},
		{"advice: seconds at capacity before a capacity is read", capacitySettle.String(), "capacitySettle"},
		{"advice: a count within this share of the one shown is noise", percent(adviceCountNoise), "adviceCountNoise"},
		{"advice: … and within this many replicas", fmt.Sprint(adviceCountNoiseMin), "adviceCountNoiseMin"},
		{"advice: evaluations a change within the noise must hold", fmt.Sprint(adviceHold), "adviceHold"},
		{"aborts: share of finished requests from which they are a reason", percent(materialAbortShare), "materialAbortShare"},
	}
}

// TestVerdictsDocument holds docs/verdicts.md's table of numbers to the
// constants the states are judged by; -update-doc rewrites it.
func TestVerdictsDocument(t *testing.T) {
	doc, err := os.ReadFile(verdictsDoc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- numbers:begin -->\n", "<!-- numbers:end -->"
	text := string(doc)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no numbers section between %q and %q", verdictsDoc, begin, end)
	}
	var b strings.Builder
	b.WriteString("| threshold | value | in the code |\n| --- | --- | --- |\n")
	for _, row := range judgementNumbers() {
		fmt.Fprintf(&b, "| %s | %s | `%s` |\n", row[0], row[1], row[2])
	}
	want := text[:i+len(begin)] + b.String() + text[j:]
	if *updateDoc {
		if err := os.WriteFile(verdictsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if text != want {
		t.Errorf("%s's numbers differ from the code's (go test ./analysis -run TestVerdictsDocument -update-doc rewrites them):\n%s", verdictsDoc, b.String())
	}
}
