// Package recordcli holds the command bodies of vtop record, vtop replay,
// vtop export and vtop diff, and the flags of --record: kong-tagged
// structs with a Run-ready method each, for the command line to embed.
// Exit codes: 0 done, 1 a replayed report is degraded (--once), 2 one is
// down, 64 usage (record.ExitUsage), 65 a recording that cannot be used
// (record.ExitData), 70 vtop failed.
package recordcli

import "time"

// RecordFlags are the flags of `vtop record` and, with the Record prefix,
// of `vtop --record FILE` (RecordFlags.Output is the FILE).
type RecordFlags struct {
	Output   string        `short:"o" required:"" placeholder:"FILE" help:"Write the recording to FILE (must not exist: a recording is never overwritten)."`
	Duration time.Duration `help:"Stop recording after this long (default: until interrupted)."`
	MaxSize  string        `default:"1GiB" placeholder:"SIZE" help:"Stop recording before the file grows past SIZE."`
	All      bool          `name:"record-all" help:"Keep whole pages, not only the vLLM families vtop reads."`
}

// ReplayFlags are the flags of `vtop replay FILE`.
type ReplayFlags struct {
	File  string `arg:"" type:"existingfile" help:"The recording."`
	JSONL bool   `name:"jsonl" help:"No screen: print every report, in order, as fast as possible, one JSON line each."`
	Once  bool   `help:"Print the last report only (with --json as JSON), exit code by state."`
	JSON  bool   `help:"With --once: print the report as one JSON object."`
	Speed int    `default:"1" enum:"1,10,60" help:"Starting speed of the screen (1, 10 or 60)."`
}

// ExportFlags are the flags of `vtop export FILE`.
type ExportFlags struct {
	File   string    `arg:"" type:"existingfile" help:"The recording."`
	Output string    `short:"o" placeholder:"FILE" help:"Write OpenMetrics to FILE (default: standard output). Then: promtool tsdb create-blocks-from openmetrics FILE DIR."`
	Job    string    `default:"vllm" help:"The job label of every series."`
	From   time.Time `placeholder:"TIME" help:"Export frames from TIME (RFC 3339)."`
	To     time.Time `placeholder:"TIME" help:"Export frames up to TIME (RFC 3339)."`
}

// DiffFlags are the flags of `vtop diff BASELINE CANDIDATE`.
type DiffFlags struct {
	Baseline  string        `arg:"" type:"existingfile" help:"The recording of the baseline."`
	Candidate string        `arg:"" type:"existingfile" help:"The recording of the candidate."`
	JSON      bool          `help:"Print the comparison as JSON."`
	Skip      time.Duration `help:"Leave out this much of the start of each recording (warm-up)."`
	Length    time.Duration `help:"Compare this much of each recording after --skip (default: to the end)."`
	SLOTTFT   time.Duration `name:"slo-ttft" default:"1s" help:"TTFT within which a request counts as goodput."`
	SLOE2E    time.Duration `name:"slo-e2e" help:"e2e latency within which a request counts as goodput (default: TTFT only)."`
}
