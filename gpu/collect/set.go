package collect

import (
	"context"
	"math"
	"sync"

	"github.com/vtop-dev/vtop/gpu/device"
)

// Reader is a running GPU reader: an *SMI or an *Exporter.
type Reader interface {
	Snapshot() Snapshot
	Updates() <-chan struct{}
	Stop()
}

// Merge joins the readers' snapshots into one list of GPUs and their
// notes. A GPU seen by nvidia-smi and by an exporter (the same UUID and
// MIG instance) is listed once: the exporter's reading, which has XIDs and
// pods, completed by nvidia-smi's figures and compute processes.
func Merge(snaps ...Snapshot) (gs []device.GPU, notes []string) {
	index := map[string]int{}
	for _, s := range snaps {
		if s.Note != "" {
			notes = append(notes, s.Note)
		}
		for _, g := range s.GPUs {
			k := g.Key()
			i, seen := index[k]
			if !seen || g.UUID == "" {
				index[k] = len(gs)
				gs = append(gs, g)
				continue
			}
			gs[i] = combine(gs[i], g)
		}
	}
	device.Sort(gs)
	return gs, notes
}

// combine keeps the exporter's reading of a GPU two sources report and
// fills what it lacks from nvidia-smi's.
func combine(a, b device.GPU) device.GPU {
	exp, smi := a, b
	if a.Source == device.SourceSMI {
		exp, smi = b, a
	}
	if exp.Source == device.SourceSMI {
		return b // two nvidia-smi readings: the later
	}
	fill := func(dst *float64, src float64) {
		if math.IsNaN(*dst) {
			*dst = src
		}
	}
	fill(&exp.Utilization, smi.Utilization)
	fill(&exp.MemoryUsedBytes, smi.MemoryUsedBytes)
	fill(&exp.MemoryTotalBytes, smi.MemoryTotalBytes)
	fill(&exp.PowerWatts, smi.PowerWatts)
	fill(&exp.PowerLimitWatts, smi.PowerLimitWatts)
	fill(&exp.TemperatureCelsius, smi.TemperatureCelsius)
	fill(&exp.SlowdownMarginCelsius, smi.SlowdownMarginCelsius)
	fill(&exp.SMClockHz, smi.SMClockHz)
	fill(&exp.MaxSMClockHz, smi.MaxSMClockHz)
	fill(&exp.UncorrectableRemappedRows, smi.UncorrectableRemappedRows)
	if exp.ClockEventReasons < 0 {
		exp.ClockEventReasons = smi.ClockEventReasons
	}
	exp.PIDs = smi.PIDs
	return exp
}

// background is what each reader runs: goroutines stopped together, and
// a signal of news that never blocks them.
type background struct {
	updates chan struct{}
	stop    context.CancelFunc
	done    sync.WaitGroup
}

func newBackground() background { return background{updates: make(chan struct{}, 1), stop: func() {}} }

// run starts each of fs until ctx ends or Stop is called.
func (b *background) run(ctx context.Context, fs ...func(context.Context)) {
	ctx, b.stop = context.WithCancel(ctx)
	for _, f := range fs {
		b.done.Go(func() { f(ctx) })
	}
}

// Updates is signalled after every change.
func (b *background) Updates() <-chan struct{} { return b.updates }

// Stop ends the reader and waits until its goroutines (and their child
// processes) are gone.
func (b *background) Stop() {
	b.stop()
	b.done.Wait()
}

func (b *background) signal() {
	select {
	case b.updates <- struct{}{}:
	default:
	}
}
