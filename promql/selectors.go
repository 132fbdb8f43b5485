package promql

import (
	"slices"

	"github.com/vtop-dev/vtop/catalogue"
)

// engines are the engines whose pages the rules read, in the order their
// alternatives are tried: every engine of the catalogue but none (routers'
// pages describe other servers and are left out).
func engines() []catalogue.EngineKind {
	var ks []catalogue.EngineKind
	for k := catalogue.EngineKind(1); k < catalogue.NumEngineKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// selector is one way an engine's page exposes a figure: a set of family
// names (with suffix) and an optional label matcher.
type selector struct {
	names []string
	label string // label=value matcher of a split family; "" for none
	extra string // further matchers (a source's selector); "" for none
}

// String is the selector in PromQL.
func (s selector) String() string { return Selector("", NameIs(s.names...), s.label, s.extra) }

// exposedNames are the names a family is found under in a Prometheus
// server: vLLM's with each of the prefixes its deployments rewrite it to,
// every other engine's as it is.
func exposedNames(r *catalogue.Read, suffix string) []string {
	if r.Engine != catalogue.EngineVLLM {
		return []string{r.Name + suffix}
	}
	return spellings(r.Name + suffix)
}

// alternatives are an engine's selectors of one figure, best first: the
// current names, then the legacy ones (read only where the current are
// absent), then the split families of another kind of page, then the
// derivations of the figure from another family. suffix is added to every
// name (_bucket, _count of a histogram).
func alternatives(k catalogue.EngineKind, fig catalogue.Figure, suffix string) []selector {
	var current, legacy selector
	var split []selector
	for i := range catalogue.Reads {
		r := &catalogue.Reads[i]
		if r.Engine != k || r.Router != catalogue.RouterNone || !r.FigureSet().Has(fig) {
			continue
		}
		switch {
		case r.Split != nil:
			split = append(split, selector{names: []string{r.Name + suffix}, label: splitMatcher(r, fig)})
		case r.Legacy:
			legacy.names = append(legacy.names, exposedNames(r, suffix)...)
		default:
			current.names = append(current.names, exposedNames(r, suffix)...)
		}
	}
	var out []selector
	for _, s := range append([]selector{current, legacy}, split...) {
		if len(s.names) > 0 {
			out = append(out, s)
		}
	}
	// a derivation is the last resort: an older page's way to the figure
	// (SGLang's retractions per request before its retraction counter)
	return append(out, derived(k, fig)...)
}

// splitMatcher is the label matcher that picks fig's series of a split
// family; "" for none.
func splitMatcher(r *catalogue.Read, fig catalogue.Figure) string {
	var values []string
	for _, s := range r.Split {
		if s.Scalar == mustScalar(fig) && (r.Kind == catalogue.ReadSplitScalar || r.Kind == catalogue.ReadFinishedAs) ||
			r.Kind == catalogue.ReadSplitHistogram && catalogue.HistogramFigure(s.Histogram) == fig {
			values = append(values, s.Value)
		}
	}
	if len(values) == 0 {
		return ""
	}
	return MatchAny(r.Label, values...)
}

// mustScalar is fig's scalar, or NumScalars for a histogram.
func mustScalar(fig catalogue.Figure) catalogue.Scalar {
	if s, ok := fig.Scalar(); ok {
		return s
	}
	return catalogue.NumScalars
}

// derived are the selectors of a scalar an engine does not export but the
// catalogue derives as a histogram's sum (SGLang's preemptions are the sum
// of its retractions per request).
func derived(k catalogue.EngineKind, fig catalogue.Figure) []selector {
	var out []selector
	for _, d := range catalogue.Derivations {
		if d.Engine != k || d.Op != catalogue.DeriveHistogramSum || catalogue.ScalarFigure(d.Scalar) != fig {
			continue
		}
		out = append(out, alternatives(k, catalogue.HistogramFigure(d.Histogram), "_sum")...)
	}
	return out
}

// counterNames are the names of an engine's counters whose movement shows
// work being done: tokens and finished requests (STALE and IDLE read them).
func counterNames(k catalogue.EngineKind) []string {
	var names []string
	for i := range catalogue.Reads {
		r := &catalogue.Reads[i]
		// a split family feeds other figures by its label, but a count of
		// ended requests moves with work whatever its label says
		if r.Engine != k || r.Router != catalogue.RouterNone || r.Split != nil && r.Kind != catalogue.ReadFinishedAs {
			continue
		}
		work := r.Kind == catalogue.ReadFinished || r.Kind == catalogue.ReadFinishedAs ||
			r.Kind == catalogue.ReadScalar && slices.Contains([]catalogue.Scalar{
				catalogue.PromptTokens, catalogue.GenerationTokens, catalogue.FinishedRequests}, r.Scalar)
		if work {
			names = append(names, exposedNames(r, "")...)
		}
	}
	return names
}
