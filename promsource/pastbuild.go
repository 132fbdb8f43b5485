package promsource

import (
	"cmp"
	"context"
	"slices"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
)

// PastSample is one scrape of one target of the past, built from the
// stored samples as the live source builds its readings: what parsing
// the PastPage of the same scrape gives (TestPastPagesParseAsStored), at
// a fraction of the cost of writing and parsing the page.
type PastSample struct {
	// Target is the index of the target in Past.Targets.
	Target int
	// Sample is the scrape; a failed one (up was 0) has only Time and Err.
	Sample catalogue.Sample
}

// ReadSamples reads the stretch as Read does, but hands visit the
// scrapes built into samples rather than written as pages: the way to
// reports when no recording is kept.
func (p *Past) ReadSamples(ctx context.Context, visit func(samples []PastSample) error) error {
	return p.read(ctx, func(raw, up matrix, after, through model.Time) error {
		return visit(p.samples(raw, up, after, through))
	})
}

// samples builds the scrapes in (after, through], one per target and
// timestamp, and a failed one where up was 0, sorted by time then target.
func (p *Past) samples(raw, up matrix, after, through model.Time) []PastSample {
	in := make(matrix, 0, len(raw))
	for _, ss := range raw {
		if i, ok := p.index[targetOf(ss.Metric)]; !ok || i < 0 {
			continue
		}
		lo, _ := slices.BinarySearchFunc(ss.Values, after+1, byTime)
		hi, found := slices.BinarySearchFunc(ss.Values, through, byTime)
		if found {
			hi++
		}
		if lo < hi {
			in = append(in, &sampleStream{Metric: ss.Metric, Values: ss.Values[lo:hi]})
		}
	}
	b := newFleetBuild(p.src.group)
	b.fold(in, b.survey(in), nil)
	var out []PastSample
	for _, rb := range b.replicas {
		for t := range rb.targets { // one: the build's key holds the target
			i := p.index[t]
			for _, s := range rb.samples() {
				out = append(out, PastSample{Target: i, Sample: s})
			}
		}
	}
	for _, pg := range p.appendFailures(nil, up, after, through) {
		out = append(out, PastSample{Target: pg.Target, Sample: catalogue.Sample{Time: pg.Time, Err: pg.Err}})
	}
	slices.SortStableFunc(out, func(a, b PastSample) int {
		return cmp.Or(a.Sample.Time.Compare(b.Sample.Time), cmp.Compare(a.Target, b.Target))
	})
	return out
}
