// Package analysis turns the readings of vLLM servers into figures, a state
// per replica and advice for the fleet.
//
// It is pure: no I/O, no clocks, no goroutines. Every input, including the
// evaluation time, is passed in, so every function is a table-driven test away
// from being proven. Every string it is given is already safe to draw (the
// sources clean text where it enters), so it never cleans text itself.
package analysis
