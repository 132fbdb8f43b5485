package command

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The dashboard keeps a soft memory limit sized from its live heap: left
// to GOGC=100, the heap grows to twice its live size before each
// collection, which made the screen history of fifty replicas the larger
// part of vtop's RSS. The limit follows the fleet, and the runtime never
// spends more than half the CPU on one it cannot meet. Not for the
// headless modes (their CPU is the figure that counts), nor through
// Prometheus, whose refresh decodes answers of the order of the live heap
// at once: meeting the limit tripled the CPU there (BENCHMARKS.md, "The
// dashboard's memory").
const (
	memoryLimitEvery  = 10 * time.Second // how often the limit follows the live heap
	memoryHeadroomMin = 4 << 20          // the least room for garbage: a small fleet would collect at every frame
)

// memoryLimitSamples are the runtime metrics memoryLimit reads, in the
// order of limitFrom's arguments.
var memoryLimitSamples = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

// limitFrom is the soft memory limit for a heap whose last collection left
// live bytes: what the runtime holds (total less released) beyond the
// heap's spans (objects, unused, free), which a collection does not
// shrink, plus the live heap and five eighths of it as room for garbage,
// at least memoryHeadroomMin. Half the room made the collector run twice
// as often once the live heap had shrunk, for 4 to 11 % more CPU
// (BENCHMARKS.md, "The dashboard's memory, second pass").
func limitFrom(live, total, released, objects, unused, free uint64) int64 {
	heap := released + objects + unused + free
	rest := uint64(0)
	if total > heap {
		rest = total - heap
	}
	return int64(rest + live + max(live*5/8, memoryHeadroomMin))
}

// keepMemoryLimit sizes the soft memory limit from the live heap now and
// every memoryLimitEvery until ctx ends, then puts the previous limit
// back. It leaves the limit alone when GOMEMLIMIT is set: the user's
// choice wins.
func keepMemoryLimit(ctx context.Context) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	prev := debug.SetMemoryLimit(-1)
	samples := make([]metrics.Sample, len(memoryLimitSamples))
	for i, name := range memoryLimitSamples {
		samples[i].Name = name
	}
	set := func() {
		metrics.Read(samples)
		var v [6]uint64
		for i, s := range samples {
			if s.Value.Kind() != metrics.KindUint64 {
				return // a runtime without the metric: keep what is set
			}
			v[i] = s.Value.Uint64()
		}
		debug.SetMemoryLimit(limitFrom(v[0], v[1], v[2], v[3], v[4], v[5]))
	}
	set()
	go func() {
		t := time.NewTicker(memoryLimitEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				debug.SetMemoryLimit(prev)
				return
			case <-t.C:
				set()
			}
		}
	}()
}

// headlessGCPercent is the GOGC of --jsonl over direct scrapes: the heap
// grows to 1.7 times its live size before a collection, not twice: the
// headroom was the largest part of the fleet benchmark's peak RSS above
// the live heap, and the CPU stayed within the runs' noise (BENCHMARKS.md,
// what each optimisation bought). The dashboard has its memory limit
// instead.
const headlessGCPercent = 70

// collectSooner sets headlessGCPercent unless GOGC is set (the user's
// choice wins), and returns what puts the previous setting back.
func collectSooner() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(headlessGCPercent)
	return func() { debug.SetGCPercent(prev) }
}
