package command

import (
	"math"
	"os"
	"runtime/debug"
)

// memoryFlags hold vtop's one bound on its memory (its peak RSS), of which
// each input takes a share.
type memoryFlags struct {
	MaxMemory string `default:"256MiB" placeholder:"SIZE" help:"The bound on vtop's memory (default 256MiB): a refresh's answers from Prometheus may take a quarter of it, counted as they are decoded, and the pages of direct scrapes half, counted before they are read into; an answer or a page that would pass its share is refused with a message naming the query or the target. The runtime collects garbage before it passes seven eighths of it (unless GOMEMLIMIT is set)."`
}

// minMemory is the least --max-memory: below it vtop cannot hold its own
// program and one small fleet.
const minMemory = 32 << 20

// maxMemory is the bound in bytes.
func (f memoryFlags) maxMemory() (int64, error) {
	n, err := parseSize(f.MaxMemory)
	if err != nil {
		return 0, usagef("--max-memory: %v", err)
	}
	if n < minMemory {
		return 0, usagef("--max-memory %s: want at least 32MiB", f.MaxMemory)
	}
	return n, nil
}

// softLimit makes seven eighths of n, the bound, the runtime's soft
// memory limit unless one is set (GOMEMLIMIT, or the dashboard's): left to
// GOGC, the garbage of pages read within their share grew to twice the
// live heap (sixteen pages at the --max-body cap peaked at 395 MiB). The
// last eighth is for what the runtime does not count (the program's code
// and data), so that the process' RSS keeps to n.
func softLimit(n int64) {
	if os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	debug.SetMemoryLimit(n - n/8)
}
