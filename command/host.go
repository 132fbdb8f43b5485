package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/vtop-dev/vtop/discover"
	"github.com/vtop-dev/vtop/scrape"
)

// found is what discovery found, for the header and the GPU join.
type found struct {
	// Summary says what was found and how, or what was looked for; ""
	// when targets were given.
	Summary string
	// PIDs are the server processes by target name (0: not known): their
	// GPUs are the ones their process tree computes on.
	PIDs map[string]int
	// Fallback says there was no /proc to find servers by (vLLM's
	// default port is watched).
	Fallback bool
}

// discoverTargets finds the inference servers of this host (discover.Find).
// When nothing is found there is nothing to judge: a no-data error says
// what was looked for and how else to point vtop (a replica DOWN at a
// port nothing serves said neither).
func (w *Watch) discoverTargets(ctx context.Context) ([]scrape.Target, found, error) {
	find := w.find
	if find == nil {
		find = discover.Find
	}
	res := find(ctx, discover.Options{Scan: w.Scan})
	f := found{Summary: res.Summary, PIDs: map[string]int{}, Fallback: res.Fallback}
	if len(res.Servers) == 0 {
		return nil, f, nothingFound(res.Summary, w.Scan)
	}
	targets := make([]scrape.Target, len(res.Servers))
	for i, s := range res.Servers {
		t, err := scrape.ParseTarget(s.Target)
		if err != nil {
			return nil, f, fmt.Errorf("discovered server: %w", err)
		}
		targets[i], f.PIDs[t.Name] = t, s.PID
	}
	return targets, f, nil
}

// nothingFound is the error of a host where discovery found no server:
// what was looked for, then every other way to point vtop.
func nothingFound(summary string, scanned bool) error {
	ways := []string{"vtop HOST:PORT (a server elsewhere, or one still starting: it is watched until it answers)",
		"vtop -f targets.txt (targets, one per line)"}
	if !scanned {
		ways = append(ways, "vtop --scan (probe every listening port of this host)")
	}
	ways = append(ways, "vtop --prometheus URL (the fleet as its Prometheus has it)", "vtop --demo (a simulated fleet)")
	return noData(summary + ", and nothing answers at " + scrape.DefaultTarget().Name +
		" (vLLM's default port). Point vtop at a server:\n  " + strings.Join(ways, "\n  "))
}
