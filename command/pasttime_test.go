package command

import (
	"strings"
	"testing"
	"time"
)

func TestParsePastTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 5, 9, 30, 0, 0, cet)
	tests := []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-12-05T03:10:00Z", time.Date(2026, 12, 5, 3, 10, 0, 0, time.UTC), ""},
		{"2026-12-05T04:10:00.250+01:00", time.Date(2026, 12, 5, 3, 10, 0, 250e6, time.UTC), ""},
		{"-8h", now.Add(-8 * time.Hour), ""},
		{"-90m", now.Add(-90 * time.Minute), ""},
		{"-1h30m", now.Add(-90 * time.Minute), ""},
		{"now", now, ""},
		{"03:10", time.Date(2026, 12, 5, 3, 10, 0, 0, cet), ""},     // passed today
		{"03:10:30", time.Date(2026, 12, 5, 3, 10, 30, 0, cet), ""}, // with seconds
		{"23:00", time.Date(2026, 12, 4, 23, 0, 0, 0, cet), ""},     // not yet today: yesterday's
		{"09:30", now, ""}, // now itself is the past
		{"2026-12-04 23:15", time.Date(2026, 12, 4, 23, 15, 0, 0, cet), ""},
		{"2026-12-04T23:15:05", time.Date(2026, 12, 4, 23, 15, 5, 0, cet), ""},
		{"", time.Time{}, "want a time"},
		{"-", time.Time{}, "want a time before now"},
		{"-0s", time.Time{}, "want a time before now"},
		{"yesterday", time.Time{}, "not a time"},
		{"25:00", time.Time{}, "not a time"},
		{"2026-12-05T10:00:00+01:00", time.Time{}, "is in the future"},
		{"2027-01-01 00:00", time.Time{}, "is in the future"},
	}
	for _, tt := range tests {
		got, err := parsePastTime("--at", tt.in, now)
		switch {
		case tt.err != "":
			if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "--at ") {
				t.Errorf("%q: error %v, want a usage error naming --at with %q", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case !got.Equal(tt.want):
			t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestZoneNote(t *testing.T) {
	tests := []struct {
		loc  *time.Location
		want string
	}{
		{time.FixedZone("CET", 3600), "times in local time, UTC+01:00 (CET)"},
		{time.UTC, "times in local time, UTC+00:00"},
		{time.FixedZone("", -5*3600-1800), "times in local time, UTC-05:30"},
		{time.FixedZone("+0530", 5*3600+1800), "times in local time, UTC+05:30"},
	}
	for _, tt := range tests {
		if got := zoneNote(time.Date(2026, 12, 5, 3, 0, 0, 0, tt.loc)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.loc, got, tt.want)
		}
	}
}

func TestPastNote(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	day := time.Date(2026, 12, 5, 3, 0, 0, 0, cet)
	if got, want := pastNote(day, day.Add(30*time.Minute)), "2026-12-05 UTC+01:00 local (CET), from Prometheus"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := pastNote(day.Add(-4*time.Hour), day), "2026-12-04 to 2026-12-05 UTC+01:00 local (CET), from Prometheus"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestPastStretch: the reports of a stretch, and the mistakes in its
// flags, each said naming the flag.
func TestPastStretch(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)
	settled := now.Add(-time.Second) // the newest second may still be written
	tests := []struct {
		name   string
		f      pastFlags
		screen bool
		first  time.Time
		last   time.Time
		n      int
		err    string
	}{
		{"from to", pastFlags{From: "09:00", To: "09:01"}, false, now.Add(-30 * time.Minute), now.Add(-29 * time.Minute), 13, ""},
		{"from to now", pastFlags{From: "-1m"}, true, settled.Add(-time.Minute), settled, 13, ""},
		{"at alone", pastFlags{At: "09:10:02"}, false, now.Add(-20*time.Minute + 2*time.Second), now.Add(-20*time.Minute + 2*time.Second), 1, ""},
		{"at on screen", pastFlags{At: "09:10:02"}, true, now.Add(-30*time.Minute + 2*time.Second), now.Add(-10*time.Minute + 2*time.Second), 241, ""},
		{"at near now", pastFlags{At: "-1m"}, true, settled.Add(-11 * time.Minute), settled.Add(-time.Minute).Add(time.Minute), 133, ""},
		{"both", pastFlags{At: "-1h", From: "-2h"}, false, time.Time{}, time.Time{}, 0, "exclude each other"},
		{"to alone", pastFlags{To: "-1h"}, false, time.Time{}, time.Time{}, 0, "--to goes with --from"},
		{"reversed", pastFlags{From: "-1h", To: "-2h"}, false, time.Time{}, time.Time{}, 0, "--from -1h"},
		{"empty", pastFlags{From: "-1h", To: "-1h"}, false, time.Time{}, time.Time{}, 0, "is not before --to"},
		{"too long", pastFlags{From: "-25h"}, false, time.Time{}, time.Time{}, 0, "--from -25h --to now: 25h0m0s is over"},
		{"bad from", pastFlags{From: "soon"}, false, time.Time{}, time.Time{}, 0, "--from soon: not a time"},
		{"bad to", pastFlags{From: "-1h", To: "later"}, false, time.Time{}, time.Time{}, 0, "--to later: not a time"},
	}
	for _, tt := range tests {
		p, err := tt.f.stretch(now, 30*time.Second, 5*time.Second, tt.screen)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(p.reports) != tt.n || !p.reports[0].Equal(tt.first) || !p.end().Equal(tt.last) {
			t.Errorf("%s: %d reports from %v to %v, want %d from %v to %v", tt.name, len(p.reports), p.reports[0], p.end(), tt.n, tt.first, tt.last)
		}
		if p.start() != p.reports[0].Add(-40*time.Second) {
			t.Errorf("%s: samples from %v: want the window and two intervals before the first report", tt.name, p.start())
		}
	}
}

// TestCutAt: a report holds the newest frame at or before its time and
// the frames of the keep before it, at least the newest.
func TestCutAt(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	fs := []frameAt{{t0, 1}, {t0.Add(5 * time.Second), 2}, {t0.Add(10 * time.Second), 3}, {t0.Add(15 * time.Second), 4}}
	tests := []struct {
		at   time.Duration
		keep time.Duration
		want cutWant
	}{
		{-time.Second, 10 * time.Second, cutWant{0, 0}},
		{0, 10 * time.Second, cutWant{1, 1}},
		{12 * time.Second, 10 * time.Second, cutWant{3, 2}},  // frames 2 and 3: frame 1 is 12s before
		{15 * time.Second, 10 * time.Second, cutWant{4, 3}},  // the keep's first instant is in
		{60 * time.Second, 10 * time.Second, cutWant{4, 1}},  // long after: the newest alone
		{15 * time.Second, 100 * time.Second, cutWant{4, 4}}, // all
	}
	for _, tt := range tests {
		lo, hi := heldAt(fs, frameAt.time, t0.Add(tt.at), tt.keep)
		c := cutOf(fs[lo:hi])
		if c.Seq != tt.want.seq || c.Count != tt.want.count {
			t.Errorf("at %v keep %v: %+v, want %+v", tt.at, tt.keep, c, tt.want)
		}
	}
}

type cutWant struct {
	seq   int64
	count int
}

// TestPastReadBound: what one read of the past asks for, the window (and
// two intervals) before the first report to the last report, is bounded:
// the stretch by the 24 h it may span, the window as long: --window 1000h
// with --at asked 36,000 chunks, and --window 2562047h started the read
// in 1734.
func TestPastReadBound(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name   string
		f      pastFlags
		window time.Duration
		err    string
	}{
		{"at, a window of a day", pastFlags{At: "-1m"}, 24 * time.Hour, ""},
		{"at, a window of 1000h", pastFlags{At: "-1m"}, 1000 * time.Hour, "--window 1000h0m0s with --at: the read of the past would span 1000h0m10s (the window and two intervals before the report, to the last); a window of the past is at most 24h0m0s"},
		{"at, the longest window", pastFlags{At: "-1m"}, 2562047 * time.Hour, "--window 2562047h0m0s with --at: the read of the past would span"},
		{"from, a day and a window of a day", pastFlags{From: "-24h"}, 24 * time.Hour, ""},
		{"from, a window over a day", pastFlags{From: "-1h"}, 25 * time.Hour, "--window 25h0m0s with --from: the read of the past would span 26h0m10s"},
	}
	for _, tt := range tests {
		_, err := tt.f.stretch(now, tt.window, 5*time.Second, false)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}
