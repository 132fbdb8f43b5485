package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
)

// JSON writes the result as one indented JSON object.
func (r Result) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// row is one line of the side-by-side table.
type row struct {
	name   string
	b, c   analysis.Num
	format func(analysis.Num) string
}

// Text writes the comparison as a person reads it: the loads, the
// warnings, the figures side by side with deltas, the verdict.
func (r Result) Text(w io.Writer) error {
	b, c := r.Baseline, r.Candidate
	fmt.Fprintf(w, "baseline  %s: %d replicas, %s – %s\n", b.Name, b.Replicas, b.From.Format(human.Clock), b.To.Format(human.Clock))
	fmt.Fprintf(w, "candidate %s: %d replicas, %s – %s\n\n", c.Name, c.Replicas, c.From.Format(human.Clock), c.To.Format(human.Clock))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tbaseline\tcandidate\tdelta\t")
	for _, section := range [][]row{loadRows(b, c), latencyRows(b, c), throughputRows(b, c)} {
		for _, x := range section {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", x.name, x.format(x.b), x.format(x.c), delta(x.b, x.c))
		}
		fmt.Fprintln(tw, "\t\t\t\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range r.Unfair {
		fmt.Fprintf(w, "warning: %s\n", u)
	}
	for _, side := range []Side{b, c} {
		for _, u := range side.Warnings {
			fmt.Fprintf(w, "warning: %s: %s\n", side.Name, u)
		}
	}
	_, err := fmt.Fprintln(w, r.Verdict)
	return err
}

func loadRows(b, c Side) []row {
	return []row{
		{"arrivals/s", b.Load.ArrivalsPerSecond, c.Load.ArrivalsPerSecond, analysis.Num.Amount},
		{"concurrency", b.Load.Concurrency, c.Load.Concurrency, analysis.Num.Amount},
		{"prompt tokens mean", b.Load.MeanPromptTokens, c.Load.MeanPromptTokens, analysis.Num.Count},
		{"prompt tokens p50", b.Load.PromptTokensP50, c.Load.PromptTokensP50, analysis.Num.Count},
		{"prompt tokens p90", b.Load.PromptTokensP90, c.Load.PromptTokensP90, analysis.Num.Count},
		{"output tokens mean", b.Load.MeanGenerationTokens, c.Load.MeanGenerationTokens, analysis.Num.Count},
		{"output tokens p50", b.Load.GenerationTokensP50, c.Load.GenerationTokensP50, analysis.Num.Count},
		{"output tokens p90", b.Load.GenerationTokensP90, c.Load.GenerationTokensP90, analysis.Num.Count},
	}
}

func latencyRows(b, c Side) []row {
	s := analysis.Num.Seconds
	return []row{
		{"TTFT p50", b.TTFT.P50, c.TTFT.P50, s}, {"TTFT p90", b.TTFT.P90, c.TTFT.P90, s}, {"TTFT p99", b.TTFT.P99, c.TTFT.P99, s},
		{"ITL p50", b.ITL.P50, c.ITL.P50, s}, {"ITL p90", b.ITL.P90, c.ITL.P90, s}, {"ITL p99", b.ITL.P99, c.ITL.P99, s},
		{"e2e p50", b.E2E.P50, c.E2E.P50, s}, {"e2e p90", b.E2E.P90, c.E2E.P90, s}, {"e2e p99", b.E2E.P99, c.E2E.P99, s},
	}
}

func throughputRows(b, c Side) []row {
	a, p := analysis.Num.Amount, analysis.Num.Percent
	return []row{
		{"requests/s", b.RequestsPerSecond, c.RequestsPerSecond, a},
		{"prompt tok/s", b.PromptTokensPerSecond, c.PromptTokensPerSecond, analysis.Num.Count},
		{"generation tok/s", b.GenerationTokensPerSecond, c.GenerationTokensPerSecond, analysis.Num.Count},
		{"goodput (within SLOs)", b.Goodput, c.Goodput, p},
		{"finished: stop", b.Finished.Stop, c.Finished.Stop, p},
		{"finished: length", b.Finished.Length, c.Finished.Length, p},
		{"finished: abort", b.Finished.Abort, c.Finished.Abort, p},
		{"preemptions/s", b.PreemptionsPerSecond, c.PreemptionsPerSecond, a},
		{"KV cache usage (mean)", b.KVCacheUsage, c.KVCacheUsage, p},
	}
}

// delta writes the relative change, or n/a.
func delta(b, c analysis.Num) string {
	if d, ok := rel(b, c); ok {
		return pct(d)
	}
	return "n/a"
}
