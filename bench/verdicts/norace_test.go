//go:build !race

package verdicts

// raceEnabled is true under the race detector, which runs the benchmark
// several times slower: it then runs one seed.
const raceEnabled = false
