package page

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// enginePages are the pages of every engine and version: the captures
// and the pages written from the engines' upstream files.
func enginePages(t *testing.T) map[string]map[string]*dto.MetricFamily {
	t.Helper()
	var paths []string
	for _, dir := range []string{realDir, enginesDir} {
		p, err := filepath.Glob(filepath.Join(dir, "*.txt"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p...)
	}
	pages := map[string]map[string]*dto.MetricFamily{}
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		body = cleanReal(filepath.Base(p), body)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			continue // a capture that is no whole page (an excerpt cut mid-family): the golden tests read it
		}
		pages[p] = fams
	}
	return pages
}

// pageSources name the Source (engine and the start of its versions)
// each page of an engine follows. The llama.cpp test payload of unstated
// version is left out: it types n_busy_slots_per_decode a gauge, where
// b4747's and b8901's real pages type it a counter.
var pageSources = []struct {
	page, engine, versions string
}{
	{"real/sglang-docs-production_metrics-md.txt", "SGLang", "~0.4"},
	{"real/docs-dynamo-a7b23c00-sglang_via_dynamo-unstated.txt", "SGLang", "0.5 to 2026-04"},
	{"engines/sglang-2026-06.txt", "SGLang", "main to #25153"},
	{"engines/sglang-2026-06-disagg-decode.txt", "SGLang", "main to #25153"},
	{"real/docs-dynamo-ce30a764-trtllm_via_dynamo-unstated.txt", "TensorRT-LLM", "trtllm-serve and its workers"},
	{"engines/trtllm-serve-2026-09.txt", "TensorRT-LLM", "trtllm-serve and its workers"},
	{"engines/trtllm-serve-2026-09.txt", "TensorRT-LLM", "collector.py containing PR #18583"},
	{"real/docs-tensorrtllm_backend-0b9d7d5a-triton_trtllm-23.11plus.txt", "Triton TensorRT-LLM backend", "23.11"},
	{"engines/triton-trtllm-2026.txt", "Triton TensorRT-LLM backend", "23.11"},
	{"real/fixture-datadog_integrations-core-9e390cde-tgi-unstated-EXCERPT.txt", "TGI", "v2–v3"},
	{"engines/tgi-db931fcf.txt", "TGI", "v2–v3"},
	{"engines/tgi-db931fcf.txt", "TGI", "v3 backend, db931fcf"},
	{"engines/llamacpp-b4747.txt", "llama.cpp", "b4747 (2025-02-20) to b8901"},
	{"engines/llamacpp-b4747.txt", "llama.cpp", "b4747 (2025-02-20); gone"},
	{"engines/llamacpp-b8901.txt", "llama.cpp", "b4747 (2025-02-20) to b8901"},
	{"real/docs-dynamo-ce30a764-dynamo_frontend-unstated.txt", "Dynamo frontend", "the capture"},
	{"engines/dynamo-frontend-2026-05.txt", "Dynamo frontend", "metrics.rs containing PR #9526"},
	{"real/repo-yalmashad_Inference-gwapi-282f0d73-gie_epp-chart_v1.0.1-EXCERPT.txt", "Endpoint picker", "gateway-api-inference-extension to v1.0"},
	{"engines/gie-epp-v1.1.txt", "Endpoint picker", "inference_objective_*"},
	{"engines/llmd-epp-2026-08.txt", "Endpoint picker", "inference_objective_*"},
}

// Each engine and version of the engine table has a page of its own (a
// capture or one written from its upstream file) carrying most of its
// families; and on each page, a family of the version it follows has the
// type, the labels and the buckets the catalogue gives it.
func TestEnginePagesFollowTheirSources(t *testing.T) {
	pages := enginePages(t)
	covered := map[int]bool{}
	for _, ps := range pageSources {
		fams := pages[filepath.Join("testdata", ps.page)]
		if fams == nil {
			t.Errorf("%s: no such page, or not a whole one", ps.page)
			continue
		}
		matched := false
		for i, src := range catalogue.Sources {
			if !strings.HasPrefix(src.Engine, ps.engine) || !strings.HasPrefix(src.Versions, ps.versions) {
				continue
			}
			matched = true
			on := 0
			for _, f := range src.Families {
				if mf := fams[f.Name]; mf != nil {
					on++
					checkFamilyOnPage(t, ps.page, mf, f)
				}
			}
			covered[i] = covered[i] || on*2 > len(src.Families)
		}
		if !matched {
			t.Errorf("%s: no Source %s %q…", ps.page, ps.engine, ps.versions)
		}
	}
	for i, src := range catalogue.Sources {
		if src.Kind == catalogue.EngineVLLM || src.Kind == catalogue.EngineUnknown && src.Router == catalogue.RouterNone {
			continue // vLLM's versions: the captures and the vLLM page tests
		}
		if !covered[i] {
			t.Errorf("%s %s: no page carries most of its %d families", src.Engine, src.Versions, len(src.Families))
		}
	}
}

// checkFamilyOnPage fails where a page's family differs from the
// catalogue's: its type, the label names of its series (the le of a
// histogram aside) when the catalogue lists them, its finite bounds when
// the catalogue lists them.
func checkFamilyOnPage(t *testing.T, page string, mf *dto.MetricFamily, f catalogue.Family) {
	t.Helper()
	want := map[catalogue.Type]dto.MetricType{catalogue.TypeGauge: dto.MetricType_GAUGE,
		catalogue.TypeCounter: dto.MetricType_COUNTER, catalogue.TypeHistogram: dto.MetricType_HISTOGRAM,
		catalogue.TypeSummary: dto.MetricType_SUMMARY}[f.Type]
	if mf.GetType() != want && mf.GetType() != dto.MetricType_UNTYPED {
		t.Errorf("%s: %s typed %v, catalogued %v", page, f.Name, mf.GetType(), want)
	}
	for _, m := range mf.GetMetric() {
		var names []string
		for _, l := range m.GetLabel() {
			if l.GetValue() != "" {
				names = append(names, l.GetName())
			}
		}
		slices.Sort(names)
		if f.Labels != nil && !slices.Equal(names, f.Labels) {
			t.Errorf("%s: %s labelled %v, catalogued %v", page, f.Name, names, f.Labels)
		}
		if h := m.GetHistogram(); h != nil && f.Buckets != nil {
			var bounds []float64
			for _, b := range h.GetBucket() {
				if u := b.GetUpperBound(); u < 1e308 {
					bounds = append(bounds, u)
				}
			}
			if !slices.Equal(bounds, f.Buckets) {
				t.Errorf("%s: %s bounds %s, catalogued %s", page, f.Name, fmtBounds(bounds), fmtBounds(f.Buckets))
			}
		}
	}
}

func fmtBounds(b []float64) string {
	var s []byte
	for i, v := range b {
		if i > 0 {
			s = append(s, ' ')
		}
		s = strconv.AppendFloat(s, v, 'g', -1, 64)
	}
	return string(s)
}
