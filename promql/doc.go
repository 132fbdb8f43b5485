// Package promql writes vtop's queries, those it asks of a Prometheus
// server and those it writes into a rule file, from a few shapes (text.go:
// a selector, a range over a window, an aggregation, a quantile, a label
// written on rows).
//
// Its figures go over the catalogue's alias table: every engine, every
// name a figure is exported under (vLLM's under each of its prefixes),
// legacy names only where the current ones are absent, grouped by the
// labels that name a replica, so that each answers one row per replica
// (and per bound, for a histogram's buckets). `vtop rules`, which writes
// the judgement as recording and alerting rules, and the Prometheus
// source, which reads raw series, the store-evaluated buckets, the
// recorded series and the history, build their queries here, as does the
// DCGM query of the GPUs: one definition per signal. It depends on the
// catalogue alone.
package promql
