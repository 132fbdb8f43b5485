package record

import "time"

// WallClock is the clock to give the poller (scrape.Options.Now) when
// recording: wall time to the millisecond, without Go's monotonic
// reading. Live reports then compute with exactly the times the recording
// keeps, so a replay gives the same figures: a difference of monotonic
// readings can differ from the wall difference by a few nanoseconds, and
// Prometheus, which an export feeds, keeps milliseconds.
func WallClock() time.Time { return time.Now().Round(0).Truncate(time.Millisecond) }
