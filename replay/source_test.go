package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// TestSourceControls drives a monitor from a replay Source with the
// screen's controls: every report shown, after a step, a jump or a state
// change search, is the report of that position in the plain replay.
func TestSourceControls(t *testing.T) {
	path := simrec.Record(t, sim.Options{Replicas: 1, Scenario: sim.Spike, Seed: 3}, 800, time.Second)
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	if err := Reports(rec, Config(rec), func(r analysis.Report) error {
		b, _ := json.Marshal(r)
		all = append(all, string(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	src, err := New(rec, Config(rec))
	if err != nil {
		t.Fatal(err)
	}
	src.SetPaused(true)
	shown := make(chan string, 16)
	mon := monitor.New(src.Paced(), Config(rec), func(r analysis.Report) error {
		b, _ := json.Marshal(r)
		shown <- string(b)
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = mon.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	shownAt := 0
	expect := func(what string) {
		t.Helper()
		var got string
		select {
		case got = <-shown:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no report", what)
		}
		// While it plays, the position may have moved on before it is read:
		// the report is the plain replay's at a position since the last one.
		pos := src.Status().Position
		from := pos
		if !src.Status().Paused {
			from = shownAt
		}
		k := slices.Index(all[from:pos+1], got)
		if k < 0 {
			t.Fatalf("%s: report at position %d differs from the plain replay's", what, pos)
		}
		shownAt = from + k
	}
	expect("start")
	changes := 0
	steps := []struct {
		name string
		do   func() bool
	}{
		{"forward", func() bool { src.StepBy(1); return true }},
		{"forward 5", func() bool { src.StepBy(5); return true }},
		{"back", func() bool { src.StepBy(-1); return true }},
		{"next change", func() bool { return src.NextChange("") }},
		{"next change again", func() bool { return src.NextChange("") }},
		{"previous change", func() bool { return src.PrevChange("") }},
		{"end", func() bool { src.End(); return true }},
		{"previous change from the end", func() bool { return src.PrevChange("") }},
		{"home", func() bool { src.Home(); return true }},
	}
	for _, s := range steps {
		if !s.do() {
			t.Fatalf("%s: nothing to jump to", s.name)
		}
		expect(s.name)
		if strings.Contains(s.name, "change") {
			changes++
			pos := src.Status().Position
			if !pictureChanged(all[pos-1], all[pos]) {
				t.Errorf("%s: position %d is no change of the fleet's picture", s.name, pos)
			}
		}
	}
	if st := src.Status(); st.Position != 0 || !st.Paused || !strings.HasPrefix(st.String(), "REPLAY ") {
		t.Errorf("status %+v %q", st, st)
	}
	src.SetSpeed(60)
	src.SetPaused(false)
	expect("playing at ×60")
	expect("still playing")
}

// pictureChanged reports whether the fleet's picture differs between
// two JSON reports.
func pictureChanged(a, b string) bool {
	var ra, rb analysis.Report
	_ = json.Unmarshal([]byte(a), &ra)
	_ = json.Unmarshal([]byte(b), &rb)
	return analysis.PictureOf(&ra).Changed(analysis.PictureOf(&rb))
}

func TestStatusLine(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 31, 0, time.Local)
	cases := []struct {
		st   Status
		want string
	}{
		{Status{Time: base, Offset: 190 * time.Second, Length: 15 * time.Minute, Speed: 10}, "REPLAY 12:00:31 (3m10s of 15m00s) ×10"},
		{Status{Time: base, Offset: 0, Length: 2 * time.Hour, Speed: 1, Paused: true}, "REPLAY 12:00:31 (0m00s of 2h00m00s) ×1 paused"},
		{Status{Time: base, Speed: 60, Damage: "recording ends at 12:00:31: 1 frame damaged (40 bytes)"}, "REPLAY 12:00:31 (0m00s of 0m00s) ×60 · recording ends at 12:00:31: 1 frame damaged (40 bytes)"},
	}
	for _, c := range cases {
		if got := c.st.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// PointsBefore is the points of the reports before a position, as the
// plain replay computes them, whatever checkpoint it starts from.
func TestPointsBefore(t *testing.T) {
	path := simrec.Record(t, sim.Options{Replicas: 2, Scenario: sim.Spike, Seed: 3}, 200, time.Second)
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []analysis.Report
	if err := Reports(rec, Config(rec), func(r analysis.Report) error { all = append(all, r); return nil }); err != nil {
		t.Fatal(err)
	}
	src, err := New(rec, Config(rec))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		at, n   int // the position, and how many before it
		wantLen int
	}{
		{"a stretch across a checkpoint", 130, 50, 50},
		{"a stretch from a checkpoint", 121, 1, 1},
		{"more than the recording holds before", 30, 240, 30},
		{"the first position: none before", 0, 240, 0},
	}
	for _, kept := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s, kept %v", tt.name, kept), func(t *testing.T) {
				src.ahead.keepPoints = kept
				got := src.PointsBefore(all[tt.at].Time, tt.n)
				for _, target := range []string{all[0].Replicas[0].Target, all[0].Replicas[1].Target} {
					pts := got[target]
					if len(pts) != tt.wantLen {
						t.Fatalf("%s: %d points, want %d", target, len(pts), tt.wantLen)
					}
					for k, p := range pts {
						r := all[tt.at-tt.wantLen+k]
						want := r.Replicas[0].Point
						if r.Replicas[1].Target == target {
							want = r.Replicas[1].Point
						}
						if want.Time.IsZero() {
							want.Time = r.Time
						}
						if !reflect.DeepEqual(p, want) {
							t.Fatalf("%s point %d: %+v, want the plain replay's %+v", target, k, p, want)
						}
					}
				}
			})
		}
	}
}

// The analysis ahead hands every report of the recording out once, in
// order, from the replay's start, whatever the screen does meanwhile:
// the events of the whole stretch, read once, as the plain replay gives
// them.
func TestOnReportSeesEveryReportOnce(t *testing.T) {
	path := simrec.Record(t, sim.Options{Replicas: 2, Scenario: sim.Spike, Seed: 3}, 300, time.Second)
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := Reports(rec, Config(rec), func(r analysis.Report) error {
		b, _ := json.Marshal(r.Events)
		want = append(want, r.Time.String()+string(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	src, err := New(rec, Config(rec))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	done := make(chan struct{})
	src.OnReport(func(r *analysis.Report) {
		b, _ := json.Marshal(r.Events)
		got = append(got, r.Time.String()+string(b))
		if len(got) == len(want) {
			close(done)
		}
	})
	src.SetPaused(true)
	mon := monitor.New(src.Paced(), Config(rec), func(analysis.Report) error { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = mon.Run(ctx); close(stopped) }()
	// The screen jumps about meanwhile.
	src.End()
	src.StepBy(-100)
	src.NextChange("")
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d reports handed out", len(got), len(want))
	}
	cancel()
	<-stopped
	if !slices.Equal(got, want) {
		t.Errorf("the reports handed out differ from the plain replay's: %d, want %d", len(got), len(want))
	}
}
