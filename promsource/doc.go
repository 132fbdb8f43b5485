// Package promsource is a monitor.Source that reads a fleet's vLLM series
// from a Prometheus server (or anything that serves its HTTP query API:
// Thanos, Mimir, VictoriaMetrics) instead of scraping every replica.
//
// Each refresh asks a constant number of queries whatever the size of the
// fleet, all at one evaluation time T (a second in the past, so that
// scrapes in flight have landed): the raw samples of every family vtop
// reads ({__name__=~"…"}[R], in two halves side by side, since Prometheus
// answers one query on one core) and `up` over the analysis window W. The
// raw samples are kept between refreshes (window.go), so R is only the
// time since the previous evaluation plus a margin. A cap on the series
// of one answer, checked as it is decoded (stream.go), keeps a huge fleet
// from exhausting memory without a query to count them first. The raw
// samples become one catalogue.Sample per replica per scrape timestamp
// (build.go), so the analysis computes rate() and histogram_quantile()
// from the very samples Prometheus would, and the first report already
// has full-window rates.
//
// A replica is one value of the grouping label (pod where the series have
// it, else instance); one of several scrape targets has them built apart
// and combined (groups.go). One whose scrapes fail (up is 0) or whose
// series stopped is DOWN with the reason, keeping its last data, and is
// forgotten a while after Prometheus stopped listing it; a failing target
// with no series left is one too when it is the fleet's (dead.go). When
// the server itself fails, the replicas keep the readings of the last
// good refresh, at its time, and Status says what failed, since when and
// how old the data are. A selector that matches nothing is a failure that
// names it and the jobs the server has.
//
// A large fleet's buckets are evaluated by the server (summary.go), and a
// store that evaluates vtop's recording rules is read through them
// (recorded.go); docs/prometheus.md says what is exact and what is lost.
// Every string the source delivers (replica, model and engine names,
// errors) is made safe to draw where it enters.
package promsource
