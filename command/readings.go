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
	sameStart := !math.IsNaN(before.ProcessStartTime) && before.ProcessStartTime == after.ProcessStartTime
	switch {
	case fell > 0 && rose == 0 && sameStart:
		// One process's counters never go down: the order is wrong.
		return errors.New("every counter that moved went down with the same process start time on both pages: the files look swapped (BEFORE first, then AFTER)")
	case fell > 0 && rose == 0:
		// A restart between the readings gives the same pages: the new
		// process counts from 0. Neither page has a start time to tell.
		return errors.New("every counter that moved went down: either the files are swapped (BEFORE first, then AFTER), " +
			"or the server restarted between the readings and counted again from 0 (the pages have no process_start_time_seconds to tell which); " +
			"either way they give no rates")
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
		// Swapped or not, two processes: their counters give no rates.
		return errors.New("the server restarted between the readings (process_start_time_seconds differs), " +
			"and the second page's process started before the first's: the files look swapped too (BEFORE first, then AFTER); " +
			"counters started again from 0, so two readings across the restart give no rates; take both after it")
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
