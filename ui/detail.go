package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	"github.com/charmbracelet/lipgloss"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// A chart's height, axes included (a graph of eight rows), and how many
// steps its Y axis is labelled at.
const (
	chartHeight = 10
	yTicks      = 4
)

// detailScreen is one replica in depth: its reasons, charts, prompt-length
// heatmap and breakdowns, scrolling.
type detailScreen struct {
	pager
	theme    *Theme
	loc      *time.Location
	gpuLines []string // the replica's GPUs, drawn by the root before render
}

func newDetailScreen(theme *Theme, loc *time.Location) detailScreen {
	return detailScreen{pager: newPager(theme), theme: theme, loc: loc}
}

// render builds the view of a replica (nil: none) from its history points.
func (d *detailScreen) render(r *analysis.ReplicaReport, pts []analysis.Point, now time.Time) {
	th, w := d.theme, d.viewport.Width
	if r == nil {
		d.viewport.SetContent("no replica selected")
		return
	}
	sections := [][]string{d.summary(r, now, w), d.gpuLines, d.charts(pts, w), promptHeatmap(th, pts, w),
		sideBySide(w, finishBreakdown(th, r), phaseBreakdown(th, r)),
		sideBySide(w, cacheFigures(th, r), littleFigures(th, r)), engineFigures(th, r)}
	if len(r.Engines) > 1 {
		sections = append(sections, engineTable(th, r))
	}
	var lines []string
	for _, sec := range sections {
		if len(sec) > 0 && len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, sec...)
	}
	d.viewport.SetContent(strings.Join(fitLines(lines, w), "\n"))
}

// summary is the title, every reason, the action, the error and the
// warnings, wrapped in full: the detail view is where nothing is cut.
func (d *detailScreen) summary(r *analysis.ReplicaReport, now time.Time, w int) []string {
	th := d.theme
	lines := packSegments(d.titleSegments(r), w, "  ")
	add := func(s string) { lines = append(lines, wrapLines(s, w)...) }
	switch {
	case r.State == analysis.StateDown && r.Error != "":
		add(th.warn.Render(downFor(r, now, d.loc)+": ") + r.Error)
	case r.Late:
		add(th.warn.Render(analysis.LateNote(r)))
	case r.Error != "":
		add(th.warn.Render("error: ") + r.Error)
	}
	for _, reason := range r.Reasons {
		add("• " + reason)
	}
	if r.Action != "" {
		add(th.action.Render("→ " + r.Action))
	}
	for _, warning := range r.Warnings {
		add(th.warn.Render("warning: ") + warning)
	}
	return append(lines, d.summaryFigures(r, now, w)...)
}

// titleSegments are the detail view's title, what marks the replica, the keys.
func (d *detailScreen) titleSegments(r *analysis.ReplicaReport) []string {
	th := d.theme
	title := []string{th.title.Render(r.Target), orNA(engineName(r)), th.dim.Render(r.Model), th.badge(r.State)}
	if n := instancesText(r); n != "" {
		title = slices.Insert(title, 1, th.warn.Render(n))
	}
	if r.SourceStale {
		title = append(title, th.warn.Render("stale"))
	}
	if r.Fault != "" {
		title = append(title, th.alert.Render(r.Fault))
	}
	if r.Late {
		title = append(title, th.warn.Render("late"))
	}
	if r.Restarted {
		title = append(title, th.warn.Render("restarted "+r.RestartedAt.In(d.loc).Format(human.Clock)))
	}
	switch {
	case r.State == analysis.StateDown && r.LastGood.IsZero():
		// Not warming up: nothing is coming until it answers.
		title = append(title, th.warn.Render(noGoodScrape))
	case r.WarmingUp && r.State != analysis.StateDown:
		title = append(title, th.warn.Render("warming up"))
	}
	return append(title, th.dim.Render(" (esc back, ↑/↓ scroll)"))
}

// summaryFigures are the replica's load figures; a DOWN one's dated and faint.
func (d *detailScreen) summaryFigures(r *analysis.ReplicaReport, now time.Time, w int) []string {
	th := d.theme
	run, wait, kv := loadFigures(r)
	figures := packSegments([]string{run, wait, kv, fmtRate(r.RequestsPerSecond) + " req/s", "prompt " + fmtRate(r.PromptTokensPerSecond) + " tok/s",
		"gen " + fmtRate(r.GenerationTokensPerSecond) + " tok/s", "preempt " + fmtRate(r.PreemptionsPerSecond) + "/s",
		"success " + r.SuccessRate.Percent()}, w, "  ")
	if r.State != analysis.StateDown {
		return figures
	}
	for i, f := range figures {
		figures[i] = th.dim.Render(f)
	}
	return append([]string{th.dim.Render(lastSeen(r, now, d.loc) + ":")}, figures...)
}

// chartSeries is one line of a chart. Its mark ends the line when there
// is no colour to tell lines apart.
type chartSeries struct {
	name string
	mark rune
	get  func(analysis.Point) float32
}

// chartSpec is one time-series chart of the detail view.
type chartSpec struct {
	title  string
	format func(analysis.Num) string
	series []chartSeries
	yMax   float64 // fixed top of the Y axis; 0 scales to the data
	counts bool    // whole numbers: steps of at least 1
}

var detailCharts = []chartSpec{
	{title: "running & waiting", format: fmtCount, counts: true, series: []chartSeries{
		{"running", 'r', func(p analysis.Point) float32 { return p.Running }},
		{"waiting", 'w', func(p analysis.Point) float32 { return p.Waiting }}}},
	{title: "KV cache", format: analysis.Num.Percent, yMax: 1, series: []chartSeries{
		{"KV", 'k', func(p analysis.Point) float32 { return p.KVCacheUsage }}}},
	{title: "tokens/s", format: fmtRate, series: []chartSeries{
		{"prompt", 'p', func(p analysis.Point) float32 { return p.PromptTokensPerSecond }},
		{"gen", 'g', func(p analysis.Point) float32 { return p.GenerationTokensPerSecond }}}},
	latencyChart("TTFT", func(p analysis.Point) (float32, float32) { return p.TTFTP50, p.TTFTP99 }),
	latencyChart("ITL", func(p analysis.Point) (float32, float32) { return p.ITLP50, p.ITLP99 }),
	latencyChart("e2e", func(p analysis.Point) (float32, float32) { return p.E2EP50, p.E2EP99 }),
}

// latencyChart is a chart of a latency's p50 and p99.
func latencyChart(title string, get func(analysis.Point) (p50, p99 float32)) chartSpec {
	p50 := func(p analysis.Point) float32 { v, _ := get(p); return v }
	p99 := func(p analysis.Point) float32 { _, v := get(p); return v }
	return chartSpec{title: title, format: fmtSeconds, series: []chartSeries{{"p50", '5', p50}, {"p99", '9', p99}}}
}

// charts lays the charts out two to a row when the screen is wide.
func (d *detailScreen) charts(pts []analysis.Point, w int) []string {
	perRow := 1
	if w >= 100 {
		perRow = 2
	}
	chartW := w/perRow - 1
	var lines []string
	for i := 0; i < len(detailCharts); i += perRow {
		var row []string
		for j := i; j < min(i+perRow, len(detailCharts)); j++ {
			if j > i {
				row = append(row, " ")
			}
			row = append(row, d.timeChart(detailCharts[j], pts, chartW))
		}
		lines = append(lines, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, row...), "\n")...)
	}
	return lines
}

// timeChart draws one chart with ntcharts, rebuilt from our own history
// with explicit ranges: its own buffer is unbounded and its range only grows.
func (d *detailScreen) timeChart(spec chartSpec, pts []analysis.Point, w int) string {
	th := d.theme
	legend := th.title.Render(spec.title)
	if len(pts) < 2 {
		return legend + "\n" + th.dim.Render("collecting history…") + strings.Repeat("\n", chartHeight-1)
	}
	from, to := pts[0].Time, pts[len(pts)-1].Time
	if to.Sub(from) < 10*time.Second {
		from = to.Add(-10 * time.Second)
	}
	yMax := axisMax(spec, pts)
	pts = downsample(pts, 2*w) // a braille cell is two dots wide: more points draw nothing new
	chart := d.newTimeChart(spec, from, to, yMax, w)
	var ends []canvas.Float64Point
	for i, s := range spec.series {
		last, end := d.plotSeries(&chart, i, s, pts, yMax)
		glyph := "⣿"
		if !th.colour() {
			glyph = string(s.mark)
		}
		legend += "  " + d.theme.seriesStyle(i).Render(glyph+" "+s.name) + " " + spec.format(last)
		ends = append(ends, end)
	}
	chart.DrawBrailleAll()
	if !th.colour() && len(spec.series) > 1 {
		// Without colour the lines look alike: each ends in its mark.
		for i, s := range spec.series {
			if !math.IsNaN(ends[i].X) {
				chart.DrawRuneWithStyle(ends[i], s.mark, d.theme.seriesStyle(i))
			}
		}
	}
	return legend + "\n" + chart.View()
}

// newTimeChart is an empty chart w wide over [from, to] and [0, yMax].
func (d *detailScreen) newTimeChart(spec chartSpec, from, to time.Time, yMax float64, w int) timeserieslinechart.Model {
	loc := d.loc
	return timeserieslinechart.New(w, chartHeight,
		timeserieslinechart.WithXYSteps(2, (chartHeight-2)/yTicks),
		timeserieslinechart.WithTimeRange(from, to),
		timeserieslinechart.WithYRange(0, yMax),
		timeserieslinechart.WithXLabelFormatter(func(_ int, v float64) string {
			return time.Unix(int64(v), 0).In(loc).Format(human.Clock)
		}),
		timeserieslinechart.WithYLabelFormatter(func(_ int, v float64) string {
			// ASCII: ntcharts measures labels in bytes.
			return strings.ReplaceAll(spec.format(analysis.Num(v)), "µs", "us")
		}),
	)
}

// plotSeries pushes series s, the i-th of the chart; it returns its last
// known value and the point its line ends at (X NaN when none is known).
func (d *detailScreen) plotSeries(chart *timeserieslinechart.Model, i int, s chartSeries, pts []analysis.Point, yMax float64) (last analysis.Num, end canvas.Float64Point) {
	last, end = analysis.NA, canvas.Float64Point{X: math.NaN()}
	// Each run of known points is a data set of its own (name, "" between
	// runs), since the chart joins a data set's points: an unknown
	// stretch is a gap, never a fake 0 nor a line drawn across it.
	segment, name := 0, ""
	for _, p := range pts {
		v := float64(s.get(p))
		if !finite(v) {
			if name != "" {
				segment, name = segment+1, ""
			}
			continue
		}
		if name == "" {
			name = fmt.Sprintf("%s·%d", s.name, segment)
			chart.SetDataSetStyle(name, d.theme.seriesStyle(i))
		}
		// Clamp into the view: far-off points make the chart allocate
		// huge line segments.
		y := min(max(v, 0), yMax)
		chart.PushDataSet(name, timeserieslinechart.TimePoint{Time: p.Time, Value: y})
		last, end = analysis.Num(v), canvas.Float64Point{X: float64(p.Time.Unix()), Y: y}
	}
	return last, end
}

// axisMax is the top of a chart's Y axis: yTicks round steps (niceStep)
// above the largest value shown, or the spec's fixed top.
func axisMax(spec chartSpec, pts []analysis.Point) float64 {
	if spec.yMax > 0 {
		return spec.yMax
	}
	top := 0.0
	for _, s := range spec.series {
		for _, p := range pts {
			if v := float64(s.get(p)); finite(v) && v > top {
				top = v
			}
		}
	}
	return niceStep(top*1.05/yTicks, spec.counts) * yTicks
}

// downsample keeps at most n points, evenly spaced, always the newest.
func downsample(pts []analysis.Point, n int) []analysis.Point {
	if n <= 0 || len(pts) <= n {
		return pts
	}
	out := make([]analysis.Point, 0, n)
	step := float64(len(pts)-1) / float64(n-1)
	for i := 0; i < n; i++ {
		out = append(out, pts[int(math.Round(float64(i)*step))])
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// niceStep rounds an axis step up to 1, 2, 2.5 or 5 times a power of ten;
// for counts, to a whole number (no 2.5 below 10).
func niceStep(v float64, counts bool) float64 {
	if v <= 0 || !finite(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		step := f * p
		if counts && (step < 1 || step != math.Trunc(step)) {
			continue
		}
		if v <= step {
			return step
		}
	}
	return 10 * p
}

// heatShades are the levels of the prompt-length heatmap.
var heatShades = []rune(" ░▒▓█")

// promptHeatmap draws the prompt-length distribution over time: a row per
// bucket (longest on top), a column per point, shaded by requests finished.
func promptHeatmap(th *Theme, pts []analysis.Point, w int) []string {
	title := th.title.Render("prompt length over time") + th.dim.Render("  (requests finished per bucket: ░ few → █ most)")
	var bounds []float64
	for i := len(pts) - 1; i >= 0; i-- {
		if pts[i].PromptLengthBounds != nil {
			bounds = pts[i].PromptLengthBounds
			break
		}
	}
	if bounds == nil {
		return []string{title, th.dim.Render("n/a: the server does not export vllm:request_prompt_tokens")}
	}
	const labelW = 8
	cols := min(len(pts), max(w-labelW-1, 1))
	pts = pts[len(pts)-cols:]
	peak, lo, hi := heatRange(pts, len(bounds))
	if peak == 0 {
		return []string{title, th.dim.Render("no requests finished in the history yet")}
	}
	lines := []string{title}
	for b := hi; b >= lo; b-- {
		var row strings.Builder
		row.WriteString(fmt.Sprintf("%*s ", labelW, bucketLabel(bounds, b)))
		for _, p := range pts {
			row.WriteRune(heatRune(cellValue(p, b, len(bounds)), peak))
		}
		lines = append(lines, row.String())
	}
	return lines
}

// heatRange finds the largest cell and the lowest and highest buckets that
// held a request: empty rows are not drawn.
func heatRange(pts []analysis.Point, n int) (peak float64, lo, hi int) {
	lo, hi = n-1, 0
	for _, p := range pts {
		for b := 0; b < n; b++ {
			if v := cellValue(p, b, n); v > 0 {
				peak = max(peak, v)
				lo, hi = min(lo, b), max(hi, b)
			}
		}
	}
	return peak, lo, hi
}

// cellValue is a point's count in bucket b; 0 when its buckets differ.
func cellValue(p analysis.Point, b, n int) float64 {
	if len(p.PromptLengthDeltas) != n {
		return 0
	}
	v := float64(p.PromptLengthDeltas[b])
	if !finite(v) || v < 0 {
		return 0
	}
	return v
}

func heatRune(v, peak float64) rune {
	if v <= 0 {
		return heatShades[0]
	}
	i := int(math.Ceil(v / peak * float64(len(heatShades)-1)))
	return heatShades[min(max(i, 1), len(heatShades)-1)]
}

func bucketLabel(bounds []float64, b int) string {
	if math.IsInf(bounds[b], 1) {
		if b > 0 {
			return ">" + compactNum(bounds[b-1])
		}
		return "all"
	}
	return "≤" + compactNum(bounds[b])
}

func compactNum(v float64) string {
	if v >= 1000 {
		return siSuffix(v)
	}
	return fmt.Sprintf("%g", v)
}

// finishBreakdown is the finish-reason split with bars.
func finishBreakdown(th *Theme, r *analysis.ReplicaReport) []string {
	f := r.FinishedPerSecond
	rates := []analysis.Num{f.Stop, f.Length, f.Abort, f.Error, f.Repetition}
	total := 0.0
	for _, v := range rates {
		if v.Known() {
			total += v.Float()
		}
	}
	lines := []string{th.title.Render("finish reasons")}
	const barW = 20
	for i, v := range rates {
		share := analysis.NA
		if v.Known() && total > 0 {
			share = analysis.Num(v.Float() / total)
		}
		bar := ""
		if share.Known() {
			bar = strings.Repeat("█", int(math.Round(share.Float()*barW)))
		}
		lines = append(lines, fmt.Sprintf("%-10s %7s/s %5s %s", catalogue.FinishReasonNames[i], fmtRate(v), share.Percent(), bar))
	}
	return lines
}

// phaseBreakdown is where the time of a request goes.
func phaseBreakdown(th *Theme, r *analysis.ReplicaReport) []string {
	lines := []string{th.title.Render("phases") + fmt.Sprintf("%13s %8s %8s %8s", "mean", "p50", "p90", "p99")}
	for _, row := range []struct {
		name string
		q    analysis.Quantiles
	}{{"queue", r.Queue}, {"prefill", r.Prefill}, {"decode", r.Decode}, {"TTFT", r.TTFT}, {"ITL", r.ITL}, {"e2e", r.E2E}} {
		lines = append(lines, fmt.Sprintf("%-10s %8s %8s %8s %8s", row.name,
			fmtSeconds(row.q.Mean), fmtQuantile(row.q, p50), fmtQuantile(row.q, p90), fmtQuantile(row.q, p99)))
	}
	return lines
}

// cacheFigures are the prefix cache, speculative decoding and process figures.
func cacheFigures(th *Theme, r *analysis.ReplicaReport) []string {
	return []string{
		th.title.Render("caches and process"),
		"prefix cache hit rate   " + r.PrefixCacheHitRate.Percent(),
		"spec decode acceptance  " + r.SpecDecodeAcceptanceRate.Percent(),
		"accepted per draft      " + fmtRate(r.SpecDecodeAcceptedPerDraft),
		"KV capacity             " + fmtCount(r.KVCapacityTokens) + " tokens",
		"max_num_seqs KV holds   " + fmtCount(r.MaxSeqsKVHolds),
		"RSS " + fmtBytes(r.ProcessRSSBytes) + "   GC " + fmtRate(r.GCPerSecond) + "/s",
	}
}

// littleFigures are the Little's-law and request-shape figures.
func littleFigures(th *Theme, r *analysis.ReplicaReport) []string {
	return []string{
		th.title.Render("flow (Little's law)"),
		"arrivals          " + fmtRate(r.ArrivalsPerSecond) + "/s",
		"efficiency        " + r.Efficiency.Percent(),
		"waiting growth    " + fmtRate(r.WaitingGrowth) + "/s",
		"time running      " + fmtSeconds(r.TimeRunningSeconds),
		"prompt/gen tokens " + fmtCount(r.MeanPromptTokens) + " / " + fmtCount(r.MeanGenerationTokens) + "  (I/O " + fmtRate(r.IORatio) + ")",
		"goodput           " + r.Goodput.Percent(),
	}
}

// engineTable splits a data-parallel replica by engine.
func engineTable(th *Theme, r *analysis.ReplicaReport) []string {
	lines := []string{th.title.Render("engines"),
		th.headerRow.Render(fmt.Sprintf("%-8s %6s %6s %6s %7s %9s %9s %8s", "engine", "run", "wait", "KV%", "req/s", "gen tok/s", "TTFT p99", "ITL p99"))}
	for _, e := range r.Engines {
		lines = append(lines, fmt.Sprintf("%-8s %6s %6s %6s %7s %9s %9s %8s", e.Engine,
			fmtCount(e.Running), fmtCount(e.Waiting), e.KVCacheUsage.Percent(), fmtRate(e.RequestsPerSecond),
			fmtRate(e.GenerationTokensPerSecond), fmtQuantile(e.TTFT, p99), fmtQuantile(e.ITL, p99)))
	}
	return lines
}

// sideBySide puts two blocks side by side when the width allows, else one
// under the other.
func sideBySide(w int, left, right []string) []string {
	if w < 100 {
		return append(append(left, ""), right...)
	}
	half := w / 2
	out := make([]string, max(len(left), len(right)))
	for i := range out {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = fitWidth(l, half) + r
	}
	return out
}
