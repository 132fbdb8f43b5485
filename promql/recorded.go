package promql

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// The series vtop's recording rules (`vtop rules`) record, one row per
// group. The rules write them; the Prometheus source reads them back in
// place of the raw series where a store evaluates the rules (its fast
// path): the cost of a refresh is then in replicas, not in bucket series.
const (
	RecordedRunning     = "vtop:running"
	RecordedWaiting     = "vtop:waiting"
	RecordedPreemptions = "vtop:preemptions_total"
	RecordedWork        = "vtop:work_total"
	// The increases over the window: preemptions, the prompt tokens they
	// recompute, the tokens generated and prompted, the requests finished
	// (the e2e histogram's count) and those counted by the engine's
	// finished-request counters.
	RecordedPreempted  = "vtop:preemptions:increase_window"
	RecordedRecomputed = "vtop:recomputed_tokens:increase_window"
	RecordedGenerated  = "vtop:generation_tokens:increase_window"
	RecordedPrompted   = "vtop:prompt_tokens:increase_window"
	RecordedFinished   = "vtop:finished_requests:increase_window"
	RecordedRequests   = "vtop:requests:increase_window"
	// RecordedInfo is one series per rule group that says which rules
	// they are: its labels are RulesVersion and the settings the figures
	// were recorded with (InfoLabels); its value is the time, in seconds,
	// its evaluation read the store as of (RecordedInfoExpr), which is
	// the evaluation's own unless the store answers it as of another.
	RecordedInfo = "vtop:rules_info"
)

// RulesVersion is the version of the recorded series: raised whenever
// what a recorded series means changes, so that a vtop reads back only
// rules it would write itself.
const RulesVersion = "2"

// RecordedInfoExpr is RecordedInfo's expression: the time the store
// evaluates it at. (Version 1 recorded 1.)
const RecordedInfoExpr = "vector(time())"

// A latency histogram's recorded series: its buckets' rates over the
// window, its p99 and median, the observations they are read from.
func RecordedBucketRate(latency string) string {
	return "vtop:" + latency + "_seconds_bucket:rate_window"
}

// RecordedQuantile is the series of a latency's quantile q (p99, p50).
func RecordedQuantile(latency, q string) string { return "vtop:" + latency + "_seconds:" + q }

// RecordedObservations is the series of a latency's observations over
// the window.
func RecordedObservations(latency string) string { return "vtop:" + latency + "_seconds:observations" }

// The latencies the rules record quantiles of.
const (
	LatencyTTFT = "ttft"
	LatencyITL  = "itl"
)

// RecordedFigures are the recorded series the fast path reads, one row
// per replica each.
var RecordedFigures = []string{
	RecordedRunning, RecordedWaiting, RecordedPreempted, RecordedRecomputed, RecordedGenerated,
	RecordedPrompted, RecordedFinished, RecordedRequests,
	RecordedQuantile(LatencyTTFT, "p99"), RecordedQuantile(LatencyTTFT, "p50"), RecordedObservations(LatencyTTFT),
	RecordedQuantile(LatencyITL, "p99"), RecordedQuantile(LatencyITL, "p50"), RecordedObservations(LatencyITL),
}

// The labels of RecordedInfo.
const (
	InfoVersion    = "version"
	InfoWindow     = "window"
	InfoSLOTTFT    = "slo_ttft"
	InfoSLOITL     = "slo_itl"
	InfoHysteresis = "hysteresis"
	InfoInterval   = "evaluation_interval"
	InfoGroupBy    = "group_by"
)

// RulesSettings are the settings recorded series are written with, as
// RecordedInfo's labels say them: what a reader must share with the rules
// for their figures and states to be its own.
type RulesSettings struct {
	Window, SLOTTFT, SLOITL time.Duration
	Hysteresis              int
	GroupBy                 []string
}

// InfoLabels are RecordedInfo's labels for rules of these settings
// evaluated every interval, in the order written.
func InfoLabels(s RulesSettings, interval time.Duration) [][2]string {
	return [][2]string{
		{InfoVersion, RulesVersion},
		{InfoWindow, Duration(s.Window)},
		{InfoSLOTTFT, Duration(s.SLOTTFT)},
		{InfoSLOITL, Duration(s.SLOITL)},
		{InfoHysteresis, strconv.Itoa(s.Hysteresis)},
		{InfoInterval, Duration(interval)},
		{InfoGroupBy, strings.Join(s.GroupBy, ",")},
	}
}

// RulesInfoQuery asks for each vtop rule group's settings and the time of
// its newest evaluation: one row per group, valued its timestamp.
func RulesInfoQuery() string { return "timestamp(" + RecordedInfo + ")" }

// RecordedRowsQuery reads the recorded figures, and the rule groups'
// RecordedInfo, over the span before an evaluation: as a range, so that
// each row bears the time it was evaluated at and a row the rules no
// longer write is told from a current one.
func RecordedRowsQuery(span time.Duration) string {
	names := append(slices.Clone(RecordedFigures), RecordedInfo)
	return Over(Selector("", NameIs(names...)), span)
}

// StateLabel is the label of vtop's alerts that names the state they are
// (FULL, SLOW, …).
const StateLabel = "vtop_state"

// firing picks the ALERTS series of firing alerts.
const firing = `alertstate="firing"`

// FiringAlert selects the firing alert of that name.
func FiringAlert(name string) string { return Selector("ALERTS", MatchAny("alertname", name), firing) }

// FiringStatesQuery reads the firing alerts of vtop's rules over the span
// before the time it is asked at, with the times they were written at.
func FiringStatesQuery(span time.Duration) string {
	return Over(Selector("ALERTS", firing, StateLabel+`!=""`), span)
}

// FinishedIncrease is the requests each group finished over the window:
// the sum of the engine's counters by finish reason where it has them
// (vtop's requests/s is their sum), else its count of finished requests.
func (q Group) FinishedIncrease(window time.Duration) string {
	var terms []string
	for _, k := range engines() {
		if names := finishedByReason(k); len(names) > 0 {
			terms = append(terms, q.sumOver("increase", q.sel(selector{names: names}), q.By, window))
		}
		for _, sel := range alternatives(k, catalogue.ScalarFigure(catalogue.FinishedRequests), "") {
			terms = append(terms, q.sumOver("increase", q.sel(sel), q.By, window))
		}
	}
	return q.OrEach(terms)
}

// finishedByReason are the names of an engine's current counters of
// finished requests by their finished_reason label.
func finishedByReason(k catalogue.EngineKind) []string {
	var names []string
	for i := range catalogue.Reads {
		r := &catalogue.Reads[i]
		if r.Engine == k && r.Router == catalogue.RouterNone && r.Kind == catalogue.ReadFinished && !r.Legacy {
			names = append(names, exposedNames(r, "")...)
		}
	}
	return names
}
