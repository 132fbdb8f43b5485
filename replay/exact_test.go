package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// liveRecording watches a simulated fleet served over real HTTP for d, as
// `vtop --jsonl --record FILE` would, and returns the file and the JSON
// lines live mode printed.
func liveRecording(t *testing.T, o sim.Options, interval, window, d time.Duration) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet, err := sim.NewFleet(o)
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	urls := testutil.ServeFleet(ctx, t, fleet)
	var targets []scrape.Target
	for _, u := range urls {
		tg, err := scrape.ParseTarget(u)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	cfg := analysis.DefaultConfig()
	cfg.Window = window
	path := filepath.Join(t.TempDir(), "live.vtrec")
	rec, err := record.Create(path, record.Options{Vtop: "test", Interval: interval, Targets: targets, Config: cfg, KeyEvery: 7})
	if err != nil {
		t.Fatal(err)
	}
	poller, err := scrape.NewPoller(targets, scrape.Options{Interval: interval, Now: record.WallClock, OnPage: rec.Page})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	mon := monitor.New(monitor.Of(poller), cfg, func(r analysis.Report) error { return json.NewEncoder(&out).Encode(r) })
	mon.Tap(rec.Tap)
	runCtx, stop := context.WithTimeout(ctx, d)
	defer stop()
	if err := mon.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path, strings.Split(strings.TrimSpace(out.String()), "\n")
}

// replayLines replays a recording as `vtop replay FILE --jsonl` does.
func replayLines(t *testing.T, path string) []string {
	t.Helper()
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Reports(rec, Config(rec), func(r analysis.Report) error { return json.NewEncoder(&out).Encode(r) }); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestReplayIsExact: replaying a recording gives, line for line, the JSON
// that live mode printed for the same scrapes.
func TestReplayIsExact(t *testing.T) {
	cases := []struct {
		name string
		o    sim.Options
	}{
		{"mixed fleet", sim.Options{Replicas: 4, Scenario: sim.Mixed, Seed: 11}},
		{"preempting", sim.Options{Replicas: 2, Scenario: sim.Preempting, Seed: 12}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, live := liveRecording(t, c.o, 200*time.Millisecond, 2*time.Second, 5*time.Second)
			if len(live) < 15 {
				t.Fatalf("only %d live reports", len(live))
			}
			replayed := replayLines(t, path)
			if len(replayed) != len(live) {
				t.Fatalf("%d replayed reports, %d live", len(replayed), len(live))
			}
			for i := range live {
				if live[i] != replayed[i] {
					t.Fatalf("report %d differs:\nlive   %s\nreplay %s", i, live[i], replayed[i])
				}
			}
			if !strings.Contains(live[len(live)-1], `"samples":`) {
				t.Error("reports carry no figures")
			}
		})
	}
}

func TestReportsOfAnEmptyRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.vtrec")
	rec, err := record.Create(path, record.Options{Targets: []scrape.Target{{Name: "a:1", URL: "http://a:1/metrics"}}, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Reports(r, Config(r), func(analysis.Report) error { return nil }); !errors.Is(err, ErrNoReports) {
		t.Errorf("error %v", err)
	}
}
