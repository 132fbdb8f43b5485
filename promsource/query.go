package promsource

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
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

// sampleName is one sample name vtop reads, as a quoted regex.
type sampleName struct {
	re string
	// vllm is a vLLM name without its prefix, read under every spelling
	// of it; the others (process, API server, other engines) are as they are.
	vllm bool
	// bucket is a histogram's _bucket series: one series per bound, some
	// twenty times the series of any other name.
	bucket bool
}

// sampleNames returns the sample names of the alias table's families
// (histograms as their _bucket, _sum and _count series), in its order,
// each once: a name of another engine that a vLLM name already matches
// under the empty prefix (NIM's unprefixed names) is left out.
func sampleNames() []sampleName {
	var out []sampleName
	seen := map[sampleName]bool{}
	bare := slices.Contains(catalogue.Prefixes, "")
	for _, r := range catalogue.Reads {
		for _, n := range r.SampleNames() {
			rest, vllm := strings.CutPrefix(n, vllmOwn)
			sn := sampleName{re: regexp.QuoteMeta(rest), vllm: vllm, bucket: strings.HasSuffix(n, "_bucket")}
			if seen[sn] || (!vllm && bare && seen[sampleName{re: sn.re, vllm: true, bucket: sn.bucket}]) {
				continue
			}
			seen[sn] = true
			out = append(out, sn)
		}
	}
	return out
}

// nameRegex matches the names given, the vLLM ones under every prefix.
func nameRegex(names []sampleName) string {
	var vllm, alts []string
	for _, n := range names {
		if n.vllm {
			vllm = append(vllm, n.re)
		} else {
			alts = append(alts, n.re)
		}
	}
	if len(vllm) > 0 {
		alts = slices.Insert(alts, 0, prefixGroup()+"(?:"+strings.Join(vllm, "|")+")")
	}
	return strings.Join(alts, "|")
}

// vllmNameRegex matches the names of the vLLM series vtop reads, under
// every prefix: the series that make a replica.
func vllmNameRegex() string {
	var vllm []sampleName
	for _, n := range sampleNames() {
		if n.vllm {
			vllm = append(vllm, n)
		}
	}
	return nameRegex(vllm)
}

// readNameRegex matches every series vtop reads: the vLLM ones and the
// process and API-server families that come with them.
func readNameRegex() string { return nameRegex(sampleNames()) }

// partRegexes splits the names of readNameRegex (without the _bucket
// names unless buckets) into n parts of about as
// many series each, for the recheck (see rawWindow): every name is in
// exactly one part. A _bucket name weighs as the twenty-odd series of a
// histogram's bounds, and the heaviest names go first, each to the
// lightest part, so that no part holds most of a fleet's series.
func partRegexes(n int, buckets bool) []string {
	names := sampleNames()
	if !buckets {
		names = slices.DeleteFunc(names, func(s sampleName) bool { return s.bucket })
	}
	weight := func(s sampleName) int {
		if s.bucket {
			return 20
		}
		return 1
	}
	slices.SortStableFunc(names, func(a, b sampleName) int { return cmp.Compare(weight(b), weight(a)) })
	parts := make([][]sampleName, n)
	load := make([]int, n)
	for _, s := range names {
		i := slices.Index(load, slices.Min(load))
		parts[i] = append(parts[i], s)
		load[i] += weight(s)
	}
	out := make([]string, 0, n)
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, nameRegex(p))
		}
	}
	return out
}

// anyVLLMRegex matches anything that looks like vLLM's, for telling the
// user where vLLM series are when the selector finds none.
func anyVLLMRegex() string {
	return strings.TrimSuffix(prefixGroup(), "?") + ".+|" + vllmNameRegex()
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

// rawSplit is how many queries the raw read is asked in, side by side:
// Prometheus evaluates and encodes one query on one core, and the raw
// read is most of a refresh's time, so two halves answer in about half
// the time where the server has a core to spare, at the same total cost.
const rawSplit = 2

// queries are the PromQL expressions of one source, built once.
type queries struct {
	matchers string   // the selector's matchers, "" for none
	halves   []string // partRegexes(rawSplit): the names of the raw read
	parts    []string // partRegexes: the names of the raw read, in the recheck's parts
	// group writes the store-evaluated buckets (bucketless), by the
	// labels that name a replica's scrape target.
	group promql.Group
	// bucketless is set when the raw read leaves out every _bucket
	// series: the store evaluates the buckets (see summary.go).
	bucketless bool
	// bucketNames matches every _bucket name: the raw buckets of the
	// replicas wanted (Source.SetWanted) when the others' are left out.
	bucketNames string
}

// newQueries builds the queries of a source with the selector's matchers
// whose refreshes are interval apart, its replicas named by g; bucketless
// leaves the buckets out of the raw read.
func newQueries(matchers string, interval time.Duration, g grouper, bucketless bool) queries {
	return queries{matchers: matchers, halves: partRegexes(rawSplit, !bucketless),
		parts: partRegexes(recheckParts(interval), !bucketless), group: g.promqlGroup(matchers), bucketless: bucketless,
		bucketNames: nameRegex(slices.DeleteFunc(sampleNames(), func(s sampleName) bool { return !s.bucket }))}
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

// raw is the raw samples over w of the series in half i of the names
// vtop reads: the raw read is all halves.
func (q queries) raw(i int, w time.Duration) string {
	return q.selector(q.halves[i]) + rangeSel(w)
}

// rawPart is the raw samples over the window of the series whose names
// are in part i of the recheck.
func (q queries) rawPart(i int, w time.Duration) string {
	return q.selector(q.parts[i]) + rangeSel(w)
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

// scrapedJobs lists the jobs the server scrapes, whatever their series.
func scrapedJobs() string { return "count by (job) (up)" }
