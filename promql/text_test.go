package promql

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestShapes holds the shapes every query is written from to PromQL's
// syntax: matchers quoted as Go quotes them, regexes of literal values
// escaped, empty matchers and their braces left out.
func TestShapes(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"a name alone", Selector("up"), "up"},
		{"an empty matcher is left out", Selector("up", ""), "up"},
		{"a name and matchers", Selector("up", `job="a"`, "", `pod!=""`), `up{job="a", pod!=""}`},
		{"matchers alone", Selector("", NameIs("a:b"), `job="a"`), `{__name__="a:b", job="a"}`},
		{"names as a regex", NameIs("a:b", "c"), `__name__=~"a:b|c"`},
		{"literal values escaped", MatchAny("r", "a.b", "c"), `r=~"a\\.b|c"`},
		{"one value is an equality", MatchAny("le", "0.5"), `le="0.5"`},
		{"a regex quoted", NameMatches(`x"y`), `__name__=~"x\"y"`},
		{"a range as PromQL writes durations", Over("x", 90*time.Second+500*time.Millisecond), "x[1m30s500ms]"},
		{"a range in milliseconds", OverMs("x", 90*time.Second+500*time.Millisecond), "x[90500ms]"},
		{"an aggregation of all", Aggregate("count", "", "x"), "count(x)"},
		{"an aggregation by labels", Aggregate("sum", "a, le", "x"), "sum by (a, le) (x)"},
		{"a quantile", HistogramQuantile(0.99, "x"), "histogram_quantile(0.99, x)"},
		{"a label written", Tag("x", "l", "v"), `label_replace(x, "l", "v", "", "")`},
		{"a label copied", CopyLabel("x", "d", "s", "(.+)"), `label_replace(x, "d", "$1", "s", "(.+)")`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

// TestHistory: the history query tags each charted figure once, reads
// vLLM's names under every prefix, a split family's series by their
// label, counts by finished reason of the reasons vtop knows, and
// narrows every selector by the source's matchers.
func TestHistory(t *testing.T) {
	const matchers = `namespace="prod"`
	q := History("pod", matchers, 30*time.Second)
	for fig := range catalogue.Charts {
		if n := strings.Count(q, Tag("", FigureLabel, strconv.Itoa(fig))[len("label_replace("):]); n != 1 {
			t.Errorf("figure %d tagged %d times", fig, n)
		}
	}
	for _, want := range []string{
		`{__name__=~"(?:vllm:|kserve_vllm:|ray_vllm_)?num_requests_running", namespace="prod"}`,
		`{__name__=~"nv_trt_llm_request_metrics", namespace="prod", request_type="active"}`,
		`finished_reason=~"stop|length|abort|error|repetition"`,
		`histogram_quantile(0.99, sum by (vtop_replica, le) (`,
		`"vtop_replica", "$1", "pod", "(.+)"`,
		"[30000ms]",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("no %s in the history query", want)
		}
	}
	if s, m := strings.Count(q, "{__name__"), strings.Count(q, matchers); s == 0 || s != m {
		t.Errorf("matchers on %d of %d selectors", m, s)
	}
}
