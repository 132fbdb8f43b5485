package promsource

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
)

// DefaultBucketsAbove is the number of scrape targets above which the
// store evaluates the histograms' buckets (Config.BucketsAbove).
const DefaultBucketsAbove = 64

// summarised are the histograms whose buckets the store may evaluate when
// the fleet is large: those the analysis reads quantiles or shares of
// (Config.Histograms chooses among them: vtop asks for those the states
// read). The others (prompt and output lengths, NIXL bytes) are read for
// their means, from _sum and _count, which stay raw.
var summarised = []catalogue.Histogram{
	catalogue.TTFT, catalogue.ITL, catalogue.E2E, catalogue.QueueTime, catalogue.PrefillTime,
	catalogue.DecodeTime, catalogue.PreemptionsPerRequest, catalogue.NIXLTransferTime,
}

// labelHistogram tags each row of the buckets' answer with its histogram
// (catalogue.Histogram's short name): the histograms are asked together.
const labelHistogram = "vtop_histogram"

// bucketSplit is how many queries the buckets are asked in, side by side,
// as the raw read is (rawSplit): Prometheus evaluates one query on one
// core, and the buckets' increase reads every bucket sample of the window.
const bucketSplit = 2

// promqlGroup is the grouping of the store-evaluated figures: by the
// labels grouper.key reads, so that each row lands on the scrape target
// its raw series are built under.
func (g grouper) promqlGroup(matchers string) promql.Group {
	by := []string{cmp.Or(g.by, labelPod)}
	for _, l := range []string{labelInstance, labelJob} {
		if !slices.Contains(by, l) {
			by = append(by, l)
		}
	}
	return promql.Group{By: strings.Join(by, ", "), Matchers: matchers}
}

// buckets are the queries of the store-evaluated buckets of histograms
// over the window, bucketSplit of them (or fewer, for fewer histograms):
// each answers, per scrape target, histogram and bound, the bucket's
// increase() over the window (promql's HistogramIncrease, the rules' own
// expressions), tagged with the histogram.
func (q queries) buckets(window time.Duration, histograms []catalogue.Histogram) []string {
	terms := make([][]string, bucketSplit)
	for i, h := range histograms {
		tagged := promql.Tag(q.group.HistogramIncrease(h, window), labelHistogram, h.String())
		terms[i%bucketSplit] = append(terms[i%bucketSplit], tagged)
	}
	out := make([]string, 0, bucketSplit)
	for _, t := range terms {
		if len(t) > 0 {
			out = append(out, strings.Join(t, "\nor\n"))
		}
	}
	return out
}

// readBuckets turns the rows of the buckets' answers into each scrape
// target's WindowBuckets (by grouper.key), evaluated at at over window.
// A row without a known histogram, a bound or a point is passed over.
func readBuckets(m matrix, g grouper, at time.Time, window time.Duration) map[string]*catalogue.WindowBuckets {
	out := map[string]*catalogue.WindowBuckets{}
	for _, ss := range m {
		name := ss.Metric.get(labelHistogram)
		i := slices.IndexFunc(summarised, func(h catalogue.Histogram) bool { return h.String() == name })
		le, err := strconv.ParseFloat(ss.Metric.get(labelLE), 64)
		if i < 0 || err != nil || len(ss.Values) != 1 {
			continue
		}
		h := summarised[i]
		key := g.key(ss.Metric)
		wb := out[key]
		if wb == nil {
			wb = &catalogue.WindowBuckets{At: at, Window: window}
			out[key] = wb
		}
		wb.Histograms[h] = append(wb.Histograms[h], catalogue.BucketIncrease{Upper: le, Increase: float64(ss.Values[0].Value)})
	}
	return out
}

// sumBuckets is the buckets of a replica of several scrape targets: each
// bound's increase summed over them, as the raw path sums their rates
// (see combine). Nil when none has any.
func sumBuckets(parts []*catalogue.WindowBuckets) *catalogue.WindowBuckets {
	var out *catalogue.WindowBuckets
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &catalogue.WindowBuckets{At: p.At, Window: p.Window}
		}
		for h := range p.Histograms {
			for _, b := range p.Histograms[h] {
				i := slices.IndexFunc(out.Histograms[h], func(o catalogue.BucketIncrease) bool { return o.Upper == b.Upper })
				if i < 0 {
					out.Histograms[h] = append(out.Histograms[h], b)
					continue
				}
				out.Histograms[h][i].Increase += b.Increase
			}
		}
	}
	return out
}

// upRead is the answer to the up query, read ahead of the others.
type upRead struct {
	up    matrix
	warns []string
	err   error
}

// countTargets reads up first when the number of scrape targets is not
// known yet (the first refresh), so that a large fleet's first read
// already leaves the buckets to the server: that whole-window read is
// the costliest of all. It is the query every refresh asks, asked ahead
// of the others, not one more. Nil when the number is known, or the
// buckets are never left to the server.
func (s *Source) countTargets(ctx context.Context, at time.Time, width time.Duration) *upRead {
	if s.targets >= 0 || s.cfg.BucketsAbove < 0 {
		return nil
	}
	// Unknown until a refresh succeeds, so this refresh reads the whole
	// window: the query has the whole read's time (queryTimeout).
	s.whole = true
	// The refresh's budget of answers begins here: the answer read ahead
	// is held while the others are read (fetch).
	s.answers = newBudget(s.cfg.answerBudget())
	var r upRead
	r.up, r.warns, r.err = s.stream(ctx, s.upQuery(width), at, resultMatrix, false)
	if r.err == nil {
		s.targets = len(r.up)
	}
	return &r
}

// setBucketless switches the raw read to or from leaving the buckets to
// the store; a switch reads the whole window again, of other series. They
// are left to the store when more scrape targets than BucketsAbove
// answered up at the newest good refresh (or at this one's up, read
// first: see countTargets); before any answer, not.
func (s *Source) setBucketless() {
	on := s.cfg.BucketsAbove >= 0 && s.targets > s.cfg.BucketsAbove
	if on == s.q.bucketless {
		return
	}
	s.q = newQueries(s.q.matchers, s.cfg.Interval, s.group, on)
	s.raw.reset()
}

// wantedBuckets is the raw read of the wanted replicas' buckets over the
// whole window, by their scrape targets' instances; "" when the raw read
// has every replica's buckets or none is wanted (or known yet).
func (s *Source) wantedBuckets(width time.Duration) string {
	if !s.q.bucketless {
		return ""
	}
	s.mu.Lock()
	wanted := s.wanted
	s.mu.Unlock()
	var instances []string
	for _, r := range s.replicas {
		if !slices.Contains(wanted, r.name) {
			continue
		}
		for t := range r.targets {
			if !slices.Contains(instances, t.instance) {
				instances = append(instances, t.instance)
			}
		}
	}
	if len(instances) == 0 {
		return ""
	}
	slices.Sort(instances)
	return promql.OverMs(s.q.selector(s.q.bucketNames, promql.MatchAny(labelInstance, instances...)), width)
}

// withWanted adds the wanted replicas' raw buckets to the window's
// series (and their added times: all new, so those replicas are built
// whole, on the bounds their buckets bring).
func withWanted(raw matrix, added []model.Time, wanted matrix) (matrix, []model.Time) {
	if len(wanted) == 0 {
		return raw, added
	}
	raw = slices.Concat(raw, wanted)
	if added != nil {
		for _, ss := range wanted {
			t := noneAdded
			if len(ss.Values) > 0 {
				t = ss.Values[0].Timestamp
			}
			added = append(added, t)
		}
	}
	return raw, added
}
