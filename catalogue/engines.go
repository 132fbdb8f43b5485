package catalogue

import "slices"

// EngineKind names the inference engine whose families a page carries.
type EngineKind uint8

// The engines vtop reads. A page of none of them is EngineUnknown.
const (
	EngineUnknown  EngineKind = iota
	EngineVLLM                // vLLM (vllm:*)
	EngineSGLang              // SGLang (sglang:*)
	EngineTRTLLM              // TensorRT-LLM's trtllm-serve (trtllm_*, or unprefixed at /prometheus/metrics)
	EngineTGI                 // Hugging Face Text Generation Inference (tgi_*)
	EngineLlamaCpp            // llama.cpp server --metrics (llamacpp:*)
	EngineDynamo              // NVIDIA Dynamo's frontend (dynamo_frontend_*)
	NumEngineKinds            // the number of kinds; not a kind
)

// engineKindNames are the names of the kinds, as JSON and the command line
// spell them.
var engineKindNames = [NumEngineKinds]string{"unknown", "vllm", "sglang", "trtllm", "tgi", "llamacpp", "dynamo"}

// String returns the kind's name ("vllm", "sglang", …).
func (k EngineKind) String() string { return nameOf(engineKindNames[:], k, "unknown") }

// nameOf is v's name in names, def past their end.
func nameOf[T ~uint8](names []string, v T, def string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return def
}

// MarshalText spells the kind by name in JSON.
func (k EngineKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name; a name vtop does not know reads as
// EngineUnknown, so that a report written by a newer vtop still reads.
func (k *EngineKind) UnmarshalText(b []byte) error {
	*k, _ = ParseEngineKind(string(b))
	return nil
}

// ParseEngineKind returns the kind of that name.
func ParseEngineKind(name string) (EngineKind, bool) {
	i := slices.Index(engineKindNames[:], name)
	return EngineKind(max(i, 0)), i > 0
}

// RouterKind names a router whose page describes many backends.
type RouterKind uint8

// The routers vtop recognises.
const (
	RouterNone            RouterKind = iota
	RouterProductionStack            // vLLM production-stack router: vllm: gauges with a server label
	RouterEndpointPicker             // llm-d / Gateway API Inference Extension endpoint picker (inference_pool_*)
	NumRouterKinds                   // the number of kinds; not a kind
)

var routerKindNames = [NumRouterKinds]string{"", "production-stack", "endpoint-picker"}

// String returns the router's name, "" for RouterNone.
func (k RouterKind) String() string { return nameOf(routerKindNames[:], k, "") }

// MarshalText spells the router by name in JSON.
func (k RouterKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a router's name; an unknown name reads as
// RouterNone.
func (k *RouterKind) UnmarshalText(b []byte) error {
	*k = RouterKind(max(slices.Index(routerKindNames[:], string(b)), 0))
	return nil
}

// BackendLabels are the labels that name a router's backends on its
// page, the current name first (the llm-d picker's model_server_endpoint
// beside the older model_server_pod).
func (k RouterKind) BackendLabels() []string {
	switch k {
	case RouterProductionStack:
		return []string{LabelServer}
	case RouterEndpointPicker:
		return []string{LabelEndpoint, LabelPod}
	}
	return nil
}

// Role is the part a server plays in disaggregated serving.
type Role uint8

// The roles. Only a page that says so gets one.
const (
	RoleUnknown Role = iota // the page does not say
	RoleUnified             // prefill and decode in one server
	RolePrefill             // prefill only: hands the KV cache on
	RoleDecode              // decode only: receives the KV cache
	NumRoles                // the number of roles; not a role
)

var roleNames = [NumRoles]string{"", "unified", "prefill", "decode"}

// String returns the role's name, "" for RoleUnknown.
func (r Role) String() string { return nameOf(roleNames[:], r, "") }

// MarshalText spells the role by name in JSON.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a role's name; an unknown name reads as RoleUnknown.
func (r *Role) UnmarshalText(b []byte) error {
	*r = RoleOf(string(b))
	return nil
}

// RoleOf maps a label value (SGLang's engine_type) to a role; values that
// are no role (TensorRT-LLM's engine_type="trtllm") give RoleUnknown.
func RoleOf(v string) Role { return Role(max(slices.Index(roleNames[:], v), 0)) }

// Figure names one figure of a Series: a scalar or a histogram.
type Figure uint8

// ScalarFigure is the figure of a scalar.
func ScalarFigure(s Scalar) Figure { return Figure(s) }

// HistogramFigure is the figure of a histogram.
func HistogramFigure(h Histogram) Figure { return Figure(NumScalars) + Figure(h) }

// Scalar returns the figure's scalar, and false when it is a histogram.
func (f Figure) Scalar() (Scalar, bool) { return Scalar(f), f < Figure(NumScalars) }

// Histogram returns the figure's histogram, and false when it is a scalar.
func (f Figure) Histogram() (Histogram, bool) {
	return Histogram(f - Figure(NumScalars)), f >= Figure(NumScalars) && f < Figure(NumScalars)+Figure(NumHistograms)
}

// String returns the figure's short name.
func (f Figure) String() string {
	if s, ok := f.Scalar(); ok {
		return s.String()
	}
	if h, ok := f.Histogram(); ok {
		return h.String()
	}
	return "figure"
}

// FigureSet is a set of figures.
type FigureSet uint64

// Add puts f in the set.
func (s *FigureSet) Add(f Figure) { *s |= 1 << f }

// Has reports whether f is in the set.
func (s FigureSet) Has(f Figure) bool { return s&(1<<f) != 0 }

// Judgement is a state the analysis judges from a page's evidence (DOWN
// needs none, HEALTHY is what is left).
type Judgement uint8

// The judgements.
const (
	JudgePreempting Judgement = iota
	JudgeFull
	JudgeSlow
	JudgeStale
	JudgeIdle
	NumJudgements // the number of judgements; not one
)

var judgementNames = [NumJudgements]string{"PREEMPTING", "FULL", "SLOW", "STALE", "IDLE"}

// String returns the state's name as the analysis shows it.
func (j Judgement) String() string { return nameOf(judgementNames[:], j, "?") }
