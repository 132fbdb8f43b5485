package compare

import (
	"fmt"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
)

// fleetSamples reads the part [from, to] of a recording and sums its
// replicas into one sample per interval (sum), so the analysis of the
// sum is the fleet's.
// A counter reset in one replica inside the part reads as a reset of the
// sum, which overstates that part's rates: compare parts without restarts.
// A target with no good scrape in the part (it never answered) is left
// out of the sum and named in silent: the others' sum is the fleet that
// served.
func fleetSamples(rec *record.Recording, from, to time.Time) (out []catalogue.Sample, silent []string) {
	per := targetSamples(rec, from, to)
	var answered []record.Target
	var live [][]catalogue.Sample
	for ti, ss := range per {
		if len(ss) == 0 {
			silent = append(silent, rec.Targets()[ti].Name)
			continue
		}
		answered, live = append(answered, rec.Targets()[ti]), append(live, ss)
	}
	for at := from; !at.After(to); at = at.Add(rec.Header.Interval) {
		var parts []*catalogue.Sample
		for _, ss := range live {
			if s := newestAt(ss, at); s != nil {
				parts = append(parts, s)
			}
		}
		if len(parts) == len(live) && len(parts) > 0 {
			out = append(out, sum(at, parts, answered))
		}
	}
	return out, silent
}

// silentWarning says that a target was left out of the sum.
func silentWarning(target string) string {
	return target + ": no good scrape in the part compared; left out of the sum"
}

// targetSamples decodes the good samples of every target in [from, to].
func targetSamples(rec *record.Recording, from, to time.Time) [][]catalogue.Sample {
	cur := record.NewCursor(rec)
	defer cur.Close()
	per := make([][]catalogue.Sample, len(rec.Targets()))
	for ti := range rec.Targets() {
		for i, f := range rec.Frames(ti) {
			if f.Failed || f.Time.Before(from) || f.Time.After(to) {
				continue
			}
			if s := cur.Sample(ti, i); s.OK() {
				per[ti] = append(per[ti], s)
			}
		}
	}
	return per
}

// newestAt returns the newest sample at or before at.
func newestAt(ss []catalogue.Sample, at time.Time) *catalogue.Sample {
	i, _ := slices.BinarySearchFunc(ss, at, func(s catalogue.Sample, t time.Time) int {
		if s.Time.After(t) {
			return 1
		}
		return -1
	})
	if i == 0 {
		return nil
	}
	return &ss[i-1]
}

// sum adds the samples of the targets up into one stamped at, as every
// whole is summed (catalogue.Merge). A replica whose buckets of a
// histogram differ from the others' is left out of its sum, with a
// warning.
func sum(at time.Time, parts []*catalogue.Sample, targets []record.Target) catalogue.Sample {
	var m catalogue.Merge
	var warnings []string
	for i, p := range parts {
		refused := m.AddSample(p)
		for h := range catalogue.NumHistograms {
			if refused.Has(h) {
				warnings = append(warnings, fmt.Sprintf("%s: buckets of %s unlike the other replicas'; left out of their sum", targets[i].Name, catalogue.HistogramName(h)))
			}
		}
	}
	out := m.Sample()
	out.Time, out.HasVLLM, out.Warnings = at, true, warnings
	return out
}
