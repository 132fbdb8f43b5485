package command

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The dashboard keeps a soft memory limit sized from its live heap. Left to
// GOGC=100 alone, the Go heap grows to twice its live size before each
// collection and keeps the freed pages for a while: the screen history of
// fifty replicas and fifteen minutes made that the larger part of vtop's
// RSS (see BENCHMARKS.md, "The dashboard's memory"). A limit makes the
// collector run before that and the scavenger hand idle pages back. It is
// re-sized from the live heap, so it follows the fleet rather than a number
// guessed in advance, and the runtime still never spends more than half the
// CPU on a limit it cannot meet. The headless modes keep the default: they
// have no history to hold and their CPU is the figure that counts.
//
// The limit suits sources that read in small pieces: pages scraped one by
// one, frames of a recording. A refresh through Prometheus decodes every
// answer of the fleet at once, of the order of the live heap itself, so a
// limit five eighths above the live heap could be met only by collecting
// without pause: reading 200 two-engine replicas through Prometheus, the
// dashboard spent three times the CPU (7.3–8.1 s a minute against
// 2.5–2.8 s) to keep its peak RSS at 69–75 MB rather than 98–101 MB.
// The dashboard reading Prometheus keeps the collector's default and
// --max-memory's limit.
const (
	// memoryLimitEvery is how often the limit follows the live heap.
	memoryLimitEvery = 10 * time.Second
	// memoryHeadroomMin is the least room given to new garbage above the
	// live heap, so that a small fleet does not collect at every frame.
	memoryHeadroomMin = 4 << 20
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
// live bytes, given the runtime's memory: all it mapped (total) less what it
// returned (released) is what the limit counts; of that, the heap's spans
// (objects, unused, free) are the part a collection shrinks, the rest
// (goroutine stacks, collector metadata) stays. The limit is that rest plus
// the live heap plus five eighths of it as room for garbage — where
// GOGC=62 would collect — but never less than memoryHeadroomMin of room.
// Half was the room while fifty replicas' live heap was 20 MB; once it was
// 14 MB (the poller lends its samples, pages share buffers), the same
// allocation rate met about half the room and the collector ran twice as
// often, for some 4 to 11 % more CPU; five eighths put the CPU back at the
// earlier figure for 1.6 MB (BENCHMARKS.md, "The dashboard's memory,
// second pass").
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
