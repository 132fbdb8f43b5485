package command

import (
	"fmt"
	"strings"
	"time"
)

// parsePastTime reads a time of the past as --at, --from and --to take
// it, now being the present:
//   - RFC 3339: 2026-12-05T03:10:00Z, 2026-12-05T04:10:00+01:00;
//   - a date and a clock time in local time: 2026-12-05 03:10[:05];
//   - relative to now: -8h, -90m, -1h30m; "now" itself;
//   - a clock time in local time: 03:10 or 03:10:30, the most recent
//     such time: today's if it has passed, else yesterday's.
//
// A time after now is refused: the past is all there is to read.
func parsePastTime(flag, s string, now time.Time) (time.Time, error) {
	t, err := readPastTime(strings.TrimSpace(s), now)
	if err != nil {
		return time.Time{}, usagef("%s %s: %v", flag, s, err)
	}
	if t.After(now) {
		return time.Time{}, usagef("%s %s: %s is in the future; the past is all Prometheus holds", flag, s, t.Format(time.RFC3339))
	}
	return t, nil
}

// clockLayouts are clock times alone, dateLayouts with a date; both local.
var clockLayouts = []string{"15:04", "15:04:05"}
var dateLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"}

// readPastTime is parsePastTime without the checks.
func readPastTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, fmt.Errorf("want a time: RFC 3339, -8h, 03:10 or 2006-01-02 03:10")
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := time.ParseDuration(s[1:])
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("want a time before now such as -8h or -90m")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	loc := now.Location()
	for _, l := range dateLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	for _, l := range clockLayouts {
		c, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		y, m, d := now.Date()
		t := time.Date(y, m, d, c.Hour(), c.Minute(), c.Second(), 0, loc)
		if t.After(now) {
			t = time.Date(y, m, d-1, c.Hour(), c.Minute(), c.Second(), 0, loc)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("not a time: want RFC 3339 (2026-12-05T03:10:00Z), relative (-8h, -90m), a local clock time (03:10, 03:10:30: the most recent one) or a local date and time (2026-12-05 03:10)")
}

// zoneNote says which zone times are read and shown in:
// "times in local time, UTC+01:00 (CET)".
func zoneNote(at time.Time) string {
	return "times in local time, UTC" + at.Format("-07:00") + zoneName(at)
}

// pastNote is the replay line's note over a stretch of the past: the
// day (or days) the clock times are of, and their zone, so that 03:10
// cannot be read as today's or in another zone; short, for the 34 columns
// an 80-column terminal leaves it.
func pastNote(first, last time.Time) string {
	day := first.Format("2006-01-02")
	if d := last.Format("2006-01-02"); d != day {
		day += " to " + d
	}
	return day + " UTC" + first.Format("-07:00") + " local" + zoneName(first) + ", from Prometheus"
}

// zoneName is " (CET)" for a zone with a name other than UTC, else "".
func zoneName(t time.Time) string {
	if name, _ := t.Zone(); name != "" && !strings.HasPrefix(name, "+") && !strings.HasPrefix(name, "-") && name != "UTC" {
		return " (" + name + ")"
	}
	return ""
}
