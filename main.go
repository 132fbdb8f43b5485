// Command vtop is top for LLM inference servers: it scrapes the /metrics page
// of one or more vLLM replicas and shows, for each, whether it is healthy,
// full, slow, preempting, stale, idle or down, with the numbers that prove it
// and the first action to take.
//
// main declares the command line and lets the parser run the chosen
// command; the command bodies live in package command.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/vtop-dev/vtop/command"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// cli is the whole command line. The watch command is the default: `vtop
// gpu-a:8000` watches, `vtop analyze …` and `vtop sim …` are sub-commands.
type cli struct {
	Watch   command.Watch    `cmd:"" default:"withargs" help:"Watch vLLM replicas live (the default command: vtop [flags] [target…])."`
	Analyze command.Analyze  `cmd:"" help:"Report on two saved /metrics pages taken N seconds apart (curl …/metrics > before.txt)."`
	Sim     command.Sim      `cmd:"" help:"Serve simulated inference servers (vLLM, SGLang, TensorRT-LLM, TGI, llama.cpp) on loopback, one URL per line, until interrupted."`
	Version kong.VersionFlag `help:"Print the version and exit."`

	// Recordings: keep the evidence, replay it, export it, compare two.
	Record command.Record `cmd:"" help:"Record every scrape of the targets to a file (-o FILE), without a screen, for replay, export and diff."`
	Replay command.Replay `cmd:"" help:"Replay a recording on the dashboard with time controls, or print its reports (--jsonl, --once)."`
	Export command.Export `cmd:"" help:"Write a recording as OpenMetrics, for promtool tsdb create-blocks-from openmetrics."`
	Diff   command.Diff   `cmd:"" help:"Compare two recordings (baseline, candidate): loads, latencies, throughput and a verdict."`

	// Alerting: the same judgement, evaluated by Prometheus.
	Rules command.Rules `cmd:"" help:"Write vtop's judgement as Prometheus alerting rules (-o FILE), with the same thresholds."`
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses the command line and runs the chosen command, returning the
// process exit code. Help and --version exit from inside the parser.
func run(args []string) int {
	var c cli
	parser, err := newParser(&c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vtop:", err)
		return command.ExitFailure
	}
	kctx, err := parse(parser, args)
	if err != nil {
		parser.Errorf("%s", err)
		return command.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	err = kctx.Run(&command.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Version: version, Args: args})
	var status *command.StatusError
	if err != nil && !errors.As(err, &status) {
		fmt.Fprintln(os.Stderr, "vtop:", err)
	}
	return command.ExitCode(err)
}

// newParser declares the command line of c.
func newParser(c *cli) (*kong.Kong, error) {
	vars := kong.Vars(command.FlagVars())
	vars["version"] = "vtop " + version
	return kong.New(c,
		kong.Name("vtop"),
		kong.Description(command.Description),
		vars,
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
}

// parse reads args into the parser's command line, flags and arguments
// in any order.
func parse(parser *kong.Kong, args []string) (*kong.Context, error) {
	return parser.Parse(flagsFirst(parser.Model, helpForWatch(parser.Model, relativeTimes(args))))
}

// pastFlags take a time that may be relative: --at -8h.
var pastFlags = map[string]bool{"--at": true, "--from": true, "--to": true}

// relativeTimes joins a time of the past flags that starts with a minus
// (-8h, -90m) to its flag (--at=-8h), which the parser would otherwise
// read as a short flag. Only a minus and a digit are joined, so that a
// flag left without its value still says so.
func relativeTimes(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if pastFlags[a] && i+1 < len(args) && len(args[i+1]) > 1 && args[i+1][0] == '-' && args[i+1][1] >= '0' && args[i+1][1] <= '9' {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// helpForWatch sends `vtop --help` to the help of the default command, whose
// flags are what a person running vtop wants to read; the sub-commands have
// their own (`vtop analyze --help`).
func helpForWatch(app *kong.Application, args []string) []string {
	help := false
	for _, arg := range args {
		switch {
		case namedCommand(app, arg) != nil:
			return args
		case arg == "-h" || arg == "--help":
			help = true
		}
	}
	if !help {
		return args
	}
	return append([]string{"watch"}, args...)
}
