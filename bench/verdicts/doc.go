// Package verdicts is vtop's judgement benchmark: it measures the states
// vtop shows against replicas whose true state at every second is known.
//
// Each replica is a small queueing model of continuous batching (model.go),
// independent of vtop's simulator: Poisson arrivals, a batch cap
// (max_num_seqs), prefill then decode at a step that grows with the batch,
// a KV cache in blocks whose shortage preempts the request admitted last,
// and outages after which the process comes back with its counters at 0.
// The model exports a real vLLM /metrics page through
// prometheus/client_golang (exporter.go) with the catalogue's names,
// labels and buckets. Every virtual second the page is read by vtop's own
// page parser and the fleet is evaluated by analysis.Analyze as the live
// monitor evaluates it. The truth (truth.go) is judged from the model's
// own records only; the scorer (score.go) compares the two.
//
// Run it with
//
//	go test ./bench/verdicts -run TestJudgementBenchmark -v
//
// and add -verdicts.goals to turn the goals of the judgement into
// failures. BENCHMARKS.md says what the truth and the scores mean.
package verdicts
