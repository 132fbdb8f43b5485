package record

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// wantSamples ingests what was fed, per target, as the live poller would.
func wantSamples(fed []scrapeRec, targets int) [][]string {
	ins := make([]*page.Ingester, targets)
	want := make([][]string, targets)
	for i := range ins {
		ins[i] = page.NewIngester()
	}
	for _, f := range fed {
		s, err := ins[f.target].Ingest(f.page.Body, f.page.ContentType)
		if err != nil {
			s.Err = err.Error()
		}
		if f.page.Err != "" {
			s.Err = f.page.Err
			s.HasVLLM = false
		}
		s.Time = f.page.Time
		want[f.target] = append(want[f.target], sampleString(s))
	}
	return want
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		scenario sim.Scenario
		replicas int
		opts     Options
	}{
		{"kept families", sim.Mixed, 4, Options{}},
		{"whole pages", sim.Healthy, 2, Options{All: true}},
		{"key frames often", sim.Preempting, 2, Options{KeyEvery: 3}},
		{"every frame a key", sim.Full, 1, Options{KeyEvery: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := tempPath(t)
			fed := recordFleet(t, path, simFleet(t, sim.Options{Replicas: c.replicas, Scenario: c.scenario}), 20, time.Second, c.opts)
			rec, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Damage.Any() || rec.InProgress {
				t.Errorf("damage %q, in progress %v", rec.Damage, rec.InProgress)
			}
			checkSamples(t, rec, wantSamples(fed, c.replicas), nil)
		})
	}
}

// checkSamples compares every target's decodable frames with want; skip
// lists (target, index) pairs expected to be missing, nil for none.
func checkSamples(t *testing.T, rec *Recording, want [][]string, present func(target int, seq int64) bool) {
	t.Helper()
	cur := NewCursor(rec)
	defer cur.Close()
	for ti := range want {
		frames := rec.Frames(ti)
		if present == nil && len(frames) != len(want[ti]) {
			t.Fatalf("target %d: %d frames, want %d", ti, len(frames), len(want[ti]))
		}
		for i, f := range frames {
			if got := sampleString(cur.Sample(ti, i)); got != want[ti][f.Seq-1] {
				t.Fatalf("target %d frame %d differs:\n got %s\nwant %s", ti, f.Seq, got, want[ti][f.Seq-1])
			}
		}
		// Backwards: every frame again, through the key frames.
		for i := len(frames) - 1; i >= 0; i -= 7 {
			if got := sampleString(cur.Sample(ti, i)); got != want[ti][frames[i].Seq-1] {
				t.Fatalf("target %d frame %d differs when read backwards", ti, frames[i].Seq)
			}
		}
	}
}

func TestFailedScrapesAreKept(t *testing.T) {
	path := tempPath(t)
	targets := simTargets(1)
	start := time.Unix(1_800_000_000, 0)
	rec, err := Create(path, Options{Targets: targets, Interval: time.Second, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	good := []byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n")
	pages := []scrape.Page{
		{Body: good, ContentType: textPlain},
		{Err: "connection refused: is vLLM running?"},
		{Body: []byte("<html>oops</html>"), ContentType: "text/html", Err: "HTML page, not Prometheus metrics"},
		{Body: good, ContentType: textPlain},
	}
	var fed []scrapeRec
	for i, p := range pages {
		p.Target, p.Time = targets[0], start.Add(time.Duration(i)*time.Second)
		rec.Page(p)
		fed = append(fed, scrapeRec{0, p})
	}
	rec.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, r, wantSamples(fed, 1), nil)
	cur := NewCursor(r)
	if p, _ := cur.Page(0, 2); string(p.Body) != "<html>oops</html>" {
		t.Errorf("a page that failed to parse is kept whole; got %q", p.Body)
	}
}

// A scrape that timed out replays as one: the recording keeps the
// scraper's words, and a late answer is told from an outage by them.
func TestTimedOutScrapesReplayAsLate(t *testing.T) {
	path := tempPath(t)
	targets := simTargets(1)
	start := time.Unix(1_800_000_000, 0)
	rec, err := Create(path, Options{Targets: targets, Interval: time.Second, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	errs := []string{"no answer within 800ms", "connection refused"}
	for i, e := range errs {
		rec.Page(scrape.Page{Target: targets[0], Time: start.Add(time.Duration(i) * time.Second), Err: e})
	}
	rec.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cur := NewCursor(r)
	for i, e := range errs {
		s := cur.Sample(0, i)
		if want := i == 0; s.Err != e || s.TimedOut != want {
			t.Errorf("frame %d: err %q timed out %v; want %q, %v", i, s.Err, s.TimedOut, e, want)
		}
	}
}
