package rules

import (
	"fmt"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// header is the file's opening comment: what wrote it and with what, how
// the alerts map to vtop's states, and where the rules are not vtop's
// judgement exactly, with why.
func (b builder) header() []string {
	c := b.o.Config
	h := []string{
		"Prometheus rules of vtop's judgement (docs/verdicts.md), written by `vtop rules`.",
		fmt.Sprintf("Settings: --slo-ttft %s --slo-itl %s --window %s --hysteresis %d --evaluation-interval %s --group-by %s.",
			dur(c.SLOTTFT), dur(c.SLOITL), dur(c.Window), c.Hysteresis, dur(b.o.EvaluationInterval), strings.Join(b.o.GroupBy, ",")),
		"One reading is one evaluation: evaluate the group at the interval Prometheus scrapes the replicas.",
		"Each replica shows the highest state that fires: VtopDown, VtopStalled, VtopPreempting, VtopFull, VtopSlow, VtopStale, VtopIdle;",
		"none firing is HEALTHY (or a state below that is not alerted on).",
	}
	if !b.o.KeepFiringFor {
		h = append(h, "keep_firing_for is not written (--no-keep-firing-for): a state ends on the first evaluation without its evidence.")
	}
	h = append(h, "", "Not expressed, or not exactly:")
	for _, n := range b.inexact() {
		h = append(h, "- "+n)
	}
	return h
}

// inexact lists what the rules cannot say as vtop does, with why.
func (b builder) inexact() []string {
	notes := []string{
		"WARMING, UNJUDGED, SLEEPING: not alerted on; they ask nothing of the on-call engineer. A replica vtop shows WARMING after a restart is judged by the rules on its readings as they come.",
		"DOWN: only a group that served engine metrics in the last " + dur(downMemory) + " (the rules know no list of targets), and the group-by labels must be on `up`.",
		"FULL: the p99 TTFT that is mostly queue time is not read (its queue shows in the readings first); refused admissions are read over the window.",
		"FULL's first action is to add replicas: vtop says to spread the load, or that none is to be added, where its fleet advice finds that the replicas up carry the demand, which the rules do not work out.",
		"SLOW: a slow TTFT whose queue is gone, which vtop shows RECOVERING (the cause passed, as FULL's has), still fires VtopSlow until the window forgets it: the rules do not call it healthy either. A p99 e2e over --slo-e2e (RECOVERING in vtop) is not read.",
		"STALE: every engine value at 0 while http_requests_total rises (an empty PROMETHEUS_MULTIPROC_DIR) is not read.",
		"PREEMPTING: the share of requests preempted is read as the preemptions over the requests finished (the e2e histogram's count); vtop reads the mean of vllm:request_num_preemptions where the page has it.",
		"A move between the urgent states (FULL, PREEMPTING, SLOW) is held as vtop holds it, by keep_firing_for on the state left, SLOW's for: and PREEMPTING's own rule after FULL or SLOW; except FULL after SLOW, shown at once (FULL's alert outranks SLOW's), which vtop holds.",
		"STALLED: read over " + dur(b.stalledSpan()) + " for every engine, where vtop waits most of the window for one that counts when requests end (TGI, llama.cpp); the KV cache usage is not among the signs of a live page; the time since the last token is not said (the alert's start is near it).",
	}
	for k := catalogue.EngineKind(1); k < catalogue.NumEngineKinds; k++ {
		for j, why := range catalogue.Capabilities[k].Cannot {
			if why != "" {
				notes = append(notes, fmt.Sprintf("%s on %s: %s.", catalogue.Judgement(j), k, why))
			}
		}
	}
	notes = append(notes, "SLOW on tgi: no TTFT histogram; vtop's derived mean TTFT has no quantiles to alert on (its ITL is a per-request mean).")
	return notes
}
