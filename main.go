// Command vtop is top for LLM inference servers: it scrapes the /metrics page
// of one or more vLLM replicas and shows, for each, whether it is healthy,
// full, slow, preempting, stale, idle or down, with the numbers that prove it
// and the first action to take.
//
// main wires flags to the packages and nothing more: scrape (targets, HTTP,
// parsing, ring buffers, the poller), analysis (pure: figures and states),
// ui (the Bubble Tea dashboard) and sim (the simulated fleet of --demo).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// cli is the whole command line. The watch command is the default: `vtop
// gpu-a:8000` watches, `vtop analyze …` and `vtop sim …` are sub-commands.
type cli struct {
	Watch   watchCmd         `cmd:"" default:"withargs" help:"Watch vLLM replicas live (the default command: vtop [flags] [target…])."`
	Analyze analyzeCmd       `cmd:"" help:"Report on two saved /metrics pages taken N seconds apart (curl …/metrics > before.txt)."`
	Sim     simCmd           `cmd:"" help:"Serve simulated vLLM replicas on loopback, one URL per line, until interrupted."`
	Version kong.VersionFlag `help:"Print the version and exit."`
}

const description = `vtop: top for LLM inference servers.

vtop scrapes the Prometheus /metrics page of vLLM replicas and shows, for each,
whether it is HEALTHY, FULL (the queue grows at the batch cap: add replicas),
SLOW (latency over the SLO while not full), PREEMPTING (the KV cache is too
small for the batch: cap max_num_seqs), STALE (answers but nothing moves), IDLE
or DOWN, with the numbers that prove it and the first action to take.

Examples:
  vtop                              watch http://localhost:8000/metrics
  vtop gpu-a:8000 gpu-b:8000        watch a fleet
  vtop -f targets.txt               targets from a file, one per line
  vtop --demo                       a simulated fleet, no GPU needed
  vtop --once --json gpu-a:8000     one report over one window, then exit
  vtop analyze before.txt after.txt --seconds 60

Exit codes of --once and analyze: 0 every replica healthy or idle; 1 a replica
is slow, full, preempting or stale; 2 a replica is down; 64 usage error.

Other commands: vtop analyze --help, vtop sim --help.`

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses the command line and runs the chosen command, returning the
// process exit code.
func run(args []string) int {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("vtop"),
		kong.Description(description),
		kong.UsageOnError(),
		kong.Vars{"version": "vtop " + version},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Exit(func(code int) { panic(exitRequest(code)) }),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vtop:", err)
		return exitFailure
	}
	code, done := parseArgs(parser, helpForWatch(args))
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.dispatch(ctx, code)
}

// helpForWatch sends `vtop --help` to the help of the default command, whose
// flags are what a person running vtop wants to read; the sub-commands have
// their own (`vtop analyze --help`).
func helpForWatch(args []string) []string {
	help := false
	for _, arg := range args {
		switch arg {
		case "analyze", "sim", "watch":
			return args
		case "-h", "--help":
			help = true
		}
	}
	if !help {
		return args
	}
	return append([]string{"watch"}, args...)
}

// exitRequest carries kong's exit (after --help or --version) out of Parse.
type exitRequest int

// parseArgs runs the parser; done is true when the process should exit with
// code without running a command (help, version, usage error).
func parseArgs(parser *kong.Kong, args []string) (code int, done bool) {
	defer func() {
		if r := recover(); r != nil {
			req, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			code, done = int(req), true
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		parser.Errorf("%s", err)
		return exitUsage, true
	}
	return commandIndex(kctx.Command()), false
}

// Commands, as chosen by the parser.
const (
	commandWatch = iota
	commandAnalyze
	commandSim
)

// commandIndex maps the parser's command path ("analyze <before> <after>",
// "sim", "watch <target>") to the command.
func commandIndex(path string) int {
	name, _, _ := strings.Cut(path, " ")
	switch name {
	case "analyze":
		return commandAnalyze
	case "sim":
		return commandSim
	default:
		return commandWatch
	}
}

func (c *cli) dispatch(ctx context.Context, command int) int {
	var err error
	code := exitHealthy
	switch command {
	case commandAnalyze:
		code, err = c.Analyze.run()
	case commandSim:
		err = c.Sim.run(ctx)
	default:
		code, err = c.Watch.run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vtop:", err)
		var usage *usageError
		if errors.As(err, &usage) {
			return exitUsage
		}
		return exitFailure
	}
	return code
}

// usageError is a mistake in the flags or arguments that the parser could
// not see (a bad target, conflicting flags).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }
