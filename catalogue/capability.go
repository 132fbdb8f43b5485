package catalogue

// DeriveOp says how a Derivation computes its figure.
type DeriveOp uint8

// The derivations.
const (
	// DeriveHistogramSum takes a histogram's _sum as a counter: the sum of
	// the prompt lengths of finished requests is their prompt tokens.
	DeriveHistogramSum DeriveOp = iota
	// DeriveCopy takes another scalar as is.
	DeriveCopy
	// DeriveAddFinished adds the finished requests of one reason, which the
	// engine counts apart from the rest.
	DeriveAddFinished
	// DeriveRatio divides From by Over, where Over is above 0: a part of a
	// whole as a 0–1 fraction.
	DeriveRatio
	// DeriveMeanHistogram makes Histogram one of a +Inf bucket alone from
	// two counters: From its _sum, Scalar its _count. Its mean is known,
	// its quantiles n/a, as a histogram's whose bounds were stripped.
	DeriveMeanHistogram
)

// Derivation is a figure an engine's page lacks but that the parser
// computes from what the page has, flagging it in Sample.Derived.
type Derivation struct {
	Engine EngineKind
	// Scalar is the figure computed.
	Scalar Scalar
	Op     DeriveOp
	// Histogram is the source of DeriveHistogramSum, From of DeriveCopy,
	// Finish of DeriveAddFinished.
	Histogram Histogram
	From      Scalar
	Finish    FinishReason
	// Over is the whole DeriveRatio divides From by.
	Over Scalar
	// Requires are scalars the page must have for the derivation to mean
	// anything (a query count is no use without the hits).
	Requires []Scalar
	// How says it in words, for the screen.
	How string
}

// Derivations are the figures computed from others, per engine. Each
// applies only where the figure itself is absent (DeriveAddFinished: where
// both parts are present), so a page that exports the figure keeps its own.
var Derivations = []Derivation{
	{Engine: EngineSGLang, Scalar: Preemptions, Op: DeriveHistogramSum, Histogram: PreemptionsPerRequest,
		How: "retractions of finished requests (sum of sglang:num_retractions)"},
	{Engine: EngineSGLang, Scalar: PrefixCacheQueries, Op: DeriveCopy, From: PromptTokens, Requires: []Scalar{PrefixCacheHits},
		How: "every prompt token is looked up in the radix cache"},
	{Engine: EngineTGI, Scalar: PromptTokens, Op: DeriveHistogramSum, Histogram: PromptLength,
		How: "sum of tgi_request_input_length (counted per request, not per prefill)"},
	{Engine: EngineTGI, Scalar: GenerationTokens, Op: DeriveHistogramSum, Histogram: GenerationLength,
		How: "sum of tgi_request_generated_tokens (counted when a request ends)"},
	{Engine: EngineTGI, Scalar: FinishedRequests, Op: DeriveAddFinished, Finish: FinishError,
		How: "tgi_request_success + tgi_request_failure, but those shed when overloaded"},
	{Engine: EngineDynamo, Scalar: PromptTokens, Op: DeriveHistogramSum, Histogram: PromptLength,
		How: "sum of dynamo_frontend_input_sequence_tokens"},
	{Engine: EngineTGI, Scalar: KVCacheUsage, Op: DeriveRatio, From: BatchTokens, Over: TokenBudget,
		How: "the token budget's fullness: tgi_batch_current_max_tokens ÷ tgi_batch_max_total_tokens"},
	{Engine: EngineLlamaCpp, Histogram: ITL, Op: DeriveMeanHistogram, From: GenerationSeconds, Scalar: GenerationTokens,
		How: "mean only: llamacpp:tokens_predicted_seconds_total ÷ llamacpp:tokens_predicted_total (both counted when a request ends)"},
}

// Figure is the figure d computes: its Histogram for DeriveMeanHistogram,
// else its Scalar.
func (d *Derivation) Figure() Figure {
	if d.Op == DeriveMeanHistogram {
		return HistogramFigure(d.Histogram)
	}
	return ScalarFigure(d.Scalar)
}

// Capability is what the analysis can tell from one engine's page.
type Capability struct {
	// Cannot says, per state, why it cannot be judged from this engine's
	// page: "" when it can.
	Cannot [NumJudgements]string
	// Partial says, per state, what evidence is missing when the state is
	// judged on less than vLLM's.
	Partial [NumJudgements]string
	// PartialWhereDerived limits a state's Partial note to the pages on
	// which the figure named is derived (Sample.Derived): older versions'
	// pages; a version that exports the figure as such gives the whole
	// evidence.
	PartialWhereDerived map[Judgement]Figure
	// Notes explain figures that are derived or mean something else than
	// vLLM's, beyond Derivations and Read.Derived.
	Notes []FigureNote
	// FrontsWorkers marks a frontend whose figures are those of workers
	// that may be scraped too: never add the two.
	FrontsWorkers bool
	// CountsAtEnd marks an engine whose counters move only when a request
	// ends (TGI counts requests and, through its length histograms,
	// tokens then; llama.cpp counts a request's prompt tokens when their
	// evaluation ends and its generated tokens when it ends, and times no
	// token): while long requests run nothing moves, which is neither a
	// stale exporter nor a stalled engine until no request has ended for
	// a whole window.
	CountsAtEnd bool
	// WorkerPerConnection marks a server that gives each open connection
	// one worker of its HTTP pool for as long as it stays open, idle
	// keep-alive included, from a pool that may be fixed: llama.cpp's
	// cpp-httplib, whose pool was max(parallel+2, cores−1) threads before
	// it grew threads on demand. A connection kept between scrapes takes a
	// worker from the requests, and the requests past the pool wait for a
	// worker in the HTTP layer, where no metric counts them
	// (requests_deferred counts those inside the server only). vtop's own
	// scrape queues with them: a scrape that waits past its timeout while
	// every slot is busy is that queue seen from outside.
	WorkerPerConnection bool
}

// FigureNote explains one figure of an engine.
type FigureNote struct {
	Figure Figure
	Note   string
}

// Capabilities are indexed by EngineKind. EngineUnknown can judge nothing.
var Capabilities = [NumEngineKinds]Capability{
	EngineUnknown: {Cannot: [NumJudgements]string{
		"no inference-engine metrics", "no inference-engine metrics", "no inference-engine metrics",
		"no inference-engine metrics", "no inference-engine metrics"}},
	EngineVLLM: {},
	EngineSGLang: {
		Partial: [NumJudgements]string{JudgePreempting: "retractions are counted when a request finishes, not as they happen (SGLang before 2026-05: sglang:num_retractions)"},
		// Current SGLang counts them as they happen
		// (sglang:num_retracted_requests_total, read as preemptions).
		PartialWhereDerived: map[Judgement]Figure{JudgePreempting: ScalarFigure(Preemptions)},
	},
	EngineTRTLLM: {
		Cannot:  [NumJudgements]string{JudgePreempting: "TensorRT-LLM exports no preemption counter"},
		Partial: [NumJudgements]string{JudgeSlow: "inter-token latency is a per-request mean (TPOT), not per-step gaps"},
	},
	EngineTGI: {
		Cannot: [NumJudgements]string{JudgePreempting: "TGI exports no preemption counter"},
		Partial: [NumJudgements]string{
			JudgeFull: "no KV-cache usage: fullness from the queue, queue time and the token budget's fullness where the page has it",
			JudgeSlow: "no TTFT histogram: TTFT is a derived mean, no quantiles"},
		Notes: []FigureNote{{HistogramFigure(TTFT),
			"derived mean only: mean queue time + mean prefill batch time (tgi_request_queue_duration + tgi_batch_inference_duration{method=\"prefill\"}); no quantiles"}},
		CountsAtEnd: true,
	},
	EngineLlamaCpp: {
		Cannot: [NumJudgements]string{
			JudgePreempting: "llama.cpp exports no preemption counter",
			JudgeSlow:       "llama.cpp exports no latency histograms: SLOW cannot be judged"},
		Partial: [NumJudgements]string{
			JudgeFull: "no queue time, and KV-cache usage only where the version exports it (b4747, not b8901): fullness from deferred requests, and from the scrapes' waits where the HTTP pool is fixed",
			JudgeIdle: "no request counter: idleness from the token counters"},
		CountsAtEnd:         true,
		WorkerPerConnection: true,
	},
	EngineDynamo: {
		Cannot:  [NumJudgements]string{JudgePreempting: "the Dynamo frontend sees no preemptions; read its workers"},
		Partial: [NumJudgements]string{JudgeFull: "no KV-cache usage at the frontend; read its workers"},
		Notes: []FigureNote{
			{ScalarFigure(MaxRunning), "a worker's --max-num-seqs (dynamo_frontend_model_max_num_seqs), not the frontend's sum over its workers"},
			{ScalarFigure(AwaitingFirstToken), "dynamo_frontend_queued_requests counts a request until its first token, prefill included: not a queue"},
		},
		FrontsWorkers: true,
	},
}

// PartialOn is what evidence is missing when state j is judged from a page
// of kind k whose derived figures are derived: "" when it is whole.
func (k EngineKind) PartialOn(j Judgement, derived FigureSet) string {
	if k >= NumEngineKinds || j >= NumJudgements {
		return ""
	}
	c := &Capabilities[k]
	if f, ok := c.PartialWhereDerived[j]; ok && !derived.Has(f) {
		return ""
	}
	return c.Partial[j]
}

// WorkerPerConnection reports whether a server of kind k gives each open
// connection a worker of its HTTP pool (Capability.WorkerPerConnection).
func (k EngineKind) WorkerPerConnection() bool {
	return k < NumEngineKinds && Capabilities[k].WorkerPerConnection
}

// CanJudge reports whether state j can be judged from a page of kind k.
func (k EngineKind) CanJudge(j Judgement) bool {
	return k < NumEngineKinds && j < NumJudgements && Capabilities[k].Cannot[j] == ""
}

// Exports reports whether pages of kind k give figure f, read or derived.
func (k EngineKind) Exports(f Figure) bool {
	for i := range Reads {
		if Reads[i].Engine == k && Reads[i].FigureSet().Has(f) {
			return true
		}
	}
	for _, d := range Derivations {
		if d.Engine == k && d.Figure() == f {
			return true
		}
	}
	return false
}

// DerivedBy reports whether kind k's figure f is derived (by a Derivation
// or from a family with another meaning), and how.
func (k EngineKind) DerivedBy(f Figure) (string, bool) {
	for _, d := range Derivations {
		if d.Engine == k && d.Figure() == f {
			return d.How, true
		}
	}
	for i := range Reads {
		if r := &Reads[i]; r.Engine == k && r.Derived && r.FigureSet().Has(f) {
			return r.Name + " stands in for it", true
		}
	}
	if k < NumEngineKinds {
		for _, n := range Capabilities[k].Notes {
			if n.Figure == f {
				return n.Note, true
			}
		}
	}
	return "", false
}
