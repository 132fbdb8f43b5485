package analysis

import (
	"fmt"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// LoRAReport is what vllm:lora_requests_info says of the adapters.
type LoRAReport struct {
	// MaxLoRAs is how many adapters fit at once (max_lora); n/a when the
	// page does not say.
	MaxLoRAs Num      `json:"max_loras"`
	Running  []string `json:"running"`
	Waiting  []string `json:"waiting"`
}

// engineKind is the engine of a page: the one the parser named, or vLLM
// for a source that reads vLLM's families without naming it.
func engineKind(s *catalogue.Sample) catalogue.EngineKind {
	if s.EngineKind == catalogue.EngineUnknown && s.HasVLLM {
		return catalogue.EngineVLLM
	}
	return s.EngineKind
}

// describeEngine fills what the newest good page says of the server, and
// completes the figures its own figures determine (TGI's mean TTFT).
func describeEngine(rep *ReplicaReport, s *catalogue.Sample) {
	rep.EngineKind = engineKind(s)
	rep.Router, rep.Role = s.Router, s.Role
	rep.Backends = s.Backends
	if s.LoRA.Present {
		rep.LoRA = &LoRAReport{MaxLoRAs: Num(s.LoRA.MaxLoRAs), Running: nonNil(s.LoRA.Running), Waiting: nonNil(s.LoRA.Waiting)}
	}
	for f := catalogue.Figure(0); int(f) < int(catalogue.NumScalars)+int(catalogue.NumHistograms); f++ {
		if !s.Derived.Has(f) {
			continue
		}
		if how, ok := rep.EngineKind.DerivedBy(f); ok {
			rep.addDerived(figureKey(f), how)
		}
	}
	if rep.EngineKind == catalogue.EngineTGI && !rep.TTFT.Mean.Known() && rep.Queue.Mean.Known() && rep.Prefill.Mean.Known() {
		// TGI times the queue and the prefill batch, not the first token:
		// their means add up to the mean TTFT (quantiles do not add).
		rep.TTFT.Mean = rep.Queue.Mean + rep.Prefill.Mean
		how, _ := rep.EngineKind.DerivedBy(catalogue.HistogramFigure(catalogue.TTFT))
		rep.addDerived("ttft_seconds", how)
	}
}

// addDerived records how a figure was derived.
func (rep *ReplicaReport) addDerived(figure, how string) {
	if rep.Derived == nil {
		rep.Derived = map[string]string{}
	}
	rep.Derived[figure] = how
}

// nonNil returns s, or an empty slice for nil (JSON [] rather than null:
// the page said there are none).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// canJudge reports whether the engine's page gives the evidence of a
// judgement; a router's page is judged on whatever its figures show.
func (ev *evidence) canJudge(j catalogue.Judgement) bool {
	return ev.Router || ev.Kind.CanJudge(j)
}

// judgedState is the state a judgement gives.
var judgedState = [catalogue.NumJudgements]State{
	catalogue.JudgePreempting: StatePreempting,
	catalogue.JudgeFull:       StateFull,
	catalogue.JudgeSlow:       StateSlow,
	catalogue.JudgeStale:      StateStale,
	catalogue.JudgeIdle:       StateIdle,
}

// engineNotes are the reasons that say what an engine's page does not
// show: each state it cannot be judged on, and what the evidence of its
// state lacks.
func engineNotes(state State, ev *evidence) []string {
	if ev.Router || ev.Kind == catalogue.EngineUnknown || ev.Kind >= catalogue.NumEngineKinds {
		return nil
	}
	c := &catalogue.Capabilities[ev.Kind]
	var notes []string
	for j := range catalogue.NumJudgements {
		why := c.Cannot[j]
		if why == "" && j == catalogue.JudgeSlow && ev.NoLatency {
			why = "this page exports no latency histograms"
		}
		if why != "" && !(state == StateUnjudged && j == catalogue.JudgeSlow) {
			// UNJUDGED's first reason says SLOW cannot be judged.
			notes = append(notes, cannotText(j, why))
		}
		if why := ev.Kind.PartialOn(j, ev.Derived); why != "" && judgedState[j] == state {
			notes = append(notes, fmt.Sprintf("%s judged on partial evidence: %s", j, why))
		}
	}
	return notes
}

// cannotText says that judgement j cannot be made, and why.
func cannotText(j catalogue.Judgement, why string) string {
	if strings.Contains(why, "cannot be judged") {
		return why
	}
	return fmt.Sprintf("%s: %s cannot be judged", why, j)
}

// routerNote is the reason a router's page is given.
func routerNote(rep *ReplicaReport) string {
	return fmt.Sprintf("%s router in front of %s: its figures are theirs, summed, and are not added to the fleet totals",
		rep.Router, plural(float64(len(rep.Backends)), "backend"))
}

// finishedTotal takes the finished requests from the engine's own total
// when the page has one: engines that count only some reasons apart
// (SGLang its aborts) would otherwise have their rate read off that one. A
// total below the sum of the reasons is kept out, so that no share
// exceeds the whole.
func (w *window) finishedTotal(f *Figures, ev *evidence, runs *seriesRuns) {
	total := Num(w.rateOf(&runs.scalars[catalogue.FinishedRequests]))
	if !total.Known() || total < f.RequestsPerSecond {
		return
	}
	f.RequestsPerSecond = total
	ev.Finished = w.increaseOf(&runs.scalars[catalogue.FinishedRequests])
	f.SuccessRate = ratio(f.FinishedPerSecond.Stop, total)
	f.LengthShare = ratio(f.FinishedPerSecond.Length, total)
	f.AbortShare = ratio(f.FinishedPerSecond.Abort, total)
}

// waitingMetric is the family an autoscaler scales the engine on: its
// count of waiting requests.
func waitingMetric(k catalogue.EngineKind) string {
	for i := range catalogue.Reads {
		if r := &catalogue.Reads[i]; r.Engine == k && r.Kind == catalogue.ReadScalar && r.Scalar == catalogue.Waiting && !r.Legacy {
			return r.Name
		}
	}
	return "vllm:num_requests_waiting"
}

// batchCapFamilies are the families in which pages of kind k state their
// batch cap (catalogue.MaxRunning), a split family with its label's value.
func batchCapFamilies(k catalogue.EngineKind) []string {
	var out []string
	for i := range catalogue.Reads {
		r := &catalogue.Reads[i]
		if r.Engine != k {
			continue
		}
		switch {
		case r.Kind == catalogue.ReadScalar && r.Scalar == catalogue.MaxRunning:
			out = append(out, r.Name)
		case r.Kind == catalogue.ReadSplitScalar:
			for _, sp := range r.Split {
				if sp.Scalar == catalogue.MaxRunning {
					out = append(out, r.Name+"{"+r.Label+"=\""+sp.Value+"\"}")
				}
			}
		}
	}
	return out
}

// figureKeys are the JSON names of the report figures a catalogue figure
// feeds, where they differ from the figure's own name.
var figureKeys = map[catalogue.Figure]string{
	catalogue.ScalarFigure(catalogue.PromptTokens):             "prompt_tokens_per_second",
	catalogue.ScalarFigure(catalogue.GenerationTokens):         "generation_tokens_per_second",
	catalogue.ScalarFigure(catalogue.Preemptions):              "preemptions_per_second",
	catalogue.ScalarFigure(catalogue.PrefixCacheQueries):       "prefix_cache_hit_rate",
	catalogue.ScalarFigure(catalogue.PrefixCacheHits):          "prefix_cache_hit_rate",
	catalogue.ScalarFigure(catalogue.FinishedRequests):         "requests_per_second",
	catalogue.HistogramFigure(catalogue.TTFT):                  "ttft_seconds",
	catalogue.HistogramFigure(catalogue.ITL):                   "itl_seconds",
	catalogue.HistogramFigure(catalogue.E2E):                   "e2e_seconds",
	catalogue.HistogramFigure(catalogue.QueueTime):             "queue_seconds",
	catalogue.HistogramFigure(catalogue.PrefillTime):           "prefill_seconds",
	catalogue.HistogramFigure(catalogue.DecodeTime):            "decode_seconds",
	catalogue.HistogramFigure(catalogue.PromptLength):          "mean_prompt_tokens",
	catalogue.HistogramFigure(catalogue.GenerationLength):      "mean_generation_tokens",
	catalogue.HistogramFigure(catalogue.PreemptionsPerRequest): "preemptions_per_request",
	catalogue.HistogramFigure(catalogue.NIXLTransferTime):      "nixl_transfer_seconds",
	catalogue.HistogramFigure(catalogue.NIXLTransferBytes):     "nixl_bytes_per_second",
}

// figureKey is the JSON name of the report figure f feeds.
func figureKey(f catalogue.Figure) string {
	if k, ok := figureKeys[f]; ok {
		return k
	}
	return f.String()
}

// staleWindowShare is how much of the window an engine that counts only
// when requests end must have watched without a counter moving before it
// is STALE: a scrape interval short of the whole.
const staleWindowShare = 0.9

// countsAtEnd reports whether the engine counts work only when requests
// end, so that its counters stand still between finishes.
func (ev *evidence) countsAtEnd() bool {
	return ev.Kind < catalogue.NumEngineKinds && catalogue.Capabilities[ev.Kind].CountsAtEnd
}

// longEnoughForStale reports whether the window is long enough to call
// the engine's still counters stale.
func (ev *evidence) longEnoughForStale(cfg Config) bool {
	return !ev.countsAtEnd() || ev.SpanSeconds >= staleWindowShare*cfg.Window.Seconds()
}

// hasLatency reports whether a page has any of the latency histograms SLOW
// is judged on.
func hasLatency(s *catalogue.Sample) bool {
	for _, h := range []catalogue.Histogram{catalogue.TTFT, catalogue.ITL, catalogue.E2E} {
		if s.Total.Histograms[h].Present() {
			return true
		}
	}
	return false
}
