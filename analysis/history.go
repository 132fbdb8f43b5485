package analysis

import (
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// Point is one evaluation of one replica, kept for the sparklines and
// charts: small (float32, NaN for unknown), as the history holds one per
// replica per interval for many minutes.
type Point struct {
	Time  time.Time
	State State

	Running, Waiting, KVCacheUsage float32
	RequestsPerSecond              float32
	PromptTokensPerSecond          float32
	GenerationTokensPerSecond      float32
	PreemptionsPerSecond           float32
	TTFTP50, TTFTP90, TTFTP99      float32
	ITLP50, ITLP90, ITLP99         float32
	E2EP50, E2EP90, E2EP99         float32

	// PromptLengthBounds (shared, never modified) and PromptLengthDeltas
	// are one column of the prompt-length heatmap (promptLengthColumn).
	PromptLengthBounds []float64
	PromptLengthDeltas []float32
}

// charted maps each charted figure (catalogue.Charts) to its place in a
// Point and to the figure of a report it is: the one place they meet.
var charted = [catalogue.NumChartFigures]struct {
	point  func(*Point) *float32
	figure func(*Figures) Num
}{
	catalogue.ChartRunning:                   {func(p *Point) *float32 { return &p.Running }, func(f *Figures) Num { return f.Running }},
	catalogue.ChartWaiting:                   {func(p *Point) *float32 { return &p.Waiting }, func(f *Figures) Num { return f.Waiting }},
	catalogue.ChartKVCacheUsage:              {func(p *Point) *float32 { return &p.KVCacheUsage }, func(f *Figures) Num { return f.KVCacheUsage }},
	catalogue.ChartRequestsPerSecond:         {func(p *Point) *float32 { return &p.RequestsPerSecond }, func(f *Figures) Num { return f.RequestsPerSecond }},
	catalogue.ChartPromptTokensPerSecond:     {func(p *Point) *float32 { return &p.PromptTokensPerSecond }, func(f *Figures) Num { return f.PromptTokensPerSecond }},
	catalogue.ChartGenerationTokensPerSecond: {func(p *Point) *float32 { return &p.GenerationTokensPerSecond }, func(f *Figures) Num { return f.GenerationTokensPerSecond }},
	catalogue.ChartPreemptionsPerSecond:      {func(p *Point) *float32 { return &p.PreemptionsPerSecond }, func(f *Figures) Num { return f.PreemptionsPerSecond }},
	catalogue.ChartTTFTP50:                   {func(p *Point) *float32 { return &p.TTFTP50 }, func(f *Figures) Num { return f.TTFT.P50 }},
	catalogue.ChartTTFTP90:                   {func(p *Point) *float32 { return &p.TTFTP90 }, func(f *Figures) Num { return f.TTFT.P90 }},
	catalogue.ChartTTFTP99:                   {func(p *Point) *float32 { return &p.TTFTP99 }, func(f *Figures) Num { return f.TTFT.P99 }},
	catalogue.ChartITLP50:                    {func(p *Point) *float32 { return &p.ITLP50 }, func(f *Figures) Num { return f.ITL.P50 }},
	catalogue.ChartITLP90:                    {func(p *Point) *float32 { return &p.ITLP90 }, func(f *Figures) Num { return f.ITL.P90 }},
	catalogue.ChartITLP99:                    {func(p *Point) *float32 { return &p.ITLP99 }, func(f *Figures) Num { return f.ITL.P99 }},
	catalogue.ChartE2EP50:                    {func(p *Point) *float32 { return &p.E2EP50 }, func(f *Figures) Num { return f.E2E.P50 }},
	catalogue.ChartE2EP90:                    {func(p *Point) *float32 { return &p.E2EP90 }, func(f *Figures) Num { return f.E2E.P90 }},
	catalogue.ChartE2EP99:                    {func(p *Point) *float32 { return &p.E2EP99 }, func(f *Figures) Num { return f.E2E.P99 }},
}

// Chart returns the place of a charted figure in the point.
func (p *Point) Chart(c catalogue.ChartFigure) *float32 { return charted[c].point(p) }

// Chart returns the value of a charted figure.
func (f *Figures) Chart(c catalogue.ChartFigure) Num { return charted[c].figure(f) }

// Event is a state change or threshold crossing, kept in the event log after
// the condition clears so that a transient spike stays visible.
type Event struct {
	Time   time.Time `json:"time"`
	Target string    `json:"target"`
	State  State     `json:"state"`
	Text   string    `json:"text"` // the event with its numbers
}
