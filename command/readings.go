package command

import (
	"errors"
	"fmt"
	"math"

	"github.com/vtop-dev/vtop/catalogue"
)

// compareReadings says why two pages are not two readings of one server
// process taken in order, or returns nil. Across a restart, or read the
// wrong way round, every counter that fell would be read as a reset and
// its whole value as the increase: rates that look plausible and are
// wrong.
func compareReadings(before, after catalogue.Sample) error {
	if before.Model != "" && after.Model != "" && before.Model != after.Model {
		return fmt.Errorf("the pages are of different models (%s, then %s): not two readings of one server", before.Model, after.Model)
	}
	if err := compareStarts(before.ProcessStartTime, after.ProcessStartTime); err != nil {
		return err
	}
	rose, fell := counterMoves(before.Total, after.Total)
	switch {
	case fell > 0 && rose == 0:
		return errors.New("every counter that moved went down: the files look swapped (BEFORE first, then AFTER)")
	case fell > 0:
		return fmt.Errorf("%d counters rose and %d fell: not two readings of one server process in order (a restart between them, or pages of two servers)", rose, fell)
	}
	return nil
}

// compareStarts compares the servers' process start times, when both pages
// have one.
func compareStarts(before, after float64) error {
	switch {
	case math.IsNaN(before) || math.IsNaN(after) || before == after:
		return nil
	case after < before:
		return errors.New("the second page's server started before the first's: the files look swapped (BEFORE first, then AFTER)")
	}
	return errors.New("the server restarted between the readings (its process start time changed): " +
		"counters started again from 0, so two readings across the restart give no rates; take both after it")
}

// counterMoves counts the counters, finish reasons and histogram counts
// known on both pages that rose and that fell.
func counterMoves(before, after catalogue.Series) (rose, fell int) {
	move := func(b, a float64) {
		switch {
		case math.IsNaN(b) || math.IsNaN(a):
		case a > b:
			rose++
		case a < b:
			fell++
		}
	}
	for s := range catalogue.NumScalars {
		if s.IsCounter() {
			move(before.Scalars[s], after.Scalars[s])
		}
	}
	for r := range catalogue.NumFinishReasons {
		move(before.Finished[r], after.Finished[r])
	}
	for h := range catalogue.NumHistograms {
		move(before.Histograms[h].Count, after.Histograms[h].Count)
	}
	return rose, fell
}
