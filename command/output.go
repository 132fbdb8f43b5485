package command

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// status is how a one-shot report ends the process: nil when every replica
// is healthy or idle, else a *StatusError with the code of the worst
// replica (down before degraded; warming up or asleep is not healthy to a
// script).
func status(r analysis.Report) error {
	if r.Source.Failing() {
		// The verdicts are from before the failure, if any: not current.
		return &StatusError{Code: ExitNoData}
	}
	var degraded error
	for _, rep := range r.Replicas {
		switch rep.State {
		case analysis.StateHealthy, analysis.StateIdle:
		case analysis.StateDown:
			return &StatusError{Code: ExitDown}
		default:
			degraded = &StatusError{Code: ExitDegraded}
		}
	}
	return degraded
}

// printReport prints a one-shot report, as JSON or as text, and returns
// its status, or the error that kept it from being written.
func printReport(w io.Writer, r analysis.Report, asJSON bool) error {
	var err error
	if asJSON {
		err = writeJSON(w, r, true)
	} else {
		err = writeText(w, r)
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return status(r)
}

// writeSource names a source that reads the whole fleet, and its problem
// once, with the age of the data: verdicts kept from before a failure
// must not pass for fresh ones.
func writeSource(w io.Writer, src *catalogue.SourceStatus) {
	if src == nil {
		return
	}
	switch store := src.StoreLabel(); {
	case !src.Failing() && store != "":
		fmt.Fprintf(w, "source %s, answered by %s\n", src.Name, store)
	case !src.Failing():
		fmt.Fprintf(w, "source %s\n", src.Name)
	default:
		age := "no data yet"
		if !src.LastGood.IsZero() {
			age = fmt.Sprintf("data %s old", analysis.Num(src.DataAgeSeconds).Seconds())
		}
		fmt.Fprintf(w, "! %s: %s; %s (failing since %s", src.Name, src.Problem, age, src.Since.Format(human.Clock))
		if !src.LastGood.IsZero() {
			fmt.Fprintf(w, ", verdicts as of %s", src.LastGood.Format(human.Clock))
		}
		fmt.Fprintln(w, ")")
	}
	for _, warning := range src.Warnings {
		fmt.Fprintf(w, "  ! %s\n", warning)
	}
}

// writeJSON writes the report as one JSON object (indented for --json, one
// line for --jsonl). The Encoder writes each object with one Write, so a
// --jsonl line is never split.
func writeJSON(w io.Writer, r analysis.Report, indent bool) error {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(r)
}

// jsonLines is --jsonl's output: each report one JSON line on out. A
// line that cannot be written stops the run with the error, so that a
// full disk or a closed reader never loses reports silently.
func jsonLines(out io.Writer) func(analysis.Report) error {
	return func(r analysis.Report) error {
		if err := writeJSON(out, r, false); err != nil {
			return fmt.Errorf("--jsonl: writing a report: %w", err)
		}
		return nil
	}
}

// writeText writes the report as the compact table a person reads in a
// terminal or pastes into a ticket (its strings were cleaned where they
// entered).
func writeText(out io.Writer, r analysis.Report) error {
	w := &stickyWriter{w: out}
	fmt.Fprintf(w, "vtop · window %s · %s\n", analysis.Num(r.WindowSeconds).Seconds(), r.Time.Format(human.DateClock))
	writeSource(w, r.Source)
	// The one line to act on comes first; the figures behind it follow.
	if rec := r.Fleet.Advice.Recommendation; rec != "" {
		fmt.Fprintf(w, "advice: %s\n", rec)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// REQ/S counts every finished request, aborts included: ABORT is
	// their share.
	fmt.Fprintln(tw, "TARGET\tENGINE\tSTATE\tRUN\tWAIT\tKV\tREQ/S\tGEN TOK/S\tTTFT p50/p99\tITL p50/p99\tPREEMPT/S\tSUCCESS\tABORT")
	for _, rep := range r.Replicas {
		f := rep.Figures
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s/%s\t%s\t%s\t%s\n",
			targetText(rep), engineText(rep), stateText(rep),
			f.Running.Count(), f.Waiting.Count(), f.KVCacheUsage.Percent(),
			f.RequestsPerSecond.Amount(), f.GenerationTokensPerSecond.Count(),
			bounded(f.TTFT.P50, f.TTFT.P50Bucket), bounded(f.TTFT.P99, f.TTFT.P99Bucket),
			bounded(f.ITL.P50, f.ITL.P50Bucket), bounded(f.ITL.P99, f.ITL.P99Bucket),
			f.PreemptionsPerSecond.Amount(), f.SuccessRate.Percent(), f.AbortShare.Percent())
	}
	_ = tw.Flush() // its error is w's, kept there
	for _, rep := range r.Replicas {
		writeReplicaNotes(w, rep)
	}
	writeFleet(w, r.Fleet)
	return w.err
}

// stickyWriter keeps the first write error and drops every write after
// it: a report of many small writes is checked once, at the end.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// writeReplicaNotes writes a replica's evidence, first action and Little's
// law figures.
func writeReplicaNotes(w io.Writer, rep analysis.ReplicaReport) {
	f := rep.Figures
	fmt.Fprintf(w, "\n%s  %s  engine %s", rep.Target, strings.ToUpper(rep.State.String()), engineText(rep))
	if rep.Model != "" {
		fmt.Fprintf(w, "  model %s", rep.Model)
	}
	if rep.Role != catalogue.RoleUnknown {
		fmt.Fprintf(w, "  role %s", rep.Role)
	}
	fmt.Fprintln(w)
	if rep.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", rep.Error)
	}
	if rep.WarmingUp {
		fmt.Fprintln(w, "  warming up: rates and quantiles need two scrapes in the window")
	} else {
		fmt.Fprintf(w, "  %s req/s%s, %s prompt tok/s, %s gen tok/s; time running %s (Little's law: running ÷ finish rate); mean TTFT %s\n",
			f.RequestsPerSecond.Amount(), abortedText(f), f.PromptTokensPerSecond.Count(), f.GenerationTokensPerSecond.Count(),
			f.TimeRunningSeconds.Seconds(), f.TTFT.Mean.Seconds())
	}
	for _, reason := range rep.Reasons {
		fmt.Fprintf(w, "  - %s\n", reason)
	}
	if rep.Action != "" {
		fmt.Fprintf(w, "  → %s\n", rep.Action)
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintf(w, "  ! %s\n", warning)
	}
	for _, figure := range slices.Sorted(maps.Keys(rep.Derived)) {
		fmt.Fprintf(w, "  derived %s: %s\n", figure, rep.Derived[figure])
	}
}

// abortedText says, after a replica's req/s, that it counts the aborts
// among the finished requests and what succeeded beside them: " finished
// (6.3 successful, 8.8 aborted)"; "" when none was aborted.
func abortedText(f analysis.Figures) string {
	if !(f.FinishedPerSecond.Abort > 0) {
		return ""
	}
	ok := f.FinishedPerSecond.Stop
	if f.FinishedPerSecond.Length.Known() {
		ok += f.FinishedPerSecond.Length
	}
	return fmt.Sprintf(" finished (%s successful, %s aborted)", ok.Amount(), f.FinishedPerSecond.Abort.Amount())
}

// engineText names a replica's engine, or the router and its backends;
// "n/a" before it has answered.
func engineText(rep analysis.ReplicaReport) string {
	switch {
	case rep.Router != catalogue.RouterNone:
		return fmt.Sprintf("%s router (%d backends)", rep.Router, len(rep.Backends))
	case rep.EngineKind == catalogue.EngineUnknown:
		return "n/a"
	}
	return rep.EngineKind.String()
}

// writeFleet writes the totals and the scaling advice of the fleet.
func writeFleet(w io.Writer, fl analysis.FleetFigures) {
	noun := "replicas"
	if fl.Replicas == 1 {
		noun = "replica"
	}
	fmt.Fprintf(w, "\nfleet: %d %s, %d up, %d down · %s req/s · %s gen tok/s · waiting %s · worst p99 TTFT %s",
		fl.Replicas, noun, fl.Up, fl.Down, fl.RequestsPerSecond.Amount(), fl.GenerationTokensPerSecond.Count(),
		fl.Waiting.Count(), fl.WorstTTFTP99.Seconds())
	if fl.Worst != "" {
		fmt.Fprintf(w, " · worst %s", fl.Worst)
	}
	fmt.Fprintln(w)
	for _, im := range fl.Imbalance {
		fmt.Fprintf(w, "  imbalance: %s\n", im.Text)
	}
	for _, line := range fl.Advice.Summary {
		if line != fl.Advice.Recommendation { // said at the top
			fmt.Fprintf(w, "  advice: %s\n", line)
		}
	}
}

// bounded writes a latency quantile as its bucket allows: ">80s" beyond
// the last finite bound, "<300ms" in the first bucket; a bucket without
// width (none was recorded) bounds nothing.
func bounded(v analysis.Num, b analysis.QuantileBucket) string {
	if !(b.Upper.Float() > b.Lower.Float()) {
		return v.Seconds()
	}
	return b.Seconds(v)
}

// targetText is the replica's target, with how many instances it sums
// (a group read through Prometheus).
func targetText(rep analysis.ReplicaReport) string {
	if rep.Instances > 1 {
		return fmt.Sprintf("%s ×%d", rep.Target, rep.Instances)
	}
	return rep.Target
}

// stateText is the replica's state, marked when a failing source left it.
func stateText(rep analysis.ReplicaReport) string {
	if rep.SourceStale {
		return strings.ToUpper(rep.State.String()) + " (stale)"
	}
	return strings.ToUpper(rep.State.String())
}
