package promsource

import (
	"errors"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/promql"
)

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
	halves   []string // promql.NameParts(rawSplit): the names of the raw read
	parts    []string // promql.NameParts: the names of the raw read, in the recheck's parts
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
	return queries{matchers: matchers, halves: promql.NameParts(rawSplit, !bucketless),
		parts: promql.NameParts(recheckParts(interval), !bucketless), group: g.promqlGroup(matchers), bucketless: bucketless,
		bucketNames: promql.BucketNames()}
}

// selector is {__name__=~re, matchers, extra...}.
func (q queries) selector(re string, extra ...string) string {
	return promql.Selector("", append([]string{promql.NameMatches(re), q.matchers}, extra...)...)
}

// raw is the raw samples over w of the series whose names match names:
// a half of those vtop reads (the raw read is all halves), or a part of
// the recheck.
func (q queries) raw(names string, w time.Duration) string {
	return promql.OverMs(q.selector(names), w)
}

// up is Prometheus's own record of each scrape over the window.
func (q queries) up(w time.Duration) string {
	return promql.OverMs(promql.Selector("up", q.matchers), w)
}
