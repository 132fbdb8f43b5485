package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// pastBenchEnv runs TestPastBenchmark: VTOP_PAST_BENCH=1 (it takes
// minutes to make its data). VTOP_PAST_REPLICAS (default 100),
// VTOP_PAST_SCRAPE (default 5s) and VTOP_PAST_SPAN (default 1h) size it;
// VTOP_PAST_DIR keeps the blocks in that folder, and a later run with
// the same folder reuses them.
const pastBenchEnv = "VTOP_PAST_BENCH"

// TestPastBenchmark times `vtop --prometheus … --from … --to … --jsonl`
// over an hour of a hundred replicas, one report every 5 s, read from a
// Prometheus that serves back-filled blocks and scrapes nothing: the
// fleet is simulated in virtual time, recorded, exported as OpenMetrics
// and turned into blocks by promtool. It logs the wall time and checks
// the goal (30 s).
func TestPastBenchmark(t *testing.T) {
	if os.Getenv(pastBenchEnv) == "" {
		t.Skip("benchmark of the past; set " + pastBenchEnv + "=1 to run it (minutes)")
	}
	promtool := testutil.PrometheusTool(t, "promtool")
	replicas := envInt(t, "VTOP_PAST_REPLICAS", 100)
	scrapeEvery := envDuration(t, "VTOP_PAST_SCRAPE", 5*time.Second)
	span := envDuration(t, "VTOP_PAST_SPAN", time.Hour)
	dir := os.Getenv("VTOP_PAST_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	blocks := filepath.Join(dir, "blocks")
	start := pastBenchData(t, promtool, dir, blocks, replicas, scrapeEvery, span)
	prom := testutil.ServeBlocks(t, blocks)

	from := start.Add(2*time.Minute + 40*time.Second)
	to := from.Add(span - time.Minute)
	args := []string{"--prometheus", prom.URL(), "--jsonl", "--interval", "5s",
		"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339)}
	// The first run warms Prometheus's page cache, as a second look at an
	// incident would find it; the second is timed.
	runOK(t, args...)
	began := time.Now()
	out, _ := runOK(t, args...)
	took := time.Since(began)
	reps := pastReports(t, out)
	want := int(to.Sub(from)/(5*time.Second)) + 1
	if len(reps) != want || len(reps[0].Replicas) != replicas {
		t.Fatalf("%d reports of %d replicas, want %d of %d", len(reps), len(reps[0].Replicas), want, replicas)
	}
	t.Logf("--jsonl over %s of %d replicas (scraped every %s): %d reports in %s", to.Sub(from), replicas, scrapeEvery, len(reps), took.Round(10*time.Millisecond))
	if took > 30*time.Second {
		t.Errorf("took %s: the goal is 30 s", took.Round(10*time.Millisecond))
	}
}

// pastBenchData makes the blocks of the benchmark in blocks, unless a
// run before made them (its start is kept beside them), and returns the
// time the data starts.
func pastBenchData(t *testing.T, promtool, dir, blocks string, replicas int, every, span time.Duration) time.Time {
	t.Helper()
	stamp := filepath.Join(dir, fmt.Sprintf("start-%d-%s-%s", replicas, every, span))
	if b, err := os.ReadFile(stamp); err == nil {
		if start, err := time.Parse(time.RFC3339, string(b)); err == nil {
			return start
		}
	}
	start := time.Now().Add(-span - 2*time.Hour).Truncate(time.Hour)
	began := time.Now()
	om := filepath.Join(dir, "fleet.om")
	steps := int(span/every) + 8
	runOK(t, "sim", "--replicas", strconv.Itoa(replicas), "--scenario", string(sim.Spike), "--seed", "3",
		"--history", (time.Duration(steps) * every).String(), "--step", every.String(),
		"--end", start.Add(time.Duration(steps)*every).Format(time.RFC3339), "-o", om)
	t.Logf("played %d replicas × %s every %s in %s", replicas, span, every, time.Since(began).Round(time.Second))
	began = time.Now()
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, blocks).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
	_ = os.Remove(om)
	t.Logf("back-filled in %s", time.Since(began).Round(time.Second))
	if err := os.WriteFile(stamp, []byte(start.Format(time.RFC3339)), 0o644); err != nil {
		t.Fatal(err)
	}
	return start
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, s)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration", name, s)
	}
	return d
}
