// Package bench holds vtop's performance harnesses: fleet.sh (vtop against
// Prometheus and against the floor, bench/floor, on the same simulated
// fleet), screen.sh (the dashboard's memory as its history fills), a
// benchmark of one monitor round over a fleet served by another process
// (for CPU profiles), the latency checks of the dashboard, and ingest.sh
// (the page parser of an older commit against the work tree's, on the same
// pages). They are run by hand; bench/verdicts, the judgement benchmark,
// runs inside go test. BENCHMARKS.md at
// the top of the repository says how and records the figures.
package bench
