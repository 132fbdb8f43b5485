package analysis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// BusyFleetReport is busyFleetReport for the benchmarks of the JSON
// writer, outside the package.
var BusyFleetReport = busyFleetReport

// busyFleetReport is the report of n busy replicas of engines
// data-parallel engines each (one: no engine reports).
func busyFleetReport(n, engines int) Report {
	s := newServer()
	s.running, s.waiting, s.kv = 200, 20, 0.8
	if engines > 1 {
		for e := range engines {
			s.engines = append(s.engines, strconv.Itoa(e))
		}
	}
	samples, now := run(s, 30, time.Second, finishing(10, chat))
	var targets []catalogue.Readings
	for i := range n {
		targets = append(targets, catalogue.Readings{Target: fmt.Sprintf("gpu-%d:8000", i), Samples: samples})
	}
	return Analyze(now, targets, DefaultConfig(), nil)
}
