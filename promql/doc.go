// Package promql writes vtop's figures as PromQL, one expression per
// figure over the catalogue's alias table: every engine, every name a
// figure is exported under (vLLM's under each of its prefixes), legacy
// names only where the current ones are absent. Its expressions are
// grouped by the labels that name a replica, so that each answers one
// row per replica (and per bound, for a histogram's buckets).
//
// Both `vtop rules`, which writes the judgement as recording and alerting
// rules, and the Prometheus source, which lets the server evaluate a large
// fleet's histograms, build their queries here: one definition per
// signal. It depends on the catalogue alone.
package promql
