package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// simEnv, when set in the environment of the test binary, turns it into a
// simulated fleet of that many replicas: the benchmarks re-execute
// themselves so that the simulator's CPU and allocations stay out of the
// process they measure.
const simEnv = "VTOP_BENCH_SIM_REPLICAS"

// simEnginesEnv gives the child's replicas that many data-parallel engines.
const simEnginesEnv = "VTOP_BENCH_SIM_ENGINES"

func TestMain(m *testing.M) {
	if n := os.Getenv(simEnv); n != "" {
		os.Exit(serveChildFleet(n, os.Getenv(simEnginesEnv)))
	}
	os.Exit(m.Run())
}

// serveChildFleet is the whole child process: it serves a mixed fleet in
// real time, prints one URL per line and serves until its stdin closes (the
// parent is done or gone). It runs outside any test, so it cannot use
// testutil.ServeFleet, which stops the fleet with its test.
func serveChildFleet(replicas, engines string) int {
	n, err := strconv.Atoi(replicas)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	e, err := strconv.Atoi(engines)
	if err != nil || e < 1 {
		fmt.Fprintln(os.Stderr, "engines:", engines)
		return 2
	}
	signal.Ignore(os.Interrupt)
	fleet, err := sim.NewFleet(sim.Options{Replicas: n, Scenario: sim.Mixed, Seed: 1,
		Configure: func(_ int, c *sim.ReplicaConfig) { c.Engines = e }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fleet.Advance(2 * time.Minute)
	urls, err := fleet.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, u := range urls {
		fmt.Println(u)
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString(0) // returns at EOF
	_ = fleet.Close()
	return 0
}

// startFleetProcess serves n simulated replicas of the given number of
// engines from a child process and returns their targets; the child stops
// with the test.
func startFleetProcess(tb testing.TB, n, engines int) []scrape.Target {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), simEnv+"="+strconv.Itoa(n), simEnginesEnv+"="+strconv.Itoa(engines))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	targets := make([]scrape.Target, 0, n)
	for len(targets) < n && lines.Scan() {
		t, err := scrape.ParseTarget(lines.Text())
		if err != nil {
			tb.Fatal(err)
		}
		targets = append(targets, t)
	}
	if len(targets) < n {
		tb.Fatalf("the simulator printed %d of %d URLs", len(targets), n)
	}
	return targets
}

// BenchmarkMonitorRound is one full round of the live pipeline over a
// fleet of simulated replicas served by another process: every target
// fetched over loopback HTTP and ingested, the rings snapshotted and the
// whole fleet analysed. A virtual clock puts the rounds one second apart,
// so the analysis window holds what it holds in a real run (30 samples).
// core-share is CPU seconds per round: the share of one core vtop needs at
// a 1 s interval, before drawing. Profile it with
//
//	go test -run '^$' -bench 'MonitorRound/100' -cpuprofile cpu.out ./bench/
func BenchmarkMonitorRound(b *testing.B) {
	for _, f := range []struct{ targets, engines int }{{10, 1}, {100, 1}, {25, 8}} {
		b.Run(fmt.Sprintf("%d-targets-%d-engines", f.targets, f.engines), func(b *testing.B) {
			benchmarkRound(b, startFleetProcess(b, f.targets, f.engines))
		})
	}
}

func benchmarkRound(b *testing.B, targets []scrape.Target) {
	var round atomic.Int64
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return epoch.Add(time.Duration(round.Load()) * time.Second) }
	reports := make(chan analysis.Report, 1)
	poller, err := scrape.NewPoller(targets, scrape.Options{Interval: time.Hour, Timeout: 5 * time.Second, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	mon := monitor.New(monitor.Of(poller), analysis.DefaultConfig(), func(r analysis.Report) error { reports <- r; return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mon.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	next := func() analysis.Report {
		round.Add(1)
		mon.Refresh()
		return <-reports
	}
	<-reports      // the round Run starts with
	for range 40 { // fill the window, as after the first half minute of a run
		next()
	}
	b.ReportAllocs()
	cpuBefore := testutil.CPUTime()
	b.ResetTimer()
	var last analysis.Report
	for b.Loop() {
		last = next()
	}
	b.StopTimer()
	cpu := testutil.CPUTime() - cpuBefore
	if len(last.Replicas) != len(targets) {
		b.Fatalf("report has %d replicas, want %d", len(last.Replicas), len(targets))
	}
	for _, r := range last.Replicas {
		if r.State == analysis.StateDown {
			b.Fatalf("%s is down: %s", r.Target, r.Error)
		}
	}
	// At one round a second, CPU seconds per round are the share of one
	// core; wall time per round understates it on more than one core.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "core-share")
}
