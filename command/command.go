// Package command holds the bodies of vtop's commands and their text
// output: Watch (the live dashboard, --once and --jsonl), Analyze (two saved
// pages) and Sim (a simulated fleet for other tools). The command line
// itself is declared in package main, which lets the parser call each
// command's Run with a context and an Env.
//
// A command ends with an error that says how the process exits: nil (0), a
// *StatusError for a report that is not all healthy (1, 2, or 3 when
// nothing current could be judged), a usage error (64), a data error or a
// *record.Error (65, or 64 for a file that is not a recording), anything
// else (70); ExitCode maps it.
package command

import (
	"errors"
	"fmt"
	"io"

	"github.com/vtop-dev/vtop/record"
)

// Env is what every command's Run receives besides its own flags: the
// dashboard's terminal (Stdin, Stdout, which also receives the reports),
// Stderr for what is for the person beside the output (never the report),
// the version the header shows, and the arguments a recording keeps.
type Env struct {
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Version string
	Args    []string
}

// Exit codes, documented in the README and in Description.
const (
	ExitHealthy  = 0 // every replica healthy or idle
	ExitDegraded = 1 // a replica is slow, full, preempting, stale or asleep, or could not be judged
	ExitDown     = 2 // a replica is down
	// ExitNoData: nothing current to judge. The source that reads the
	// fleet failed (Prometheus unreachable, a selector that matches
	// nothing; the verdicts shown are from before the failure), or no
	// inference server was found to watch.
	ExitNoData  = 3
	ExitUsage   = 64 // bad flags or arguments (EX_USAGE)
	ExitData    = 65 // input that is not what it claims to be: pages, recordings (EX_DATAERR)
	ExitFailure = 70 // vtop itself failed (EX_SOFTWARE)
)

// StatusError ends a one-shot command whose report, already printed, shows
// a degraded or down replica: the process exits with Code, saying nothing
// more.
type StatusError struct{ Code int }

// Error names the exit code; main does not print it.
func (e *StatusError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// exitError ends a command with its code and says why: ExitUsage for a
// mistake in the flags or arguments the parser could not see (usagef),
// ExitData for input that is not what the command line says it is
// (dataf), ExitNoData when nothing was found to judge (what was looked
// for, and the ways out).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &exitError{ExitUsage, fmt.Sprintf(format, args...)}
}

func dataf(format string, args ...any) error {
	return &exitError{ExitData, fmt.Sprintf(format, args...)}
}

func noData(msg string) error { return &exitError{ExitNoData, msg} }

// ExitCode is the process exit code of what a command's Run returned.
func ExitCode(err error) int {
	var status *StatusError
	var exit *exitError
	var recording *record.Error
	switch {
	case err == nil:
		return ExitHealthy
	case errors.As(err, &status):
		return status.Code
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &recording): // its code: ExitUsage or ExitData
		return recording.Code
	default:
		return ExitFailure
	}
}

// Description is the overview `vtop --help` opens with.
const Description = `vtop: top for LLM inference servers.

vtop scrapes the Prometheus /metrics page of vLLM replicas and shows, for each,
whether it is HEALTHY, FULL (the queue grows at the batch cap: add replicas),
SLOW (latency over the SLO while not full), PREEMPTING (the KV cache is too
small for the batch: cap max_num_seqs), STALE (answers but nothing moves), IDLE
or DOWN, with the numbers that prove it and the first action to take.

Examples:
  vtop                              every inference server of this host (found
                                    by its process and port), with its GPUs
                                    (nvidia-smi, a dcgm-exporter on :9400)
  vtop --scan                       the same, probing every listening port
  vtop gpu-a:8000 gpu-b:8000        watch a fleet
  vtop -f targets.txt               targets from a file, one per line
  vtop --demo                       a simulated fleet, no GPU needed
  vtop gpu-a:8000 --dcgm gpu-a:9400   a replica and the GPUs of its host
  vtop --prometheus http://prom:9090 --selector '{job="vllm"}'
                                    the fleet as the fleet's Prometheus has it
  vtop --prometheus http://prom:9090 --from 03:00 --to 03:30
                                    its past, on the replay's screen (--at -8h:
                                    one time; record --prometheus … -o FILE)
  vtop --once --json gpu-a:8000     one report over one window, then exit
  vtop --jsonl --duration 1m gpu-a:8000   one JSON report per interval
  vtop analyze before.txt after.txt   two saved pages, dated by their files
  vtop --record incident.vtrec gpu-a:8000   watch, and keep every scrape
  vtop replay incident.vtrec        the dashboard over a recording
  vtop diff before.vtrec after.vtrec        two recordings compared

Exit codes of --once and analyze: 0 every replica healthy or idle; 1 a replica
is slow, full, preempting, stale or asleep, or could not be judged (warming up, or unjudged); 2 a replica is down;
3 the source failed (Prometheus unreachable, a selector that matches nothing:
the verdicts shown are from before) or no inference server was found; 64 usage error (a bad
flag, or no terminal for the dashboard); 65 analyze's two pages are not two
readings of one server in order (swapped, a restart between them, two
servers); 70 vtop itself failed (a report that cannot be written, a page that
does not parse).

Other commands: vtop analyze --help, vtop sim --help, vtop record --help,
vtop replay --help, vtop export --help, vtop diff --help.`
