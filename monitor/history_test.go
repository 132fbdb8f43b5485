package monitor

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// historySource is a keepingSource that holds a past and fetches its own
// window (source).
type historySource struct {
	keepingSource
	history []catalogue.TargetHistory
	err     error

	mu      sync.Mutex
	calls   int
	windows []time.Duration
}

func (s *historySource) History(ctx context.Context, span time.Duration, points int) ([]catalogue.TargetHistory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return s.history, s.err
}

// source is s with what it can do: History and SetWindow.
func (s *historySource) source() Source {
	return Source{Feed: s, History: s.History, SetWindow: s.SetWindow}
}

func (s *historySource) SetWindow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows = append(s.windows, d)
}

// The monitor tells a source that fetches its window (SetWindow) the window at start and on every
// change, the default when the config leaves it at zero.
func TestMonitorTellsTheWindow(t *testing.T) {
	tests := []struct {
		start time.Duration
		set   []time.Duration
		want  []time.Duration
	}{
		{30 * time.Second, nil, []time.Duration{30 * time.Second}},
		{0, nil, []time.Duration{analysis.DefaultConfig().Window}},
		{time.Minute, []time.Duration{5 * time.Minute, 0, 10 * time.Second}, []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Second}},
	}
	for _, tt := range tests {
		src := &historySource{}
		m := New(src.source(), analysis.Config{Window: tt.start}, nil)
		for _, d := range tt.set {
			m.SetWindow(d)
		}
		if len(src.windows) != len(tt.want) {
			t.Errorf("start %v, set %v: told %v, want %v", tt.start, tt.set, src.windows, tt.want)
			continue
		}
		for i := range tt.want {
			if src.windows[i] != tt.want[i] {
				t.Errorf("start %v, set %v: told %v, want %v", tt.start, tt.set, src.windows, tt.want)
				break
			}
		}
	}
}

// Run loads the history once and hands it over as points by target; a
// failed load hands nothing.
func TestMonitorLoadsHistoryOnce(t *testing.T) {
	at := time.Unix(1e9, 0)
	var values [catalogue.NumChartFigures]float64
	for f := range values {
		values[f] = float64(f) + 1
	}
	values[catalogue.ChartTTFTP99] = math.NaN()
	tests := []struct {
		name  string
		err   error
		wantN int // deliveries
	}{
		{"history", nil, 1},
		{"failed", errors.New("refused"), 0},
	}
	for _, tt := range tests {
		src := &historySource{err: tt.err, history: []catalogue.TargetHistory{{Target: "a", Points: []catalogue.HistoryPoint{{Time: at, Values: values}}}}}
		got := make(chan map[string][]analysis.Point, 2)
		m := New(src.source(), analysis.DefaultConfig(), func(analysis.Report) error { return nil })
		m.SetHistory(15*time.Minute, 100, func(h map[string][]analysis.Point) { got <- h })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = m.Run(ctx); close(done) }()
		// The load runs beside the loop: wait for its result, or (when it
		// fails) for the call, before stopping.
		var h map[string][]analysis.Point
		if tt.wantN > 0 {
			select {
			case h = <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no history delivered", tt.name)
			}
		}
		for src.callCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-done
		if src.callCount() != 1 || len(got) != 0 {
			t.Errorf("%s: %d calls, %d more deliveries; want 1, 0", tt.name, src.callCount(), len(got))
			continue
		}
		if tt.wantN == 0 {
			continue
		}
		pts := h["a"]
		if len(pts) != 1 || !pts[0].Time.Equal(at) || pts[0].Running != 1 || pts[0].E2EP99 != float32(catalogue.NumChartFigures) || !math.IsNaN(float64(pts[0].TTFTP99)) {
			t.Errorf("%s: points %+v", tt.name, pts)
		}
	}
}

func (s *historySource) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Every figure lands in its own field of the point.
func TestPointsMapsEveryFigure(t *testing.T) {
	get := map[catalogue.ChartFigure]func(analysis.Point) float32{
		catalogue.ChartRunning: func(p analysis.Point) float32 { return p.Running }, catalogue.ChartWaiting: func(p analysis.Point) float32 { return p.Waiting },
		catalogue.ChartKVCacheUsage: func(p analysis.Point) float32 { return p.KVCacheUsage }, catalogue.ChartRequestsPerSecond: func(p analysis.Point) float32 { return p.RequestsPerSecond },
		catalogue.ChartPromptTokensPerSecond:     func(p analysis.Point) float32 { return p.PromptTokensPerSecond },
		catalogue.ChartGenerationTokensPerSecond: func(p analysis.Point) float32 { return p.GenerationTokensPerSecond },
		catalogue.ChartPreemptionsPerSecond:      func(p analysis.Point) float32 { return p.PreemptionsPerSecond },
		catalogue.ChartTTFTP50:                   func(p analysis.Point) float32 { return p.TTFTP50 }, catalogue.ChartTTFTP90: func(p analysis.Point) float32 { return p.TTFTP90 },
		catalogue.ChartTTFTP99: func(p analysis.Point) float32 { return p.TTFTP99 }, catalogue.ChartITLP50: func(p analysis.Point) float32 { return p.ITLP50 },
		catalogue.ChartITLP90: func(p analysis.Point) float32 { return p.ITLP90 }, catalogue.ChartITLP99: func(p analysis.Point) float32 { return p.ITLP99 },
		catalogue.ChartE2EP50: func(p analysis.Point) float32 { return p.E2EP50 }, catalogue.ChartE2EP90: func(p analysis.Point) float32 { return p.E2EP90 },
		catalogue.ChartE2EP99: func(p analysis.Point) float32 { return p.E2EP99 },
	}
	if len(get) != int(catalogue.NumChartFigures) {
		t.Fatalf("test covers %d of %d figures", len(get), catalogue.NumChartFigures)
	}
	for f := range catalogue.NumChartFigures {
		var hp catalogue.HistoryPoint
		hp.Values[f] = 42
		p := Points([]catalogue.TargetHistory{{Target: "t", Points: []catalogue.HistoryPoint{hp}}})["t"][0]
		for g, read := range get {
			want := float32(0)
			if g == f {
				want = 42
			}
			if read(p) != want {
				t.Errorf("figure %d set: field of figure %d reads %v, want %v", f, g, read(p), want)
			}
		}
	}
}

// evaluatedSource is a historySource whose readings belong to an
// evaluation time that Now has already moved past, as when a refresh
// lands between two calls.
type evaluatedSource struct {
	historySource
	at time.Time
}

func (s *evaluatedSource) ReadingsAt(dst []catalogue.Readings) ([]catalogue.Readings, time.Time) {
	return s.Readings(dst), s.at
}

func (s *evaluatedSource) Now() time.Time { return s.at.Add(5 * time.Second) }

// A report of a source whose readings carry their time (ReadingsAt) is evaluated at the time its readings
// belong to, not at the source's clock read apart from them: once and
// live.
func TestReportAtTheReadingsTime(t *testing.T) {
	at := time.Unix(1e9, 0)
	evaluated := &evaluatedSource{at: at}
	src := Source{Feed: evaluated, ReadingsAt: evaluated.ReadingsAt, SetWindow: evaluated.SetWindow}
	r, err := Once(context.Background(), src, analysis.Config{Window: 30 * time.Second}, 0)
	if err != nil || !r.Time.Equal(at) {
		t.Errorf("once: report at %v (error %v), want %v", r.Time, err, at)
	}
	live := make(chan analysis.Report, 1)
	m := New(src, analysis.Config{Window: 30 * time.Second}, func(r analysis.Report) error {
		select {
		case live <- r:
		default:
		}
		return errors.New("one report is enough")
	})
	_ = m.Run(context.Background())
	if r := <-live; !r.Time.Equal(at) {
		t.Errorf("live: report at %v, want %v", r.Time, at)
	}
}
