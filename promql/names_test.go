package promql

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// The parts of the names (the Prometheus source's recheck asks up to 12)
// hold every name vtop reads, each in exactly one part, and about as
// many series each.
func TestNameParts(t *testing.T) {
	all := regexp.MustCompile("^(?:" + ReadNames() + ")$")
	for _, n := range []int{2, 5, 12} {
		parts := NameParts(n, true)
		if len(parts) != n {
			t.Fatalf("%d parts asked, %d made", n, len(parts))
		}
		res := make([]*regexp.Regexp, n)
		for i, p := range parts {
			res[i] = regexp.MustCompile("^(?:" + p + ")$")
		}
		load := make([]int, n)
		weighed := map[string]bool{}
		for _, r := range catalogue.Reads {
			for _, name := range r.SampleNames() {
				spellings := []string{name}
				if rest, ok := strings.CutPrefix(name, catalogue.VLLMPrefix); ok {
					spellings = nil
					for _, p := range catalogue.Prefixes {
						spellings = append(spellings, p+rest)
					}
				}
				for _, sp := range spellings {
					var in []int
					for i, re := range res {
						if re.MatchString(sp) {
							in = append(in, i)
						}
					}
					if len(in) != 1 || !all.MatchString(sp) {
						t.Errorf("%d parts: %s is in parts %v (read: %v), want exactly one", n, sp, in, all.MatchString(sp))
						continue
					}
					// a vLLM name without its prefix is another engine's name
					if key := strings.TrimPrefix(name, catalogue.VLLMPrefix); sp == name && !weighed[key] {
						weighed[key] = true
						load[in[0]] += map[bool]int{true: 20, false: 1}[strings.HasSuffix(name, "_bucket")]
					}
				}
			}
		}
		for i, re := range res {
			if re.MatchString("vllm:not_a_family_bucket") || re.MatchString("up") {
				t.Errorf("%d parts: part %d matches a name vtop does not read", n, i)
			}
		}
		if lo, hi := slices.Min(load), slices.Max(load); hi > lo+20 {
			t.Errorf("%d parts: loads %v, want them within one histogram of each other", n, load)
		}
	}
}

// TestDCGMQuery: the DCGM query reads the DCGM names under both
// spellings, narrowed by the matchers given.
func TestDCGMQuery(t *testing.T) {
	q := DCGMQuery(`exported_namespace="llm"`)
	for _, want := range []string{"DCGM_FI_DEV_GPU_TEMP|", "DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_XID_ERROR|", `, exported_namespace="llm"}`} {
		if !strings.Contains(q, want) {
			t.Errorf("query %s lacks %s", q, want)
		}
	}
	if !strings.HasPrefix(q, `{__name__=~"`) {
		t.Errorf("query %s", q)
	}
}
