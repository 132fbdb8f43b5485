package catalogue

import (
	"encoding/json"
	"testing"
)

func TestEngineKindNames(t *testing.T) {
	for k := range NumEngineKinds {
		got, ok := ParseEngineKind(k.String())
		if k == EngineUnknown {
			if ok {
				t.Errorf("ParseEngineKind(%q) accepted the unknown kind", k)
			}
			continue
		}
		if !ok || got != k {
			t.Errorf("ParseEngineKind(%q) = %v, %v", k, got, ok)
		}
	}
	b, err := json.Marshal(struct {
		EngineKind EngineKind `json:"engine_kind"`
		Router     RouterKind `json:"router"`
		Role       Role       `json:"role"`
	}{EngineTGI, RouterEndpointPicker, RoleDecode})
	if err != nil || string(b) != `{"engine_kind":"tgi","router":"endpoint-picker","role":"decode"}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
}

func TestRoleOf(t *testing.T) {
	tests := []struct {
		v    string
		want Role
	}{
		{"unified", RoleUnified}, {"prefill", RolePrefill}, {"decode", RoleDecode},
		{"trtllm", RoleUnknown}, {"undefined", RoleUnknown}, {"", RoleUnknown},
	}
	for _, tt := range tests {
		if got := RoleOf(tt.v); got != tt.want {
			t.Errorf("RoleOf(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// Every figure fits a FigureSet, and a figure is either a scalar or a
// histogram, never both.
func TestFigures(t *testing.T) {
	if n := int(NumScalars) + int(NumHistograms); n > 64 {
		t.Fatalf("%d figures do not fit a FigureSet", n)
	}
	var set FigureSet
	for s := range NumScalars {
		f := ScalarFigure(s)
		if got, ok := f.Scalar(); !ok || got != s {
			t.Errorf("ScalarFigure(%v).Scalar() = %v, %v", s, got, ok)
		}
		if _, ok := f.Histogram(); ok {
			t.Errorf("%v is also a histogram", f)
		}
		if set.Has(f) {
			t.Errorf("%v already in the set", f)
		}
		set.Add(f)
	}
	for h := range NumHistograms {
		f := HistogramFigure(h)
		if got, ok := f.Histogram(); !ok || got != h || f.String() != h.String() {
			t.Errorf("HistogramFigure(%v).Histogram() = %v, %v", h, got, ok)
		}
		if set.Has(f) {
			t.Errorf("%v collides with a scalar", f)
		}
		set.Add(f)
	}
}

// The capability table agrees with the alias table: a state whose evidence
// an engine does not export is marked as not judged, and every derivation
// starts from a figure the engine does export.
func TestCapabilitiesMatchTheAliasTable(t *testing.T) {
	latency := []Figure{HistogramFigure(TTFT), HistogramFigure(ITL), HistogramFigure(E2E)}
	for k := EngineVLLM; k < NumEngineKinds; k++ {
		anyLatency := false
		for _, f := range latency {
			// A histogram made of two counters has a mean, no quantiles to judge by.
			anyLatency = anyLatency || k.Exports(f) && !meanOnly(k, f)
		}
		if anyLatency == !k.CanJudge(JudgeSlow) {
			t.Errorf("%v: exports latency %v, CanJudge(SLOW) %v", k, anyLatency, k.CanJudge(JudgeSlow))
		}
		if k.Exports(ScalarFigure(Preemptions)) != k.CanJudge(JudgePreempting) {
			t.Errorf("%v: exports preemptions %v, CanJudge(PREEMPTING) %v", k, k.Exports(ScalarFigure(Preemptions)), k.CanJudge(JudgePreempting))
		}
		if !k.Exports(ScalarFigure(Running)) || !k.Exports(ScalarFigure(Waiting)) {
			t.Errorf("%v: no running or waiting figure", k)
		}
	}
	for _, d := range Derivations {
		var src Figure
		switch d.Op {
		case DeriveHistogramSum:
			src = HistogramFigure(d.Histogram)
		case DeriveCopy:
			src = ScalarFigure(d.From)
		case DeriveAddFinished:
			src = ScalarFigure(d.Scalar)
		case DeriveMeanHistogram:
			src = ScalarFigure(d.From)
			if !d.Engine.Exports(ScalarFigure(d.Scalar)) {
				t.Errorf("%v derives %v's count from %v, which it does not export", d.Engine, d.Histogram, d.Scalar)
			}
		}
		if !d.Engine.Exports(src) {
			t.Errorf("%v derives %v from %v, which it does not export", d.Engine, d.Figure(), src)
		}
		if how, ok := d.Engine.DerivedBy(d.Figure()); !ok || how == "" {
			t.Errorf("%v: %v derived without saying how", d.Engine, d.Figure())
		}
	}
	if EngineUnknown.CanJudge(JudgeIdle) {
		t.Error("a page of no engine can be judged IDLE")
	}
}

func TestDerivedBy(t *testing.T) {
	tests := []struct {
		k    EngineKind
		f    Figure
		want bool
	}{
		{EngineVLLM, HistogramFigure(TTFT), false},
		{EngineTGI, HistogramFigure(TTFT), true},        // a note: mean of queue + prefill
		{EngineTGI, HistogramFigure(ITL), true},         // per-request mean
		{EngineTGI, ScalarFigure(PromptTokens), true},   // histogram sum
		{EngineTRTLLM, HistogramFigure(ITL), true},      // per-request TPOT
		{EngineSGLang, ScalarFigure(Preemptions), true}, // retractions
		{EngineSGLang, ScalarFigure(Running), false},
		{EngineLlamaCpp, ScalarFigure(PromptTokens), false},
		{EngineDynamo, ScalarFigure(Running), true}, // in flight, queued included
	}
	for _, tt := range tests {
		if _, got := tt.k.DerivedBy(tt.f); got != tt.want {
			t.Errorf("%v.DerivedBy(%v) = %v, want %v", tt.k, tt.f, got, tt.want)
		}
	}
}

func TestTGIBuckets(t *testing.T) {
	// The capture's first input-length bounds for a 511-token limit, as
	// its exporter printed them.
	b := TGILengthBuckets(511)
	if b[0] != 5.11 || b[2] != 15.330000000000002 || b[99] != 511.00000000000006 {
		t.Errorf("TGILengthBuckets(511) = %v … %v", b[:3], b[99])
	}
	d := TGIDurationBuckets
	if d[1] != 0.00022500000000000002 || d[34] != 145.61096060497135 {
		t.Errorf("TGIDurationBuckets = %v … %v", d[:2], d[34])
	}
}

// meanOnly reports whether kind k's figure f is a histogram it makes of
// two counters (DeriveMeanHistogram).
func meanOnly(k EngineKind, f Figure) bool {
	for _, d := range Derivations {
		if d.Engine == k && d.Op == DeriveMeanHistogram && d.Figure() == f {
			return true
		}
	}
	return false
}

// TestPartialWhereDerived: a Partial note limited to pages on which a
// figure is derived names a figure the engine derives (else it would
// never show) and one it also reads as such (else it would always), and
// has a note to show.
func TestPartialWhereDerived(t *testing.T) {
	for k := range NumEngineKinds {
		for j, f := range Capabilities[k].PartialWhereDerived {
			if Capabilities[k].Partial[j] == "" {
				t.Errorf("%v %v: limited, but no Partial note", k, j)
			}
			if _, derived := k.DerivedBy(f); !derived {
				t.Errorf("%v %v: %v is never derived", k, j, f)
			}
			read := false
			for i := range Reads {
				read = read || Reads[i].Engine == k && !Reads[i].Derived && Reads[i].FigureSet().Has(f)
			}
			if !read {
				t.Errorf("%v %v: %v is never read as such", k, j, f)
			}
			var derived FigureSet
			derived.Add(f)
			if k.PartialOn(j, derived) == "" || k.PartialOn(j, 0) != "" {
				t.Errorf("%v %v: PartialOn %q where derived, %q where read", k, j, k.PartialOn(j, derived), k.PartialOn(j, 0))
			}
		}
	}
}
