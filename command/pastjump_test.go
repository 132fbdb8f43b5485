package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/replay"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/ui"
)

// pastRecording writes a stretch of the past as the watch of
// --from/--to writes it (pastWriter): replicas scraped every second by
// "Prometheus" for span, a report every interval over window.
func pastRecording(tb testing.TB, path string, replicas int, span, interval, window time.Duration) {
	tb.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: replicas, Scenario: sim.Spike, Seed: 3})
	if err != nil {
		tb.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	start := time.Unix(1_800_000_000, 0)
	var targets []scrape.Target
	for i := range replicas {
		name := fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250+1)
		targets = append(targets, scrape.Target{Name: name, URL: "http://prom#vllm/" + name})
	}
	p := pastStretch{window: window, interval: interval}
	p.every(start.Add(window+2*interval), start.Add(span))
	rec, err := record.Create(path, record.Options{Interval: interval, Targets: targets, Config: analysis.DefaultConfig(), Start: p.start()})
	if err != nil {
		tb.Fatal(err)
	}
	w := newPastWriter(rec, targets, p)
	for at := start; !at.After(start.Add(span)); at = at.Add(time.Second) {
		fleet.Advance(time.Second)
		var pages []promsource.PastPage
		for i, r := range fleet.Replicas() {
			body, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
			if err != nil {
				tb.Fatal(err)
			}
			pages = append(pages, promsource.PastPage{Target: i, Time: at, Body: body})
		}
		if err := w.chunk(pages); err != nil {
			tb.Fatal(err)
		}
	}
	_ = w.through(p.end())
	if err := rec.Close(); err != nil {
		tb.Fatal(err)
	}
}

// pastJumpBenchEnv runs TestPastJumpBenchmark: VTOP_PAST_JUMP_BENCH=1
// (it takes minutes to make its data); VTOP_PAST_DIR keeps the data in
// that folder for the next run.
const pastJumpBenchEnv = "VTOP_PAST_JUMP_BENCH"

// maxJump is the longest a jump may take at 100 replicas once the
// analysis ahead has passed the position.
const maxJump = 2 * time.Second

// TestPastJumpBenchmark times the jumps of the screen over ten minutes of
// the past of 100 replicas scraped every second, a report every 5 s over
// 30 s (--from/--to's defaults), on the screen's pipeline without a
// terminal: the replay source, the monitor and the replay's output, from
// the key's control to the report at the new position (and the charts
// before it). It logs each jump's wall and CPU time, and checks the goal
// once the analysis ahead has computed the stretch.
func TestPastJumpBenchmark(t *testing.T) {
	if os.Getenv(pastJumpBenchEnv) == "" {
		t.Skip("benchmark of the past's jumps; set " + pastJumpBenchEnv + "=1 to run it (minutes)")
	}
	dir := os.Getenv("VTOP_PAST_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "jumps-100x10m.vtrec")
	if _, err := os.Stat(path); err != nil {
		began := time.Now()
		pastRecording(t, path, 100, 10*time.Minute, 5*time.Second, 30*time.Second)
		t.Logf("recorded in %s", time.Since(began).Round(time.Second))
	}
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	cfg := replay.Config(rec)
	src, err := replay.New(rec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.SetPaused(true)
	msgs := make(chan tea.Msg, 100)
	pl := player{src}
	mon := monitor.New(src.Paced(), cfg, replayOutput(rec.Ticks(), pl, func(m tea.Msg) { msgs <- m }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	computed := make(chan struct{})
	n := 0
	src.OnReport(func(*analysis.Report) {
		if n++; n == len(rec.Ticks()) {
			close(computed)
		}
	})
	began := time.Now()
	go func() { _ = mon.Run(ctx) }()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// The screen as Bubble Tea runs it: each message through Update,
	// then View.
	var screen tea.Model = ui.New(ui.Options{Interval: rec.Header.Interval, Window: rec.Ticks()[0].Window, Player: pl, Judgement: cfg})
	screen, _ = screen.Update(tea.WindowSizeMsg{Width: 220, Height: 50})
	var viewTime time.Duration
	show := func(m tea.Msg) {
		screen, _ = screen.Update(m)
		began := time.Now()
		_ = screen.View()
		viewTime += time.Since(began)
	}
	wait := func(what string, move func()) {
		began := time.Now()
		cpu0 := cpu()
		viewTime = 0
		move()
		at := pl.Position()
		var report, history time.Duration
		for report == 0 || history == 0 {
			select {
			case m := <-msgs:
				show(m)
				switch m := m.(type) {
				case ui.ReportMsg:
					if m.Report.Time.Equal(at) {
						report = time.Since(began)
					}
				case ui.HistoryMsg:
					if m.At.Equal(at) {
						history = time.Since(began)
					}
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("%s: nothing", what)
			}
			if report != 0 && at.Equal(rec.Ticks()[0].Time) {
				break
			}
		}
		t.Logf("%-8s to %s: report %6.2fs, charts %6.2fs, CPU %6.2fs (frames %5.2fs)", what, at.Format("15:04:05"), report.Seconds(), history.Seconds(), (cpu() - cpu0).Seconds(), viewTime.Seconds())
		if report > maxJump && what != "start" {
			t.Errorf("%s: the report came after %s, over the %s goal", what, report.Round(10*time.Millisecond), maxJump)
		}
	}
	wait("start", func() {})
	<-computed
	t.Logf("all %d reports computed ahead in %s", n, time.Since(began).Round(10*time.Millisecond))
	wait("end", src.End)
	wait("back 1", func() { src.StepBy(-1) })
	wait("back 30", func() { src.StepBy(-30) })
	wait("home", src.Home)
	wait("end", src.End)
	wait("home", src.Home)
	wait("n", func() { src.NextChange("") })
	wait("n", func() { src.NextChange("") })
	wait("N", func() { src.PrevChange("") })
}
