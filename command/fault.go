package command

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/sim"
)

// FaultKinds are the names --fault and --demo-fault take: the simulator's
// faults, with 500 for its http500.
const FaultKinds = "500, hang, slow, truncated, garbage, restart, down, stall"

// GPUFaultKinds are the names --gpu-fault and --demo-gpu-fault take.
const GPUFaultKinds = "throttle, xid"

// restartEvery is how often a replica under the restart fault restarts:
// often enough that whoever watches sees one within a window or two.
const restartEvery = time.Minute

// faultSpec is one KIND[@N] of a fault flag: a fault on replica N (from
// 1) or, with replica 0, on all.
type faultSpec[F any] struct {
	fault   F
	replica int
}

// on reports whether the spec puts replica i (from 0) into its fault.
func (s faultSpec[F]) on(i int) bool { return s.replica == 0 || s.replica == i+1 }

// parseFaults reads the KIND[@N] values of --flag (fault, demo-fault) for
// a fleet of n replicas.
func parseFaults(flag string, values []string, n int) ([]faultSpec[sim.Fault], error) {
	return parseSpecs(flag, values, n, func(kind string) (sim.Fault, error) {
		if kind == "500" {
			kind = string(sim.FaultHTTP500)
		}
		f, err := sim.ParseFault(kind)
		if err != nil || f == sim.FaultNone {
			return f, fmt.Errorf("unknown fault %q (want %s, optionally @N for the Nth replica)", kind, FaultKinds)
		}
		return f, nil
	})
}

// parseGPUFaults reads the KIND[@N] values of --flag (gpu-fault,
// demo-gpu-fault) for a fleet of n replicas.
func parseGPUFaults(flag string, values []string, n int) ([]faultSpec[sim.GPUFault], error) {
	return parseSpecs(flag, values, n, func(kind string) (sim.GPUFault, error) {
		f := sim.GPUFault(kind)
		if f != sim.GPUThrottle && f != sim.GPUXID {
			return f, fmt.Errorf("unknown GPU fault %q (want %s, optionally @N for the Nth replica)", kind, GPUFaultKinds)
		}
		return f, nil
	})
}

// parseSpecs reads KIND[@N] values of --flag, each KIND by parse.
func parseSpecs[F any](flag string, values []string, n int, parse func(string) (F, error)) ([]faultSpec[F], error) {
	specs := make([]faultSpec[F], 0, len(values))
	for _, v := range values {
		kind, at, hasAt := strings.Cut(v, "@")
		f, err := parse(kind)
		replica := 0
		if err == nil && hasAt {
			if replica, err = strconv.Atoi(at); err != nil || replica < 1 || replica > n {
				err = fmt.Errorf("replica %s: want 1 to %d", at, n)
			}
		}
		if err != nil {
			return nil, usagef("--%s %q: %v", flag, v, err)
		}
		specs = append(specs, faultSpec[F]{fault: f, replica: replica})
	}
	return specs, nil
}

// applyFaults puts a started fleet's replicas into their faults for the
// life of ctx. A restart is an event, not a state: it is repeated every
// restartEvery, so that there is always a recent one to look at.
func applyFaults(ctx context.Context, fleet *sim.Fleet, specs []faultSpec[sim.Fault]) error {
	for _, spec := range specs {
		for i, r := range fleet.Replicas() {
			switch {
			case !spec.on(i):
			case spec.fault == sim.FaultRestart:
				go restartEveryMinute(ctx, r)
			default:
				if err := r.SetFault(spec.fault); err != nil {
					return fmt.Errorf("replica %d: %w", i+1, err)
				}
			}
		}
	}
	return nil
}

// restartEveryMinute restarts r every restartEvery until ctx ends.
func restartEveryMinute(ctx context.Context, r *sim.Replica) {
	tick := time.NewTicker(restartEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = r.SetFault(sim.FaultRestart) // only an unknown fault fails
		}
	}
}

// startFleet runs the fleet for warmUp, serves it for the life of ctx
// with its faults in, and returns its URLs.
func startFleet(ctx context.Context, fleet *sim.Fleet, warmUp time.Duration, faults []faultSpec[sim.Fault]) ([]string, error) {
	fleet.Advance(warmUp)
	urls, err := fleet.Start(ctx)
	if err == nil {
		err = applyFaults(ctx, fleet, faults)
	}
	return urls, err
}

// serveGPUs serves a dcgm-exporter page per replica of the fleet on host,
// its GPUs in their faults, for the life of ctx; it returns their
// addresses in replica order.
func serveGPUs(ctx context.Context, fleet *sim.Fleet, faults []faultSpec[sim.GPUFault], host string) ([]string, error) {
	gpus := sim.NewGPUs(fleet)
	for _, spec := range faults {
		for i := range fleet.Replicas() {
			if !spec.on(i) {
				continue
			}
			if err := gpus.SetFault(i, spec.fault); err != nil {
				return nil, fmt.Errorf("replica %d: %w", i+1, err)
			}
		}
	}
	return gpus.Serve(ctx, host)
}
