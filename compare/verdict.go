package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/vtop-dev/vtop/analysis"
)

// Thresholds of the verdict: smaller changes are noise between two runs.
const (
	throughputMoves = 0.02 // tokens/s, requests/s
	latencyMoves    = 0.10 // p99s
	successMoves    = 0.01 // success rate, absolute
	preemptionsRise = 0.01 // preemptions/s
)

// loadGap is one figure of the load that differs beyond UnfairShare, with
// its two names (the sentence that refuses a verdict, the list of
// differences) and how its values are written.
type loadGap struct {
	long, short, unit, verb string
	d, b, c                 float64
}

// loadGaps are the figures of the load that differ beyond UnfairShare:
// the arrival rate and the mean prompt length.
func loadGaps(b, c Load) []loadGap {
	var out []loadGap
	if d, ok := rel(b.ArrivalsPerSecond, c.ArrivalsPerSecond); ok && math.Abs(d) > UnfairShare {
		out = append(out, loadGap{"arrival rate", "arrivals", "req/s", "%.3g", d, float64(b.ArrivalsPerSecond), float64(c.ArrivalsPerSecond)})
	}
	if d, ok := rel(b.MeanPromptTokens, c.MeanPromptTokens); ok && math.Abs(d) > UnfairShare {
		out = append(out, loadGap{"mean prompt length", "mean prompt", "tokens", "%.0f", d, float64(b.MeanPromptTokens), float64(c.MeanPromptTokens)})
	}
	return out
}

// unfair says why two loads are too far apart to compare.
func unfair(b, c Load) []string {
	var out []string
	for _, g := range loadGaps(b, c) {
		out = append(out, fmt.Sprintf("%s differs by %s ("+g.verb+" vs "+g.verb+" %s): the comparison is not fair", g.long, pct(g.d), g.b, g.c, g.unit))
	}
	return out
}

// loadDifferences says how the candidate's load differs from the
// baseline's beyond UnfairShare, each with both figures: "arrivals ×3.29
// (9.1 → 29.9 req/s)"; nil when the loads match or cannot be compared.
func loadDifferences(b, c Load) []string {
	var out []string
	for _, g := range loadGaps(b, c) {
		out = append(out, fmt.Sprintf("%s %s ("+g.verb+" → "+g.verb+" %s)", g.short, pct(g.d), g.b, g.c, g.unit))
	}
	return out
}

// rel is the relative change from a to b.
func rel(a, b analysis.Num) (float64, bool) {
	if !a.Known() || !b.Known() || a == 0 {
		return 0, false
	}
	return float64((b - a) / a), true
}

// pct writes a relative change as "+35 %", or as a factor from ×2 up.
func pct(d float64) string {
	if d >= 1 {
		return fmt.Sprintf("×%.3g", 1+d)
	}
	return fmt.Sprintf("%+.0f %%", d*100)
}

// verdict names the trade-off in one line: what the candidate gains, what
// it costs, and whether it is better under this load; or, when the loads
// differ, that the two are not comparable.
func verdict(b, c Side) string {
	var gains, losses []string
	note := func(what string, bv, cv analysis.Num, higherBetter bool, moves float64) {
		d, ok := rel(bv, cv)
		switch {
		case !ok || math.Abs(d) < moves:
		case (d > 0) == higherBetter:
			gains = append(gains, pct(d)+" "+what)
		default:
			losses = append(losses, what+" "+pct(d))
		}
	}
	note("generation tok/s", b.GenerationTokensPerSecond, c.GenerationTokensPerSecond, true, throughputMoves)
	note("requests/s", b.RequestsPerSecond, c.RequestsPerSecond, true, throughputMoves)
	note("p99 TTFT", b.TTFT.P99, c.TTFT.P99, false, latencyMoves)
	note("p99 ITL", b.ITL.P99, c.ITL.P99, false, latencyMoves)
	note("p99 e2e", b.E2E.P99, c.E2E.P99, false, latencyMoves)
	losses = append(losses, qualityLosses(b, c)...)
	gains = append(gains, qualityGains(b, c)...)
	return sentence(gains, losses, loadDifferences(b.Load, c.Load))
}

// qualityLosses are preemptions that appear or grow, and a lower success
// rate or goodput.
func qualityLosses(b, c Side) []string {
	var out []string
	if c.PreemptionsPerSecond.Known() && float64(c.PreemptionsPerSecond-zeroNA(b.PreemptionsPerSecond)) > preemptionsRise {
		out = append(out, fmt.Sprintf("%.2g preemptions/s", float64(c.PreemptionsPerSecond)))
	}
	if c.Finished.Stop.Known() && b.Finished.Stop.Known() && float64(b.Finished.Stop-c.Finished.Stop) > successMoves {
		out = append(out, fmt.Sprintf("success rate %.0f %% (was %.0f %%)", c.Finished.Stop*100, b.Finished.Stop*100))
	}
	if c.Goodput.Known() && b.Goodput.Known() && float64(b.Goodput-c.Goodput) > successMoves {
		out = append(out, fmt.Sprintf("goodput %.0f %% (was %.0f %%)", c.Goodput*100, b.Goodput*100))
	}
	return out
}

// qualityGains are preemptions that go away and a better goodput.
func qualityGains(b, c Side) []string {
	var out []string
	if b.PreemptionsPerSecond.Known() && float64(b.PreemptionsPerSecond-zeroNA(c.PreemptionsPerSecond)) > preemptionsRise {
		out = append(out, fmt.Sprintf("no more %.2g preemptions/s", float64(b.PreemptionsPerSecond-zeroNA(c.PreemptionsPerSecond))))
	}
	if c.Goodput.Known() && b.Goodput.Known() && float64(c.Goodput-b.Goodput) > successMoves {
		out = append(out, fmt.Sprintf("goodput %.0f %% (was %.0f %%)", c.Goodput*100, b.Goodput*100))
	}
	return out
}

func zeroNA(n analysis.Num) analysis.Num {
	if !n.Known() {
		return 0
	}
	return n
}

// sentence joins gains and losses into the verdict line. When the loads
// differ (loadDiffers says how), latency and throughput moved with the
// load as much as with the candidate: a candidate offered three times the
// requests has a higher p99 e2e without being worse for it. The line then
// says the loads differ and judges neither way.
func sentence(gains, losses, loadDiffers []string) string {
	var b strings.Builder
	b.WriteString("candidate: ")
	switch {
	case len(loadDiffers) > 0:
		b.WriteString("not comparable: its load differs, " + and(loadDiffers) +
			"; latency and throughput move with the load, so no verdict: compare recordings of the same load")
	case len(gains) > 0 && len(losses) > 0:
		b.WriteString(strings.Join(gains, ", ") + " but " + and(losses) + ": not better under this load")
	case len(losses) > 0:
		b.WriteString(and(losses) + ": worse under this load")
	case len(gains) > 0:
		b.WriteString(strings.Join(gains, ", ") + ": better under this load")
	default:
		b.WriteString("no difference beyond noise under this load")
	}
	return b.String()
}

// and joins "a", "b and c".
func and(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
