package monitor

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/testutil"
)

// fuzzSecret is a secret of vtop's in the fuzzed pages: a token it sent.
const fuzzSecret = "tok-7e3c-SECRET"

// FuzzReportIsSafe holds the invariant the screen and the text outputs
// rely on instead of cleaning text themselves: whatever a server sends (its
// page) and whatever a user types (the target), every string of the Report
// is safe to draw, and holds no secret of vtop's (a page that echoes the
// token in its labels). Text is cleaned once, where it enters; this proves
// no path skips it.
func FuzzReportIsSafe(f *testing.F) {
	safetext.AddSecrets(fuzzSecret)
	f.Add([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\""+fuzzSecret+"\",model_name=\""+fuzzSecret+"\"} 1\n"+
		"# TYPE vllm:lora_requests_info gauge\nvllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\""+fuzzSecret+"\",waiting_lora_adapters=\"a,"+fuzzSecret+"\"} 1\n"), "gpu-a:8000")
	f.Add([]byte(testutil.HealthyPage), "gpu-a:8000")
	f.Add(testutil.VLLMPage(f, 2), "http://gpu-b:8000/metrics?x=1")
	f.Add([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"\x1b]0;owned\x07\",model_name=\"\x9b2J\"} 1\n"), "gpu-\x1b[2J:8000")
	f.Add([]byte("vllm:num_requests_running{model_name=\"m\"} x\x1b[31m\n"), "host:1/\x07path")
	f.Fuzz(func(t *testing.T, body []byte, typed string) {
		target, err := scrape.ParseTarget(typed)
		if err != nil {
			if !safetext.IsSafe(err.Error()) {
				t.Fatalf("target error not safe: %q", err.Error())
			}
			return
		}
		in := page.NewIngester()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var samples []catalogue.Sample
		for i := range 3 {
			s, err := in.Ingest(body, "")
			if err != nil {
				s = catalogue.Sample{Err: err.Error()}
			}
			s.Time = start.Add(time.Duration(i) * time.Second)
			samples = append(samples, s)
		}
		readings := []catalogue.Readings{{Target: target.Name, Samples: samples}}
		first := analysis.Analyze(start.Add(time.Second), readings, analysis.DefaultConfig(), nil)
		report := analysis.Analyze(start.Add(2*time.Second), readings, analysis.DefaultConfig(), &first)
		walkStrings(reflect.ValueOf(report), "Report", func(path, s string) {
			if !safetext.IsSafe(s) {
				t.Errorf("%s = %q is not safe to draw", path, s)
			}
			if strings.Contains(s, fuzzSecret) {
				t.Errorf("%s = %q holds a secret of vtop's", path, s)
			}
		})
	})
}

// walkStrings calls visit for every string reachable from v.
func walkStrings(v reflect.Value, path string, visit func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		visit(path, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, visit)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkStrings(v.Field(i), path+"."+v.Type().Field(i).Name, visit)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"[]", visit)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walkStrings(k, path+"{key}", visit)
			walkStrings(v.MapIndex(k), path+"{}", visit)
		}
	}
}

// The walk sees every string field: a Report with one unsafe string in a
// nested slice is caught (the fuzzer's check cannot pass vacuously).
func TestWalkStringsFindsNestedText(t *testing.T) {
	r := analysis.Report{Replicas: []analysis.ReplicaReport{{Target: "a", Reasons: []string{"ok", "bad\x1b[2J"}}}}
	var bad []string
	walkStrings(reflect.ValueOf(r), "Report", func(path, s string) {
		if !safetext.IsSafe(s) {
			bad = append(bad, path)
		}
	})
	if len(bad) != 1 || bad[0] != "Report.Replicas[].Reasons[]" {
		t.Errorf("unsafe strings found at %v, want the one reason", bad)
	}
}
