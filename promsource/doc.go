// Package promsource is a monitor.Source that reads a fleet's vLLM series
// from a Prometheus server (or anything that serves its HTTP query API:
// Thanos, Mimir, VictoriaMetrics) instead of scraping every replica.
//
// Each refresh asks a constant number of queries whatever the size of the
// fleet, all at one evaluation time T: how many series the selector
// matches (a cap keeps a huge fleet from exhausting memory), the raw
// samples of every family vtop reads over the analysis window
// ({__name__=~"…"}[W], exactly the samples PromQL's rate() sees at T), and
// `up` over the same window. The raw samples become one catalogue.Sample
// per replica per scrape timestamp, so the analysis computes rate() and
// histogram_quantile() from the very samples Prometheus would, and the
// first report already has full-window rates.
//
// A replica is one value of the grouping label (pod where the series have
// it, else instance). Replicas come and go with their series: one whose
// scrapes fail (up is 0) or whose series stopped arriving is DOWN with the
// reason, keeping its last data, and is forgotten a while later. When the
// server itself fails, every replica keeps its last data and turns DOWN
// with the server's problem; Status says the same for the header.
//
// Every string the source delivers (replica, model and engine names,
// errors) is made safe to draw where it enters.
package promsource
