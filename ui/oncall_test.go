package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
)

// screens draws the model's grid, table and detail view (of the selected
// replica), each stripped of styling; the detail view on a screen tall
// enough to hold all of it.
func screens(m Model) map[string]string {
	return map[string]string{
		"grid":   ansi.Strip(m.View()),
		"table":  ansi.Strip(press(m, "t").View()),
		"detail": ansi.Strip(press(sized(m, m.width, 150), "enter").View()),
	}
}

// A quantile the buckets only bound is drawn as the bound: "<300ms" in
// the first bucket (the value is interpolated from 0), ">80s" beyond the
// last finite bound (the value is that bound, not the latency), on every
// screen and in the header's worst TTFT; a quantile inside a bucket is
// drawn as it is.
func TestBoundedQuantilesAreDrawnAsBounds(t *testing.T) {
	r := replica("gpu-c:8000", analysis.StateFull)
	r.TTFT.P50, r.TTFT.P50Bucket = 0.15, analysis.QuantileBucket{Lower: 0, Upper: 0.3}
	r.TTFT.P99, r.TTFT.P99Bucket = 80, analysis.QuantileBucket{Lower: 80, Upper: analysis.Num(math.Inf(1))}
	r.ITL.P99, r.ITL.P99Bucket = 0.041, analysis.QuantileBucket{Lower: 0.04, Upper: 0.05}
	r.Point = pointOf(r, t0)
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, r)})
	tests := []struct {
		screen string
		want   []string
	}{
		{"grid", []string{"TTFT <300ms/>80s", "worst TTFT p99 >80s", "ITL 26ms/41ms"}},
		{"table", []string{">80s", "41ms"}},
		{"detail", []string{"<300ms", ">80s"}},
	}
	got := screens(m)
	for _, tt := range tests {
		for _, want := range tt.want {
			if !strings.Contains(got[tt.screen], want) {
				t.Errorf("%s lacks %q:\n%s", tt.screen, want, got[tt.screen])
			}
		}
		if strings.Contains(got[tt.screen], "80.0s") || strings.Contains(got[tt.screen], "150ms") {
			t.Errorf("%s draws a bounded quantile as a value:\n%s", tt.screen, got[tt.screen])
		}
	}
}

// A quantile in a bucket too wide to place it is drawn as the bucket's
// bounds on every screen, never as the interpolated value: vLLM's
// (160 s, 640 s] bucket once showed "TTFT p50 400s" beside "e2e p50 184s".
func TestWideBucketQuantilesAreDrawnAsBounds(t *testing.T) {
	r := replica("gpu-c:8000", analysis.StateFull)
	r.TTFT.P50, r.TTFT.P50Bucket = 400, analysis.QuantileBucket{Lower: 160, Upper: 640}
	r.TTFT.P99, r.TTFT.P99Bucket = 628, analysis.QuantileBucket{Lower: 160, Upper: 640}
	r.Point = pointOf(r, t0)
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, r)})
	got := screens(m)
	for _, screen := range []string{"grid", "table", "detail"} {
		if !strings.Contains(got[screen], "160s–640s") {
			t.Errorf("%s lacks the bucket 160s–640s:\n%s", screen, got[screen])
		}
		if strings.Contains(got[screen], "400s") || strings.Contains(got[screen], "628s") {
			t.Errorf("%s draws a quantile of a wide bucket as a value:\n%s", screen, got[screen])
		}
	}
}

// A replica that restarted in the window says when on its pane and in the
// detail view, the table marks it, and the header counts the restarts.
func TestRestartIsShown(t *testing.T) {
	r := replica("gpu-a:8000", analysis.StateHealthy)
	r.Restarted, r.RestartedAt = true, t0.Add(-75*time.Second)
	rep := report(t0, r, replica("gpu-b:8000", analysis.StateHealthy))
	rep.Fleet.Restarted = 1
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := send(newModel(size[0], size[1]), ReportMsg{Report: rep})
		got := screens(m)
		for screen, want := range map[string]string{"grid": "restarted 13:59:50", "table": "RESTARTED", "detail": "restarted 13:59:50"} {
			if !strings.Contains(got[screen], want) {
				t.Errorf("%dx%d: %s lacks %q:\n%s", size[0], size[1], screen, want, got[screen])
			}
		}
		if head := ansi.Strip(strings.Join(m.header, "\n")); !strings.Contains(head, "restarted 1") {
			t.Errorf("%dx%d: the header does not count the restart:\n%s", size[0], size[1], head)
		}
	}
}

// After ] the window is longer than the readings vtop holds: the header
// says how much of it the figures cover until the readings fill it. The
// coverage is the time the readings span, not their count times the
// interval: on a loaded host fewer scrapes fit in the window, which they
// cover all the same.
func TestWindowCoverage(t *testing.T) {
	tests := []struct {
		window  time.Duration
		samples int     // good scrapes in the window
		span    float64 // the seconds they span
		want    string
		notWant string
	}{
		{5 * time.Minute, 101, 100, "window 5m (1m40s so far)", ""},
		{5 * time.Minute, 301, 300, "window 5m", "so far"},
		{30 * time.Second, 31, 30, "window 30s", "so far"},
		{30 * time.Second, 12, 11, "window 30s (11s so far)", ""},
		{30 * time.Second, 25, 29.4, "window 30s", "so far"}, // scrapes 1.2 s apart
		{30 * time.Second, 12, 16.5, "window 30s (16s so far)", ""},
	}
	for _, tt := range tests {
		opts := testOptions()
		opts.Window = tt.window
		a, b := replica("gpu-a:8000", analysis.StateHealthy), replica("gpu-b:8000", analysis.StateHealthy)
		a.Samples, b.Samples = tt.samples, tt.samples-5
		a.CoveredSeconds, b.CoveredSeconds = tt.span, tt.span-5
		rep := report(t0, a, b)
		rep.WindowSeconds = tt.window.Seconds()
		m := send(sized(New(opts), 120, 40), ReportMsg{Report: rep})
		head := ansi.Strip(strings.Join(m.header, "\n"))
		if !strings.Contains(head, tt.want) || (tt.notWant != "" && strings.Contains(head, tt.notWant)) {
			t.Errorf("window %s, %d samples: header %q, want %q", tt.window, tt.samples, head, tt.want)
		}
	}
}

// A target with no good scrape yet is not "warming up": it is down since
// start, and every screen says there has been no successful scrape, not
// that it never answered: a server that answers with an error status
// (HTTP 500) did answer.
func TestNoSuccessfulScrapeYet(t *testing.T) {
	for _, err := range []string{"connection refused", "HTTP 500 Internal Server Error"} {
		never := replica("gpu-x:8000", analysis.StateDown)
		never.WarmingUp, never.LastGood, never.Error = true, time.Time{}, err
		// Wide enough for the table's error column to hold the words
		// before the error; a narrow one keeps the error's end.
		m := send(newModel(200, 60), ReportMsg{Report: report(t0, never)})
		for screen, text := range screens(m) {
			if strings.Contains(text, "warming up") {
				t.Errorf("%s: %s says warming up for a target with no good scrape:\n%s", err, screen, text)
			}
			if !strings.Contains(text, "no successful scrape yet") || strings.Contains(text, "never answered") {
				t.Errorf("%s: %s does not say \"no successful scrape yet\" (or says \"never answered\"):\n%s", err, screen, text)
			}
		}
	}
}

// A DOWN replica says how long it has been down and since when, from the
// start of its run of failures, on the grid and in the detail view.
func TestDownForSince(t *testing.T) {
	down := replica("gpu-g:8000", analysis.StateDown)
	down.DownSince = t0.Add(-101 * time.Second)
	m := send(newModel(120, 40), ReportMsg{Report: report(t0, down)})
	got := screens(m)
	for _, screen := range []string{"grid", "detail"} {
		if !strings.Contains(got[screen], "down for 1m41s since 13:59:24") {
			t.Errorf("%s lacks \"down for 1m41s since 13:59:24\":\n%s", screen, got[screen])
		}
	}
}
