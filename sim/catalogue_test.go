package sim

import (
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
)

// dtoType maps the catalogue's family types to the exposition's.
var dtoType = [...]dto.MetricType{
	catalogue.TypeGauge:     dto.MetricType_GAUGE,
	catalogue.TypeCounter:   dto.MetricType_COUNTER,
	catalogue.TypeHistogram: dto.MetricType_HISTOGRAM,
}

// The simulator's pages carry the catalogue's families with its types,
// labels and buckets, and none of the other generation's names.
func TestExportedFamiliesMatchCatalogue(t *testing.T) {
	tests := []struct {
		version string
		want    []catalogue.Family
		absent  []string
	}{
		{V1, slices.Concat(catalogue.VLLMV1, catalogue.Frontend), catalogue.VLLMV1Absent},
		{V0, catalogue.VLLMV0, catalogue.VLLMV0Absent},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			// Replica 1 of the mixed scenario has prefix caching and
			// speculative decoding; replica 0 of a V1 fleet has two engines.
			f, err := NewFleet(Options{Replicas: 2, Scenario: Mixed, Seed: 3, VLLMVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			f.Advance(30e9)
			mfs, err := f.Replicas()[1].Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*dto.MetricFamily{}
			for _, mf := range mfs {
				got[mf.GetName()] = mf
			}
			for _, want := range tt.want {
				checkFamily(t, got[want.Name], want)
			}
			for _, name := range tt.absent {
				if _, ok := got[name]; ok {
					t.Errorf("%s present on a %s page", name, tt.version)
				}
			}
		})
	}
}

func checkFamily(t *testing.T, mf *dto.MetricFamily, want catalogue.Family) {
	t.Helper()
	if mf == nil {
		t.Errorf("%s: absent", want.Name)
		return
	}
	if mf.GetType() != dtoType[want.Type] {
		t.Errorf("%s: type %v, want %v", want.Name, mf.GetType(), dtoType[want.Type])
	}
	for _, m := range mf.GetMetric() {
		var names []string
		for _, l := range m.GetLabel() {
			names = append(names, l.GetName())
		}
		if !slices.Equal(names, want.Labels) {
			t.Errorf("%s: labels %v, want %v", want.Name, names, want.Labels)
		}
		if want.Type != catalogue.TypeHistogram {
			continue
		}
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if !slices.Equal(bounds, want.Buckets) {
			t.Errorf("%s: buckets %v, want %v", want.Name, bounds, want.Buckets)
		}
	}
}

func TestFinishReasonsPreCreated(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Idle})
	if err != nil {
		t.Fatal(err)
	}
	p := scrape(t, f.Replicas()[0])
	for _, reason := range []string{"stop", "length", "abort", "error", "repetition"} {
		if n := len(filter(p["vllm:request_success_total"], "finished_reason", reason)); n != 1 {
			t.Errorf("finished_reason=%q: %d series, want 1 at 0", reason, n)
		}
	}
}

func TestTwoEnginesExportTwoSeries(t *testing.T) {
	f, err := NewFleet(Options{Replicas: 1, Scenario: Mixed, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.Advance(60e9)
	p := scrape(t, f.Replicas()[0])
	for _, engine := range []string{"0", "1"} {
		ms := filter(p["vllm:generation_tokens_total"], "engine", engine)
		if len(ms) != 1 || ms[0].GetCounter().GetValue() == 0 {
			t.Errorf("engine %s: %d series (want 1 with tokens)", engine, len(ms))
		}
		if len(filter(p["vllm:cache_config_info"], "engine", engine)) != 1 {
			t.Errorf("engine %s: no cache_config_info", engine)
		}
	}
}

func filter(mf *dto.MetricFamily, name, value string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mf.GetMetric() {
		if matches(m, []string{name, value}) {
			out = append(out, m)
		}
	}
	return out
}

// TestV0SumsEngines checks that a V0 page, which has no engine label, shows
// a two-engine replica as one series holding the sum of both engines.
func TestV0SumsEngines(t *testing.T) {
	pages := map[string]page{}
	for _, v := range []string{V1, V0} {
		f, err := NewFleet(Options{Replicas: 1, Scenario: Mixed, Seed: 4, VLLMVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		f.Advance(45e9)
		pages[v] = scrape(t, f.Replicas()[0])
	}
	if n := len(pages[V0]["vllm:generation_tokens_total"].GetMetric()); n != 1 {
		t.Fatalf("V0 page: %d generation token series, want 1", n)
	}
	v1, v0 := pages[V1].value("vllm:generation_tokens_total"), pages[V0].value("vllm:generation_tokens_total")
	if v1 == 0 || v1 != v0 {
		t.Errorf("generation tokens: V1 engines sum to %v, V0 page shows %v", v1, v0)
	}
	kv := pages[V0].value("vllm:gpu_cache_usage_perc")
	if kv <= 0 || kv >= 1 {
		t.Errorf("V0 KV usage %v, want the engines' mean in (0,1)", kv)
	}
}
