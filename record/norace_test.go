//go:build !race

package record

// raceEnabled is false without the race detector (race_test.go).
const raceEnabled = false
