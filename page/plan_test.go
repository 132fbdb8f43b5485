package page

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

// A plan holds only while the page keeps its labels: pages read as values
// only, then a page whose labels changed, then values only again, each
// make the sample a fresh Ingester makes of the page, and the plan is
// followed on the pages after the first read as values only, unless the
// page warned of its labels.
func TestPlanFollowsLabels(t *testing.T) {
	eight := string(testutil.VLLMPage(t, 8))
	router := lines(
		`vllm:num_requests_running{model_name="a",server="http://10.0.0.1:8000"} 3`,
		`vllm:num_requests_running{model_name="b",server="http://10.0.0.2:8000"} 4`,
		`vllm:num_requests_waiting{model_name="a",server="http://10.0.0.1:8000"} 1`,
		`vllm:num_requests_waiting{model_name="b",server="http://10.0.0.2:8000"} 0`)
	unlabeled := lines(
		`vllm:num_requests_running{engine="0",model_name="m"} 3`,
		`vllm:num_requests_running{model_name="m"} 4`,
		`vllm:num_requests_waiting{engine="1",model_name="m"} 1`)
	const model = `model_name="meta-llama/Llama-3.1-8B-Instruct"`
	running := strings.Index(eight, "vllm:num_requests_running{")
	negative := nextValues(eight, onLine(strings.Count(eight[:running], "\n"), "-5"))
	tests := []struct {
		name     string
		pages    []string
		followed int // pages that follow a plan, at least
	}{
		{"an engine renamed", twice(eight, strings.ReplaceAll(eight, `engine="3"`, `engine="30"`)), 2},
		{"two engines swapped", twice(eight, swap(eight, `engine="1"`, `engine="2"`)), 2},
		{"the model renamed", twice(eight, strings.ReplaceAll(eight, model, `model_name="other"`)), 2},
		{"a finish reason vtop does not know", twice(eight, strings.Replace(eight, `finished_reason="abort"`, `finished_reason="newer"`, 1)), 2},
		{"a bucket bound moved", twice(eight, strings.Replace(eight, `le="0.3"}`, `le="0.35"}`, 1)), 2},
		{"buckets out of order", twice(eight, swap(eight, `le="0.3"}`, `le="0.5"}`)), 2},
		{"a series fewer", twice(eight, eight[:running]+eight[strings.Index(eight[running:], "\n")+running+1:]), 2},
		{"a router's backend renamed", twice(router, strings.ReplaceAll(router, "10.0.0.2", "10.0.0.3")), 2},
		{"a series without an engine", twice(unlabeled, strings.Replace(unlabeled, `{model_name="m"}`, `{engine="2",model_name="m"}`, 1)), 2},
		{"more engines than a page may carry", twice(eight, manyEngines()), 1},
		{"a value that warns", []string{eight, negative, eight, negative, nextValues(eight, moved), negative, nextValues(eight, movedMore)}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewIngester()
			in.memoMin = 0
			followed := 0
			for i, p := range tc.pages {
				planned := in.memo.plan != nil
				got, want := show(in, p, ""), show(NewIngester(), p, "")
				if got != want {
					t.Fatalf("page %d (plan followed %v):\n%s\nread by a fresh Ingester:\n%s", i, planned && in.replayed, got, want)
				}
				if planned && in.replayed {
					followed++
				}
			}
			if followed < tc.followed {
				t.Errorf("%d pages followed a plan; want %d at least", followed, tc.followed)
			}
		})
	}
}

// twice is three readings of a page, its values moving, then three of
// another.
func twice(first, second string) []string {
	var pages []string
	for _, p := range []string{first, second} {
		pages = append(pages, p, nextValues(p, moved), nextValues(p, movedMore))
	}
	return pages
}

// movedMore is a value a second after moved's, different on every line
// (so that a value folded into another line's place shows).
func movedMore(i int, old string) string {
	if strings.ContainsAny(old, "eIN") {
		return old // the exponent must not grow out of range
	}
	return moved(i, old) + strconv.Itoa(i%7)
}

// manyEngines is a page of more engines than a page may carry.
func manyEngines() string {
	var b strings.Builder
	for e := range MaxEngines + 2 {
		fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\",model_name=\"m\"} %d\n", e, e)
	}
	return b.String()
}

// swap exchanges two strings everywhere in s.
func swap(s, a, b string) string {
	const hold = "\x00"
	return strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, a, hold), b, a), hold, b)
}
