package command

import (
	"github.com/mattn/go-isatty"
)

// errNoTerminal is why the dashboard does not start: the usual cause is
// `ssh host vtop` without -t, which gives the process pipes, not a
// terminal; the modes that need none say the same things.
var errNoTerminal = usagef("the dashboard needs a terminal, and stdin or stdout is not one " +
	"(ssh without -t, a pipe, cron): use ssh -t, or --once or --jsonl for a report without a terminal")

// isTerminal reports whether f is an open file whose descriptor is a TTY.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return isatty.IsTerminal(fd.Fd()) || isatty.IsCygwinTerminal(fd.Fd())
}
