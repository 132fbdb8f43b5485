package catalogue

import "time"

// What a source that reads many targets at once (a Prometheus server) can
// hand on besides readings: its targets' past, and its own health.

// ChartFigure names one charted figure of a source's history: the figures the
// sparklines and the detail charts draw.
type ChartFigure uint8

// The charted figures, in the order of the screen's points.
const (
	ChartRunning ChartFigure = iota
	ChartWaiting
	ChartKVCacheUsage
	ChartRequestsPerSecond
	ChartPromptTokensPerSecond
	ChartGenerationTokensPerSecond
	ChartPreemptionsPerSecond
	ChartTTFTP50
	ChartTTFTP90
	ChartTTFTP99
	ChartITLP50
	ChartITLP90
	ChartITLP99
	ChartE2EP50
	ChartE2EP90
	ChartE2EP99
	NumChartFigures // the number of figures; not a figure
)

// HistoryPoint is the charted figures of one target at one time, each NaN
// when unknown.
type HistoryPoint struct {
	Time   time.Time
	Values [NumChartFigures]float64
}

// TargetHistory is one target's past, oldest point first. Target is the
// name the target's Readings carry, so the past joins the present.
type TargetHistory struct {
	Target string
	Points []HistoryPoint
}

// SourceStatus is a source's own health, apart from its targets': the server a
// source reads can fail while the targets behind it are fine.
type SourceStatus struct {
	// Source names the source (a URL without credentials).
	Source string
	// Problem is why the last refresh failed; empty when it worked.
	Problem string
	// Since is when the current run of failures began (zero when OK).
	Since time.Time
	// LastGood is the evaluation time of the newest data (zero if none).
	LastGood time.Time
	// Checked is the time of the newest attempt, good or not: while the
	// source fails, its data are Checked − LastGood old.
	Checked time.Time
	// Warnings are problems that did not fail the refresh.
	Warnings []string
}

// OK reports whether the last refresh worked.
func (s SourceStatus) OK() bool { return s.Problem == "" }
