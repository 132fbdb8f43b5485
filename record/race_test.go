//go:build race

package record

// raceEnabled is true under the race detector, whose instrumentation
// allocates beside the code: allocation bounds are not measured then.
const raceEnabled = true
