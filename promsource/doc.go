// Package promsource is a monitor.Source that reads a fleet's vLLM series
// from a Prometheus server (or anything that serves its HTTP query API:
// Thanos, Mimir, VictoriaMetrics) instead of scraping every replica.
//
// Each refresh asks a constant number of queries whatever the size of the
// fleet, all at one evaluation time T (a second in the past, so that
// scrapes in flight have landed): the raw samples of every family vtop
// reads ({__name__=~"…"}[R], asked in two halves side by side, since
// Prometheus answers one query on one core) and `up` over the analysis
// window W. The
// source keeps the window's raw samples between refreshes, so R is only
// the time since the previous evaluation plus a margin; the whole window
// (R = W, exactly the samples PromQL's rate() sees at T) is read at start,
// after a failure and when the window changes. With each increment, one
// part of the series (a few families) is read over the whole window again,
// the next part each time, so that a sample that arrived too late for an
// increment is in within a minute, without a refresh that reads it all. A cap on the
// series of one answer, checked as it is decoded, keeps a huge fleet from
// exhausting memory without a query to count them first. The raw samples become one catalogue.Sample per
// replica per scrape timestamp, so the analysis computes rate() and
// histogram_quantile() from the very samples Prometheus would, and the
// first report already has full-window rates.
//
// A replica is one value of the grouping label (pod where the series have
// it, else instance). When it holds several scrape targets (the instances
// of a group such as --group-by job), each is built on its own and they
// are combined after: rates are the sum of each instance's rate(), gauges
// the sum of their newest values (KV usage their mean), a restart is one
// instance's, and the replica says how many instances it holds. Replicas come and go with their series: one whose
// scrapes fail (up is 0) or whose series stopped arriving is DOWN with the
// reason, keeping its last data, and is forgotten a while after Prometheus
// stopped listing it. A failing target with no series left (a server
// killed before the window) is a replica too when it is the fleet's
// (dead.go): up is all a dead server leaves. When the
// server itself fails, the replicas are not DOWN: the readings stay those
// of the last good refresh, at its time, so every replica keeps its last
// verdict, and Status says what failed, since when and how old the data
// are (the monitor marks the replicas stale from it). A server that has
// never answered has no replicas to show; a selector that matches
// nothing is a failure that names it and the jobs the server has.
//
// A large fleet's buckets are the server's (summary.go): above
// Config.BucketsAbove scrape targets, the raw read leaves out every
// _bucket series (most of a replica's series) and the server evaluates
// each target's bucket increases over the analysis window for the
// histograms Config.Histograms names (vtop names those the states read),
// with the expressions of package promql, one row per target, histogram
// and bound; they reach the analysis as catalogue.WindowBuckets, which it
// reads in place of the buckets it would work out from raw samples, and
// only over the very window the server evaluated. Gauges, counters, _sum
// and _count stay raw, so the states' evidence is read as before, and the
// states and those histograms' figures are those of the raw path
// (buckets_test.go, against a real Prometheus). The replicas wanted (SetWanted: the screen names the one
// its detail view shows) get their raw buckets read over the window too,
// for what only raw buckets give: the prompt-length heatmap, each
// engine's quantiles, the quantiles of the histograms the server was not
// asked for. docs/prometheus.md says what is exact and what is
// lost.
//
// Every string the source delivers (replica, model and engine names,
// errors) is made safe to draw where it enters.
package promsource
