package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/promsource"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// Dead replicas through Prometheus: a fleet's history back-filled into a
// real Prometheus, in which two replicas die (their series stop, their up
// turns 0, as Prometheus records a server it can no longer scrape), one
// long before the moments asked and one among them. At every moment,
// --from/--to, --at and a live source evaluating then must list every
// replica, the dead ones DOWN, and count them alike in the fleet and its
// advice; --once exits 2 while a replica is down.

// downView is what the three paths must agree on at one moment.
type downView struct {
	Replicas  int
	Down      []string // the replicas DOWN, sorted
	FleetDown int
	Counted   int // the advice's replicas
	Uncounted int // the advice's replicas down
}

func (v downView) String() string {
	return fmt.Sprintf("%d replicas, DOWN %q, fleet down %d, advice %d counted %d uncounted", v.Replicas, v.Down, v.FleetDown, v.Counted, v.Uncounted)
}

// jsonDown reads the view of a JSON report.
type jsonDown struct {
	Time     time.Time `json:"time"`
	Replicas []struct {
		Target string `json:"target"`
		State  string `json:"state"`
		Error  string `json:"error"`
	} `json:"replicas"`
	Fleet struct {
		Down   int `json:"down"`
		Advice struct {
			Replicas  int `json:"replicas"`
			Uncounted int `json:"uncounted"`
		} `json:"advice"`
	} `json:"fleet"`
}

func (j jsonDown) view() downView {
	v := downView{Replicas: len(j.Replicas), FleetDown: j.Fleet.Down, Counted: j.Fleet.Advice.Replicas, Uncounted: j.Fleet.Advice.Uncounted}
	for _, r := range j.Replicas {
		if r.State == analysis.StateDown.String() {
			v.Down = append(v.Down, r.Target)
		}
	}
	slices.Sort(v.Down)
	return v
}

func reportView(r analysis.Report) downView {
	v := downView{Replicas: len(r.Replicas), FleetDown: r.Fleet.Down, Counted: r.Fleet.Advice.Replicas, Uncounted: r.Fleet.Advice.Uncounted}
	for _, rr := range r.Replicas {
		if rr.State == analysis.StateDown {
			v.Down = append(v.Down, rr.Target)
		}
	}
	slices.Sort(v.Down)
	return v
}

// killInHistory writes a copy of a back-fill history in which each
// instance of deaths stops at its time: from then on its series have no
// sample and its up is 0, as Prometheus stores a target it cannot scrape.
func killInHistory(t *testing.T, path string, deaths map[string]time.Time) string {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	outPath := path + ".killed"
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			if deathOf(t, line, deaths) {
				if !strings.HasPrefix(line, "up{") {
					continue
				}
				sp := strings.LastIndexByte(line, ' ')
				labels := line[:strings.LastIndexByte(line[:sp], ' ')]
				line = labels + " 0" + line[sp:]
			}
		}
		w.WriteString(line)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return outPath
}

// deathOf reports whether a sample line is of an instance dead by its
// timestamp.
func deathOf(t *testing.T, line string, deaths map[string]time.Time) bool {
	for inst, at := range deaths {
		if !strings.Contains(line, `instance="`+inst+`"`) {
			continue
		}
		secs, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("timestamp of %q: %v", line, err)
		}
		if ts := time.UnixMilli(int64(math.Round(secs * 1000))); !ts.Before(at) {
			return true
		}
	}
	return false
}

// liveAt is the report a live source gives at, its first: a source whose
// clock reads at (plus the second it evaluates in the past), started then.
func liveAt(t *testing.T, url string, at time.Time, window time.Duration) analysis.Report {
	t.Helper()
	src, err := promsource.New(promsource.Config{URL: url, Selector: `{job="vllm"}`, Interval: time.Hour, Window: window,
		Now: func() time.Time { return at.Add(time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = src.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-src.Refresh()
	readings, evaluated := src.ReadingsAt(nil)
	if p := src.Status().Problem; p != "" || !evaluated.Equal(at) {
		t.Fatalf("live at %s: evaluated at %s, problem %q", at.Format(time.RFC3339Nano), evaluated.Format(time.RFC3339Nano), p)
	}
	cfg := analysis.DefaultConfig()
	cfg.Window = window
	return analysis.Analyze(evaluated, readings, cfg, nil)
}

func TestDeadReplicasThroughPrometheus(t *testing.T) {
	testutil.PrometheusTool(t, "promtool")
	const (
		replicas = 3
		window   = 10 * time.Second
		interval = 5 * time.Second
	)
	// Two and a half minutes of past and 90 s ahead, so that vtop also
	// reads the present; a scrape of each replica every 2 s.
	history := filepath.Join(t.TempDir(), "history.om")
	if out, errOut, code := testutil.RunVtop(t, "sim", "--replicas", strconv.Itoa(replicas), "--scenario", string(sim.Mixed),
		"--history", "4m", "--step", "2s", "--end", "now+90s", "-o", history); code != 0 {
		t.Fatalf("vtop sim --history: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("history written")
	first := scrapeTimes(t, history)[0]
	longDead, newlyDead := sim.PodName(1)+":8000", sim.PodName(2)+":8000"
	deaths := map[string]time.Time{longDead: first.Add(40 * time.Second), newlyDead: first.Add(115 * time.Second)}
	prom := testutil.ServeBlocks(t, testutil.Backfill(t, killInHistory(t, history, deaths)))
	t.Logf("Prometheus serving")

	// The moments: from 40 s after the first death (four windows) to 20 s
	// after the second, every interval, at a millisecond no scrape is at.
	from := first.Add(80*time.Second + 123*time.Millisecond).UTC()
	to := from.Add(55 * time.Second)
	out, errOut, code := testutil.RunVtop(t, "--jsonl", "--prometheus", prom.URL(), "--selector", `{job="vllm"}`,
		"--window", window.String(), "--interval", interval.String(),
		"--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano))
	if code > command.ExitDown {
		t.Fatalf("--from/--to --jsonl: exit %d\n%.2000s%s", code, out, errOut)
	}
	var stretch []jsonDown
	for _, l := range lines(out) {
		var r jsonDown
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %.300s", err, l)
		}
		stretch = append(stretch, r)
	}
	if len(stretch) != 12 {
		t.Fatalf("%d reports from %s to %s every %s, want 12", len(stretch), from, to, interval)
	}
	sawNewly := false
	for _, r := range stretch {
		at := r.Time
		want := []string{longDead}
		if !at.Before(deaths[newlyDead].Add(2 * time.Second)) {
			want = append(want, newlyDead) // its first failed scrape (every 2 s) is in
			sawNewly = true
		}
		slices.Sort(want)
		fromTo := r.view()
		if fromTo.Replicas != replicas || !slices.Equal(fromTo.Down, want) || fromTo.FleetDown != len(want) || fromTo.Uncounted != len(want) ||
			fromTo.Counted != replicas-len(want) {
			t.Errorf("%s --from/--to: %s; want %d replicas, DOWN %q, counted alike", at.Format("15:04:05.000"), fromTo, replicas, want)
		}
		for _, rr := range r.Replicas {
			if rr.State == analysis.StateDown.String() && !strings.Contains(rr.Error, "Prometheus cannot scrape "+rr.Target+" (up is 0)") {
				t.Errorf("%s --from/--to: %s DOWN with %q, want Prometheus's failed scrape", at.Format("15:04:05.000"), rr.Target, rr.Error)
			}
		}

		one, errOut, code := testutil.RunVtop(t, "--once", "--json", "--prometheus", prom.URL(), "--selector", `{job="vllm"}`,
			"--window", window.String(), "--interval", interval.String(), "--at", at.Format(time.RFC3339Nano))
		var atJSON jsonDown
		if err := json.Unmarshal([]byte(one), &atJSON); err != nil || !atJSON.Time.Equal(at) {
			t.Fatalf("--at %s --once --json: report at %s (%v)\n%s", at.Format(time.RFC3339Nano), atJSON.Time, err, errOut)
		}
		if code != command.ExitDown {
			t.Errorf("--at %s --once: exit %d with %d replicas down, want %d", at.Format("15:04:05.000"), code, len(want), command.ExitDown)
		}
		if got := atJSON.view(); fmt.Sprint(got) != fmt.Sprint(fromTo) {
			t.Errorf("%s: --at %s; --from/--to %s", at.Format("15:04:05.000"), got, fromTo)
		}
		if got := reportView(liveAt(t, prom.URL(), at, window)); fmt.Sprint(got) != fmt.Sprint(fromTo) {
			t.Errorf("%s: live %s; --from/--to %s", at.Format("15:04:05.000"), got, fromTo)
		}
	}
	if !sawNewly {
		t.Errorf("no moment after the second death: the test proves less than it says")
	}

	// vtop record --prometheus keeps the dead replicas' failed scrapes:
	// its replay prints the same reports.
	path := filepath.Join(t.TempDir(), "dead.vtrec")
	if rec, errOut, code := testutil.RunVtop(t, "record", "-o", path, "--prometheus", prom.URL(), "--selector", `{job="vllm"}`,
		"--window", window.String(), "--interval", interval.String(),
		"--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano)); code != 0 {
		t.Fatalf("vtop record --prometheus: exit %d\n%s%s", code, rec, errOut)
	}
	if replayed, _, _ := testutil.RunVtop(t, "replay", "--jsonl", path); replayed != out {
		t.Errorf("vtop replay of the recorded past differs from --jsonl over it:\nreplay %.500s\njsonl  %.500s", replayed, out)
	}

	// The present, live, as an on-call engineer runs it: both dead
	// replicas DOWN, exit 2.
	now, errOut, code := testutil.RunVtop(t, "--once", "--json", "--prometheus", prom.URL(), "--selector", `{job="vllm"}`, "--window", window.String())
	var live jsonDown
	if err := json.Unmarshal([]byte(now), &live); err != nil {
		t.Fatalf("--once --json: %v\n%s", err, errOut)
	}
	if v := live.view(); code != command.ExitDown || v.Replicas != replicas || !slices.Equal(v.Down, []string{longDead, newlyDead}) || v.Uncounted != 2 {
		t.Errorf("--once now: exit %d, %s; want exit %d, both dead replicas DOWN and uncounted", code, v, command.ExitDown)
	}
}
