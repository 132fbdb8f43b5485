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

// ChartOp is how a charted figure is computed from the figure it charts.
type ChartOp uint8

// The ways a charted figure is computed.
const (
	ChartGauge    ChartOp = iota // the scalar's value (summed over a replica's series, or averaged: Mean)
	ChartRate                    // the counter's increase per second over the analysis window
	ChartQuantile                // the histogram's quantile over the analysis window
)

// Chart declares one charted figure: the figure of a Series it is
// computed from, and how. A source that computes the charts itself (a
// Prometheus server) finds the families in Reads from it; the analysis
// keeps them in its Points.
type Chart struct {
	Op        ChartOp
	Scalar    Scalar    // the scalar of ChartGauge and ChartRate
	Histogram Histogram // the histogram of ChartQuantile
	Quantile  float64   // 0.5, 0.9, 0.99
	Mean      bool      // a gauge averaged over series, not summed
}

// Charts are THE charted figures, by ChartFigure: the one list of them.
var Charts = [NumChartFigures]Chart{
	ChartRunning:                   {Op: ChartGauge, Scalar: Running},
	ChartWaiting:                   {Op: ChartGauge, Scalar: Waiting},
	ChartKVCacheUsage:              {Op: ChartGauge, Scalar: KVCacheUsage, Mean: true},
	ChartRequestsPerSecond:         {Op: ChartRate, Scalar: FinishedRequests},
	ChartPromptTokensPerSecond:     {Op: ChartRate, Scalar: PromptTokens},
	ChartGenerationTokensPerSecond: {Op: ChartRate, Scalar: GenerationTokens},
	ChartPreemptionsPerSecond:      {Op: ChartRate, Scalar: Preemptions},
	ChartTTFTP50:                   {Op: ChartQuantile, Histogram: TTFT, Quantile: 0.5},
	ChartTTFTP90:                   {Op: ChartQuantile, Histogram: TTFT, Quantile: 0.9},
	ChartTTFTP99:                   {Op: ChartQuantile, Histogram: TTFT, Quantile: 0.99},
	ChartITLP50:                    {Op: ChartQuantile, Histogram: ITL, Quantile: 0.5},
	ChartITLP90:                    {Op: ChartQuantile, Histogram: ITL, Quantile: 0.9},
	ChartITLP99:                    {Op: ChartQuantile, Histogram: ITL, Quantile: 0.99},
	ChartE2EP50:                    {Op: ChartQuantile, Histogram: E2E, Quantile: 0.5},
	ChartE2EP90:                    {Op: ChartQuantile, Histogram: E2E, Quantile: 0.9},
	ChartE2EP99:                    {Op: ChartQuantile, Histogram: E2E, Quantile: 0.99},
}

// Figure is the figure of a Series the chart is computed from.
func (c Chart) Figure() Figure {
	if c.Op == ChartQuantile {
		return HistogramFigure(c.Histogram)
	}
	return ScalarFigure(c.Scalar)
}

// Sources returns the rows of Reads whose series feed the chart's figure,
// current names before legacy ones; a count by finished reason feeds the
// finished requests, after the rows that count them whatever the reason
// (as a page's reading derives them).
func (c Chart) Sources() []*Read {
	var current, legacy, byReason []*Read
	fig := c.Figure()
	for i := range Reads {
		r := &Reads[i]
		switch {
		case r.FigureSet().Has(fig) && r.Legacy:
			legacy = append(legacy, r)
		case r.FigureSet().Has(fig):
			current = append(current, r)
		case r.Kind == ReadFinished && !r.Legacy && c.Scalar == FinishedRequests && c.Op == ChartRate:
			byReason = append(byReason, r)
		}
	}
	return append(append(current, legacy...), byReason...)
}

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

// SourceStatus is a source's own health, apart from its targets': the
// server a fleet is read from can fail while the replicas behind it are
// fine. The source writes it; a report carries it as it is.
type SourceStatus struct {
	// Name names the source, e.g. "Prometheus http://prom:9090" (a URL
	// without credentials).
	Name string `json:"name"`
	// Problem is why the last refresh failed; empty when it worked.
	Problem string `json:"problem,omitempty"`
	// Since is when the current run of failures began (zero when OK).
	Since time.Time `json:"since,omitzero"`
	// LastGood is the evaluation time of the newest good data (zero if
	// none).
	LastGood time.Time `json:"last_good,omitzero"`
	// Checked is the time of the newest attempt, good or not.
	Checked time.Time `json:"checked,omitzero"`
	// DataAgeSeconds is how old the figures are while the source fails:
	// from LastGood to Checked (the report sets it). 0 when it works, or
	// has never answered.
	DataAgeSeconds float64 `json:"data_age_seconds,omitempty"`
	// Warnings are problems that did not fail the refresh, and notes on
	// the store's semantics where they differ from Prometheus's.
	Warnings []string `json:"warnings,omitempty"`
	// Store names the program that answers the source's queries
	// (Prometheus, VictoriaMetrics, Grafana Mimir), "" while unknown.
	Store string `json:"store,omitempty"`
	// StoreVersion is the store's version where it reports one.
	StoreVersion string `json:"store_version,omitempty"`
	// RefreshSeconds is the wall time of the newest refresh, and Queries
	// the requests it sent to the server: what reading the fleet costs.
	RefreshSeconds float64 `json:"refresh_seconds,omitempty"`
	Queries        int     `json:"queries,omitempty"`
	// Path is what the newest refresh read, where the source has a choice:
	// "rules" (the store's recording rules of vtop) or "raw" (the raw
	// series); "" for a source without one.
	Path string `json:"path,omitempty"`
}

// OK reports whether the last refresh worked.
func (s SourceStatus) OK() bool { return s.Problem == "" }

// Failing reports whether a source (nil: none) failed its last refresh.
func (s *SourceStatus) Failing() bool { return s != nil && s.Problem != "" }

// StoreLabel is the store as the source line names it: "VictoriaMetrics",
// "Prometheus 2.42.0", "" when unknown.
func (s *SourceStatus) StoreLabel() string {
	if s == nil || s.Store == "" {
		return ""
	}
	if s.StoreVersion == "" {
		return s.Store
	}
	return s.Store + " " + s.StoreVersion
}
