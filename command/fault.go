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

// restartEvery is how often a replica under the restart fault restarts:
// often enough that whoever watches sees one within a window or two.
const restartEvery = time.Minute

// faultSpec is one --fault: a fault on one replica (1-based) or, with
// replica 0, on all.
type faultSpec struct {
	fault   sim.Fault
	replica int
}

// parseFaults reads KIND[@N] values of flag for a fleet of n replicas.
func parseFaults(flag string, values []string, n int) ([]faultSpec, error) {
	specs := make([]faultSpec, 0, len(values))
	for _, v := range values {
		spec, err := parseFault(v, n)
		if err != nil {
			return nil, usagef("--%s %q: %v", flag, v, err)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func parseFault(v string, n int) (faultSpec, error) {
	kind, at, hasAt := strings.Cut(v, "@")
	if kind == "500" {
		kind = string(sim.FaultHTTP500)
	}
	f, err := sim.ParseFault(kind)
	if err != nil || f == sim.FaultNone {
		return faultSpec{}, fmt.Errorf("unknown fault %q (want %s, optionally @N for the Nth replica)", kind, FaultKinds)
	}
	replica, err := replicaAt(at, hasAt, n)
	if err != nil {
		return faultSpec{}, err
	}
	return faultSpec{fault: f, replica: replica}, nil
}

// replicaAt reads the N of a fault's KIND@N for a fleet of n replicas: the
// Nth (1-based), or 0 (all) when there is no @N.
func replicaAt(at string, hasAt bool, n int) (int, error) {
	if !hasAt {
		return 0, nil
	}
	i, err := strconv.Atoi(at)
	if err != nil || i < 1 || i > n {
		return 0, fmt.Errorf("replica %s: want 1 to %d", at, n)
	}
	return i, nil
}

// applyFaults puts a started fleet's replicas into their faults for the
// life of ctx. A restart is an event, not a state: it is repeated every
// restartEvery, so that there is always a recent one to look at.
func applyFaults(ctx context.Context, fleet *sim.Fleet, specs []faultSpec) error {
	for _, spec := range specs {
		for i, r := range fleet.Replicas() {
			if spec.replica != 0 && spec.replica != i+1 {
				continue
			}
			if spec.fault == sim.FaultRestart {
				go restartEveryMinute(ctx, r)
				continue
			}
			if err := r.SetFault(spec.fault); err != nil {
				return fmt.Errorf("replica %d: %w", i+1, err)
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
