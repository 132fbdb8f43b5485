package catalogue

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// labels is a series' labels as Resolve reads them.
func labels(kv ...string) Labels {
	return func(name string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestResolve(t *testing.T) {
	split := Read{Kind: ReadSplitScalar, Label: LabelReason,
		Split: []Split{{Value: "capacity", Scalar: WaitingCapacity}, {Value: "deferred", Scalar: WaitingDeferred}}}
	splitHist := Read{Kind: ReadSplitHistogram, Label: LabelMethod, Split: []Split{{Value: "prefill", Histogram: PrefillTime}}}
	shed := Read{Kind: ReadFinishedAs, Finish: FinishError, Label: LabelErr, Split: []Split{{Value: "overloaded", Scalar: AdmissionRejections}}}
	tests := []struct {
		name   string
		row    Read
		labels Labels
		want   Fold
	}{
		{"a scalar feeds its figure", Read{Kind: ReadScalar, Scalar: Running}, labels(), Fold{To: ToScalar, Which: int(Running)}},
		{"a histogram feeds its figure", Read{Kind: ReadHistogram, Histogram: TTFT}, labels(), Fold{To: ToHistogram, Which: int(TTFT)}},
		{"a split scalar by its label", split, labels(LabelReason, "deferred"), Fold{To: ToScalar, Which: int(WaitingDeferred)}},
		{"a split scalar's unknown value feeds nothing", split, labels(LabelReason, "other"), Fold{}},
		{"a split histogram by its label", splitHist, labels(LabelMethod, "prefill"), Fold{To: ToHistogram, Which: int(PrefillTime)}},
		{"a split histogram's other value feeds nothing", splitHist, labels(LabelMethod, "decode"), Fold{}},
		{"finished by reason", Read{Kind: ReadFinished}, labels(LabelFinishedReason, "length"), Fold{To: ToFinished, Which: int(FinishLength)}},
		{"a reason newer than vtop is not misfiled", Read{Kind: ReadFinished}, labels(LabelFinishedReason, "teleported"), Fold{}},
		{"finished as one reason whatever the labels", Read{Kind: ReadFinishedAs, Finish: FinishAbort}, labels(LabelFinishedReason, "stop"),
			Fold{To: ToFinished, Which: int(FinishAbort)}},
		{"finished as one reason but for a value it names", shed, labels(LabelErr, "overloaded"), Fold{To: ToScalar, Which: int(AdmissionRejections)}},
		{"finished as one reason for every other value", shed, labels(LabelErr, "validation"), Fold{To: ToFinished, Which: int(FinishError)}},
		{"a sleep state gives its level", Read{Kind: ReadSleep}, labels(LabelSleepState, "discard_all"), Fold{To: ToSleep, Which: 2}},
		{"a sleep state newer than vtop", Read{Kind: ReadSleep}, labels(LabelSleepState, "hibernating"), Fold{}},
		{"a draft position", Read{Kind: ReadSpecPerPos}, labels(LabelPosition, "3"), Fold{To: ToSpecPosition, Which: 3}},
		{"a position that is no number", Read{Kind: ReadSpecPerPos}, labels(LabelPosition, "x"), Fold{}},
		{"a negative position", Read{Kind: ReadSpecPerPos}, labels(LabelPosition, "-1"), Fold{}},
		{"a position beyond the cap warns", Read{Kind: ReadSpecPerPos}, labels(LabelPosition, "64"), Fold{Warning: warnSpecPositions}},
		{"the cache configuration's capacity is in its labels", Read{Kind: ReadCacheConfig}, labels("num_gpu_blocks", "100", "block_size", "16"),
			Fold{To: ToKVCapacity, Labelled: true, Value: 1600}},
		{"a cache configuration without numbers", Read{Kind: ReadCacheConfig}, labels("num_gpu_blocks", "many"), Fold{}},
		{"a capacity gauge", Read{Kind: ReadKVCapacity}, labels(), Fold{To: ToKVCapacity}},
		{"process start", Read{Kind: ReadProcessStart}, labels(), Fold{To: ToProcessStart}},
		{"resident memory", Read{Kind: ReadRSS}, labels(), Fold{To: ToRSS}},
		{"collections", Read{Kind: ReadGC}, labels("generation", "2"), Fold{To: ToGC}},
		{"API requests", Read{Kind: ReadHTTP}, labels(), Fold{To: ToHTTP}},
		{"LoRA adapters", Read{Kind: ReadLoRA}, labels(), Fold{To: ToLoRA}},
	}
	for _, tt := range tests {
		if got := tt.row.Resolve(tt.labels); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestResolveEveryRow: every row of the alias table feeds something for
// some labels, and a row's kind says whether it feeds an engine's Series.
func TestResolveEveryRow(t *testing.T) {
	for _, r := range Reads {
		kv := []string{LabelFinishedReason, "stop", LabelSleepState, "awake", LabelPosition, "0", "num_gpu_blocks", "1", "block_size", "16"}
		if r.Split != nil {
			kv = append(kv, r.Label, r.Split[0].Value)
		}
		to := r.Resolve(labels(kv...))
		if to.To == ToNothing || to.To.PerEngine() != r.Kind.PerEngine() {
			t.Errorf("%s: feeds %v (per engine: %v, its kind's: %v)", r.Name, to.To, to.To.PerEngine(), r.Kind.PerEngine())
		}
		if figs := to.Figures(); figs&^r.FigureSet() != 0 {
			t.Errorf("%s: feeds figures %b outside the row's %b", r.Name, figs, r.FigureSet())
		}
	}
}

func TestShadowed(t *testing.T) {
	var itl FigureSet
	itl.Add(HistogramFigure(ITL))
	legacyITL := Read{Kind: ReadHistogram, Histogram: ITL, Legacy: true}
	tests := []struct {
		name    string
		row     Read
		current FigureSet
		want    bool
	}{
		{"a current row is always read", Read{Kind: ReadHistogram, Histogram: ITL}, itl, false},
		{"a legacy row whose figure has a current family is not", legacyITL, itl, true},
		{"a legacy row alone is read", legacyITL, 0, false},
		{"a legacy count by reason is never read", Read{Kind: ReadFinished, Legacy: true}, 0, true},
	}
	for _, tt := range tests {
		if got := tt.row.Shadowed(tt.current); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
}

// TestUseReads: a test family is found while it is in use, and gone with
// the table restored.
func TestUseReads(t *testing.T) {
	n := len(Reads)
	restore := UseReads(Read{Name: "test_family_seconds", Kind: ReadHistogram, Histogram: TTFT})
	if i, ok := LookupSample([]byte("test_family_seconds_bucket")); !ok || i != n {
		t.Errorf("test family's bucket: row %d %v, want %d", i, ok, n)
	}
	restore()
	if _, ok := LookupFamily([]byte("test_family_seconds")); ok || len(Reads) != n {
		t.Errorf("after restore: found %v, %d rows (want %d)", ok, len(Reads), n)
	}
}

// TestChartSources: a chart reads every engine's family of its figure,
// current names before legacy ones, and counts by reason after the rows
// that count all requests.
func TestChartSources(t *testing.T) {
	names := func(c Chart) []string {
		var out []string
		for _, r := range c.Sources() {
			out = append(out, r.Name)
		}
		return out
	}
	kv := names(Charts[ChartKVCacheUsage])
	if i, j := slices.Index(kv, "vllm:kv_cache_usage_perc"), slices.Index(kv, "vllm:gpu_cache_usage_perc"); i < 0 || j < i {
		t.Errorf("KV cache usage from %v: want the current vLLM name before the legacy one", kv)
	}
	if !slices.Contains(kv, "sglang:token_usage") || !slices.Contains(kv, "nv_trt_llm_kv_cache_block_metrics") {
		t.Errorf("KV cache usage from %v: want SGLang's and Triton's too", kv)
	}
	reqs := names(Charts[ChartRequestsPerSecond])
	if i, j := slices.Index(reqs, "sglang:num_requests_total"), slices.Index(reqs, "vllm:request_success_total"); i < 0 || j < i {
		t.Errorf("requests from %v: want the counts of all requests before vLLM's by reason", reqs)
	}
	if slices.Contains(reqs, "request_success_total") {
		t.Errorf("requests from %v: a legacy count by reason is never read", reqs)
	}
	for f, c := range Charts {
		if len(c.Sources()) == 0 {
			t.Errorf("chart %d has no family", f)
		}
	}
}

// TestRefusal: the one rule of which values are read. A value out of its
// figure's domain (a negative count, a fraction outside 0–1, a value that
// is not a finite number, or one past 2^53, where a float no longer
// counts by ones) is not read, and Refusal says why.
func TestRefusal(t *testing.T) {
	scalar := func(s Scalar) Fold { return Fold{To: ToScalar, Which: int(s)} }
	tests := []struct {
		fold Fold
		v    float64
		want string // "" when taken, else in the refusal
	}{
		{scalar(Running), -1, "a count is ≥ 0"},
		{scalar(Running), 0, ""},
		{scalar(Running), 7, ""},
		{scalar(Running), 1e308, "past 2^53"},
		{scalar(Running), math.NaN(), "not a finite number"},
		{scalar(Waiting), math.Inf(1), "not a finite number"},
		{scalar(KVCacheUsage), 0.5, ""},
		{scalar(KVCacheUsage), 1, ""},
		{scalar(KVCacheUsage), 1.5, "a fraction is within 0–1"},
		{scalar(KVCacheUsage), -0.1, "a fraction is within 0–1"},
		{scalar(KVCacheUsage), math.Inf(1), "not a finite number"},
		{scalar(PromptTokens), -1, "a count is ≥ 0"},
		{scalar(PromptTokens), 1e15, ""},
		{scalar(Preemptions), math.NaN(), "not a finite number"},
		{scalar(Preemptions), math.Inf(-1), "not a finite number"},
		{Fold{To: ToFinished}, math.Inf(1), "not a finite number"},
		{Fold{To: ToFinished}, 4, ""},
		{Fold{To: ToSpecPosition}, -2, "a count is ≥ 0"},
		{Fold{To: ToKVCapacity}, -5, "≥ 0"},
		{Fold{To: ToKVCapacity}, 5, ""},
		{Fold{To: ToKVCapacity}, math.NaN(), "not a finite number"},
		{Fold{To: ToRSS}, 1e308, "past 2^53"},
		{Fold{To: ToRSS}, -5, "≥ 0"},
		{Fold{To: ToHTTP}, math.NaN(), "not a finite number"},
		{Fold{To: ToProcessStart}, 1.7e9, ""},
		{Fold{To: ToProcessStart}, math.Inf(1), "not a finite number"},
	}
	for _, tt := range tests {
		got := tt.fold.Refusal(tt.v)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%+v reading %v: refusal %q, want %q", tt.fold, tt.v, got, tt.want)
		}
	}
}
