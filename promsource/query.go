package promsource

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// vllmOwn is vLLM's own prefix, the one the alias table spells.
const vllmOwn = "vllm:"

// prefixGroup matches every spelling of the vLLM prefix, none included.
func prefixGroup() string {
	var alts []string
	for _, p := range catalogue.Prefixes {
		if p != "" {
			alts = append(alts, regexp.QuoteMeta(p))
		}
	}
	return "(?:" + strings.Join(alts, "|") + ")?"
}

// sampleNames returns the sample names of the alias table's families
// (histograms as their _bucket, _sum and _count series), the vLLM ones
// without their prefix and the others (process, API server) as they are.
func sampleNames() (vllm, other []string) {
	for _, r := range catalogue.Reads {
		names := []string{r.Name}
		if r.Kind == catalogue.ReadHistogram {
			names = []string{r.Name + "_bucket", r.Name + "_sum", r.Name + "_count"}
		}
		for _, n := range names {
			if rest, ok := strings.CutPrefix(n, vllmOwn); ok {
				vllm = append(vllm, regexp.QuoteMeta(rest))
			} else {
				other = append(other, regexp.QuoteMeta(n))
			}
		}
	}
	return vllm, other
}

// vllmNameRegex matches the names of the vLLM series vtop reads, under
// every prefix: the series that make a replica.
func vllmNameRegex() string {
	vllm, _ := sampleNames()
	return prefixGroup() + "(?:" + strings.Join(vllm, "|") + ")"
}

// readNameRegex matches every series vtop reads: the vLLM ones and the
// process and API-server families that come with them.
func readNameRegex() string {
	_, other := sampleNames()
	return vllmNameRegex() + "|" + strings.Join(other, "|")
}

// anyVLLMRegex matches anything that looks like vLLM's, for telling the
// user where vLLM series are when the selector finds none.
func anyVLLMRegex() string {
	return "(?:vllm:|kserve_vllm:|ray_vllm_).+|" + vllmNameRegex()
}

// errSelector is a selector vtop cannot use.
var errSelector = errors.New(`selector must be label matchers in braces, e.g. {namespace="prod",job="vllm"}`)

// parseSelector returns the label matchers inside a selector's braces,
// "" for none. Prometheus checks the matchers themselves: a bad one comes
// back as its error.
func parseSelector(sel string) (string, error) {
	sel = strings.TrimSpace(sel)
	if sel == "" {
		return "", nil
	}
	inner, ok := strings.CutPrefix(sel, "{")
	if !ok {
		return "", errSelector
	}
	inner, ok = strings.CutSuffix(inner, "}")
	if !ok {
		return "", errSelector
	}
	return strings.Trim(strings.TrimSpace(inner), ","), nil
}

// queries are the PromQL expressions of one source, built once.
type queries struct {
	matchers string // the selector's matchers, "" for none
}

// selector is {__name__=~re, matchers}.
func (q queries) selector(re string) string { return q.selectorWith(re, "") }

// selectorWith is {__name__=~re, matchers, extra}.
func (q queries) selectorWith(re, extra string) string {
	s := "{__name__=~" + strconv.Quote(re)
	for _, m := range []string{q.matchers, extra} {
		if m != "" {
			s += "," + m
		}
	}
	return s + "}"
}

// rangeSel is the Prometheus duration of a range selector, in
// milliseconds so that any window is exact.
func rangeSel(w time.Duration) string {
	return "[" + strconv.FormatInt(w.Milliseconds(), 10) + "ms]"
}

// raw is every series vtop reads over the window: its raw samples.
func (q queries) raw(w time.Duration) string {
	return q.selector(readNameRegex()) + rangeSel(w)
}

// count is how many series raw would return (those with a sample in the
// lookback period, a bound of the window's).
func (q queries) count() string {
	return "count(" + q.selector(readNameRegex()) + ")"
}

// up is Prometheus's own record of each scrape over the window.
func (q queries) up(w time.Duration) string {
	if q.matchers == "" {
		return "up" + rangeSel(w)
	}
	return "up{" + q.matchers + "}" + rangeSel(w)
}

// jobs lists the jobs that have vLLM-looking series, selector or not.
func jobs() string {
	return fmt.Sprintf("count by (job) ({__name__=~%s})", strconv.Quote(anyVLLMRegex()))
}
