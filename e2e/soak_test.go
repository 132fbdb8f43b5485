//go:build soak

package e2e

// The soak test runs vtop's live pipeline for minutes — a simulated fleet of
// 100 replicas over real HTTP, the real scrape.Monitor, the analysis, a
// consumer of every report — with a third of the replicas cycling through
// every fault. It checks that nothing leaks (goroutines, heap), that the
// faulty replicas are reported down while failing and come back when they
// recover, and that they never stall the others.
//
//	go test -tags soak -run Soak -v -timeout 20m ./e2e
//	go test -tags soak -run Soak -v -timeout 2h ./e2e -soak.duration=1h
//
// The duration is -soak.duration, else $VTOP_SOAK_DURATION, else 3 minutes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

var soakDurationFlag = flag.Duration("soak.duration", 0, "how long the soak test runs (default $VTOP_SOAK_DURATION, else 3m)")

const (
	soakReplicas = 100
	// soakFaultyEvery makes every third replica faulty.
	soakFaultyEvery = 3
	// soakFaultHold is how long a faulty replica keeps one fault.
	soakFaultHold = 5 * time.Second
	// soakSampleEvery is the pace of the goroutine, heap and RSS samples.
	soakSampleEvery = 10 * time.Second
	// soakMaxWarmUp ends the warm-up: by then every ring holds a full
	// window (30 s at 1 s) and every connection is open.
	soakMaxWarmUp = time.Minute
	// soakRingsFull is the shortest warm-up: the rings fill for a whole
	// analysis window (30 s at 1 s, plus the scrape before it and one in
	// flight), rounded up to the sample pace. Before that the heap grows
	// by design, and the growth check would call the filling a leak.
	soakRingsFull = 40 * time.Second
	// soakPreRoll is simulated before serving. It exceeds the sim's
	// client timeout (3 min), so the queues of the full replicas have
	// reached their plateau: the sim's own memory is flat from the start
	// and cannot be mistaken for a leak of vtop (sim and vtop share this
	// process's heap).
	soakPreRoll = 4 * time.Minute
	// soakHeapGrowth bounds the heap in use at the end relative to the end
	// of the warm-up.
	soakHeapGrowth = 1.25
	// soakScrapeNowEvery presses "r" (Monitor.ScrapeNow) now and then, to
	// exercise that path too.
	soakScrapeNowEvery = 15 * time.Second
)

// soakFaultCycle is the order in which a faulty replica goes through the
// faults; each starts at a different place in it.
var soakFaultCycle = []sim.Fault{
	sim.FaultDown, sim.FaultHTTP500, sim.FaultHang, sim.FaultSlow,
	sim.FaultTruncated, sim.FaultGarbage, sim.FaultRestart, sim.FaultNone,
}

// failing reports whether a replica in fault f fails its scrapes.
func failing(f sim.Fault) bool { return f != sim.FaultNone && f != sim.FaultRestart }

func soakDuration(t *testing.T) time.Duration {
	if *soakDurationFlag > 0 {
		return *soakDurationFlag
	}
	if s := os.Getenv("VTOP_SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("VTOP_SOAK_DURATION=%q: want a positive duration such as 10m", s)
		}
		return d
	}
	return 3 * time.Minute
}

// soakWarmUp is the warm-up for a run of duration d: a minute, or a third
// of a short run, rounded down to whole sample periods (at least one).
func soakWarmUp(d time.Duration) time.Duration {
	w := min(soakMaxWarmUp, max(d/3, soakRingsFull)).Truncate(soakSampleEvery)
	return max(w, soakSampleEvery)
}

// TestSoak runs the live pipeline against a faulty fleet for the soak
// duration; see the top of the file.
func TestSoak(t *testing.T) {
	duration := soakDuration(t)
	warmUp := soakWarmUp(duration)
	if duration < warmUp+2*soakSampleEvery {
		t.Fatalf("duration %v too short: need at least the warm-up (%v) and two samples", duration, warmUp)
	}
	baseline := settledGoroutines(0, time.Second)
	rss0 := readRSS()

	fleet, targets := startSoakFleet(t)
	start := time.Now()
	faults := newFaultCycler(fleet.Replicas(), start)
	consumer := newSoakConsumer(targets, faults, start.Add(warmUp))
	poller, err := scrape.NewPoller(targets, scrape.Options{Interval: scrape.DefaultInterval})
	if err != nil {
		t.Fatal(err)
	}
	mon := monitor.New(monitor.Of(poller), analysis.DefaultConfig(), consumer.consume)
	consumer.poller = poller

	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	var background sync.WaitGroup
	monitorDone := make(chan struct{})
	background.Go(func() {
		defer close(monitorDone)
		_ = mon.Run(runCtx)
	})
	background.Go(func() { faults.run(runCtx) })
	background.Go(func() { pressScrapeNow(runCtx, mon) })

	cpu0 := testutil.CPUTime()
	inuse0, live0 := heapStats()
	busy0, all0 := hostCPU()
	samples := []soakSample{{Elapsed: 0, Goroutines: baseline, HeapInuse: inuse0, HeapLive: live0, RSS: rss0, procCPU: testutil.CPUTime(), hostBusy: busy0, hostAll: all0}}
	profiles := os.Getenv("VTOP_SOAK_PROFILES")
	for elapsed := soakSampleEvery; elapsed <= duration; elapsed += soakSampleEvery {
		time.Sleep(time.Until(start.Add(elapsed)))
		samples = append(samples, takeSample(elapsed, consumer, samples[len(samples)-1]))
		if profiles != "" && (elapsed == warmUp || elapsed+soakSampleEvery > duration) {
			writeHeapProfile(t, profiles, elapsed)
		}
	}
	cpuUsed := testutil.CPUTime() - cpu0
	wall := time.Since(start)

	stopRun()
	select {
	case <-monitorDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Monitor.Run did not return within 10 s of its context ending")
	}
	background.Wait()
	consumer.stop() // reports delivered after this are not counted
	afterMonitor := settledGoroutines(0, 2*time.Second)
	checkMonitorGone(t)
	censusAfterMonitor := goroutineCensus()
	if err := fleet.Close(); err != nil {
		t.Fatal(err)
	}
	afterClose := settledGoroutines(baseline+soakGoroutineEndSlack, 10*time.Second)

	stats := consumer.snapshot()
	logSummary(t, soakSummary{
		duration: wall, warmUp: warmUp, samples: samples, stats: stats,
		baseline: baseline, afterMonitor: afterMonitor, afterClose: afterClose,
		census: censusAfterMonitor, cpu: cpuUsed, faultChanges: faults.changes,
	})
	_, faultErrs := faults.changes()
	for _, e := range faultErrs {
		t.Error(e)
	}
	checkSoak(t, warmUp, wall, samples, stats, baseline, afterClose)
}

// startSoakFleet serves the mixed fleet, pre-rolled, in real time until
// the test ends, and returns it with its targets.
func startSoakFleet(t *testing.T) (*sim.Fleet, []scrape.Target) {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: soakReplicas, Scenario: sim.Mixed, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(soakPreRoll)
	targets := parseTargets(t, testutil.ServeFleet(context.Background(), t, fleet))
	return fleet, targets
}

// soakGoroutineEndSlack is how many goroutines above the baseline may
// remain once the monitor and the fleet are gone (the runtime and the
// testing package start a few of their own lazily).
const soakGoroutineEndSlack = 5

// checkSoak asserts what the soak run must prove.
func checkSoak(t *testing.T, warmUp, wall time.Duration, samples []soakSample, st consumerStats, baseline, afterClose int) {
	t.Helper()
	for _, p := range st.problems {
		t.Error(p)
	}
	if st.problemCount > len(st.problems) {
		t.Errorf("… and %d more problems", st.problemCount-len(st.problems))
	}
	// Each check must have run, or the soak proved nothing.
	for name, n := range map[string]int{
		"failing replica reported down":              st.checkedFailing,
		"recovered replica reported up":              st.checkedRecovered,
		"healthy replica with known req/s":           st.checkedHealthy,
		"reports after the warm-up":                  st.reportsAfterWarmUp,
		"scrapes of the faulty replicas that failed": int(st.faultyFailed),
	} {
		if n == 0 {
			t.Errorf("no %s was checked: the soak exercised nothing", name)
		}
	}
	if want := int(0.8 * wall.Seconds() / scrape.DefaultInterval.Seconds()); st.reports < want {
		t.Errorf("%d reports in %v, want at least %d (one per interval, 20%% slack)", st.reports, wall.Round(time.Second), want)
	}

	warm := sampleAt(samples, warmUp)
	last := samples[len(samples)-1]
	if limit := warm.Goroutines + goroutineSlack(); last.Goroutines > limit {
		t.Errorf("goroutines grew: %d at the end of the warm-up, %d at the end (limit %d)", warm.Goroutines, last.Goroutines, limit)
	}
	warmFloor, endFloor := heapFloor(samples, warmUp), heapFloor(samples, last.Elapsed)
	if limit := uint64(soakHeapGrowth * float64(warmFloor)); endFloor > limit {
		t.Errorf("heap in use grew: floor %s at the end of the warm-up, %s at the end (limit %s = %.2f×)",
			mib(warmFloor), mib(endFloor), mib(limit), soakHeapGrowth)
	}
	if afterClose > baseline+soakGoroutineEndSlack {
		t.Errorf("%d goroutines after the monitor and the fleet stopped, baseline %d (slack %d)\n%s",
			afterClose, baseline, soakGoroutineEndSlack, formatCensus(goroutineCensus()))
	}
}

// checkMonitorGone checks that nothing survives Monitor.Run: no goroutine
// of vtop's own, and no keep-alive connection of its HTTP client (the
// poller closes them; their read and write loops take a moment to end).
func checkMonitorGone(t *testing.T) {
	t.Helper()
	loops := []string{"net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop"}
	deadline := time.Now().Add(2 * time.Second)
	for {
		census := goroutineCensus()
		left := 0
		for _, loop := range loops {
			left += censusCount(census, loop)
		}
		if left == 0 || time.Now().After(deadline) {
			for start, n := range census {
				if strings.HasPrefix(start, "github.com/vtop-dev/vtop/") && !strings.HasPrefix(start, "github.com/vtop-dev/vtop/sim.") {
					t.Errorf("%d goroutines started in %s outlive Monitor.Run", n, start)
				}
			}
			if left > 0 {
				t.Errorf("%d HTTP connection loops of the client outlive Monitor.Run by 2s", left)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// censusCount sums the census entries of a function (any offset).
func censusCount(census map[string]int, function string) int {
	n := 0
	for start, c := range census {
		if strings.HasPrefix(start, function+"+") {
			n += c
		}
	}
	return n
}

// goroutineSlack is how far the goroutine count may move between two
// samples without a leak: a faulty replica's goroutines depend on its
// fault of the moment (a listener or not, a connection open or not, a
// hanging handler), and they all change their fault every few seconds; a
// leak grows without bound.
func goroutineSlack() int {
	faulty := (soakReplicas + soakFaultyEvery - 1) / soakFaultyEvery
	return 2*faulty + 10
}

// heapFloor is the least heap in use of the samples in the 30 s that end
// at elapsed. Even right after runtime.GC the heap holds whatever the 100
// scrapes in flight hold at that instant, which makes single samples jump
// by a quarter; a leak raises the floor, in-flight work only the peaks.
func heapFloor(samples []soakSample, elapsed time.Duration) uint64 {
	floor := uint64(math.MaxUint64)
	for _, s := range samples {
		if s.Elapsed > elapsed-3*soakSampleEvery && s.Elapsed <= elapsed && s.Elapsed > 0 {
			floor = min(floor, s.HeapInuse)
		}
	}
	return floor
}

// sampleAt returns the first sample taken at or after elapsed.
func sampleAt(samples []soakSample, elapsed time.Duration) soakSample {
	for _, s := range samples {
		if s.Elapsed >= elapsed {
			return s
		}
	}
	return samples[len(samples)-1]
}

// pressScrapeNow asks the monitor for an immediate round now and then, as
// a user pressing "r" would.
func pressScrapeNow(ctx context.Context, mon *monitor.Monitor) {
	tick := time.NewTicker(soakScrapeNowEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			mon.Refresh()
		}
	}
}

// faultCycler moves every third replica through soakFaultCycle, one step
// every soakFaultHold, the replicas staggered across the seconds so that
// changes are spread out and every fault is present at any time.
type faultCycler struct {
	faulty []*sim.Replica // the faulty replicas
	byIdx  map[int]int    // replica index → position in faulty

	mu    sync.Mutex
	state []faultState
	count int
	err   []string
}

// faultState is where one faulty replica is in the cycle. The times are
// when SetFault returned: every scrape that starts later sees the new
// behaviour.
type faultState struct {
	pos int
	// fault is the current fault and faultSince when it began.
	fault      sim.Fault
	faultSince time.Time
	// servingSince is when the replica last went from a failing fault to
	// serving (restart or none); a restart then none is one stretch.
	servingSince time.Time
}

func newFaultCycler(replicas []*sim.Replica, start time.Time) *faultCycler {
	c := &faultCycler{byIdx: map[int]int{}}
	for _, r := range replicas {
		if r.Index()%soakFaultyEvery == 0 {
			c.byIdx[r.Index()] = len(c.faulty)
			c.faulty = append(c.faulty, r)
			// -1: the first step puts replica k at fault k mod the cycle.
			c.state = append(c.state, faultState{pos: -1, fault: sim.FaultNone, faultSince: start, servingSince: start})
		}
	}
	return c
}

// run steps the cycle until ctx is done. The first tick starts every
// faulty replica on its first fault.
func (c *faultCycler) run(ctx context.Context) {
	for k := range c.faulty {
		c.step(k, k%len(soakFaultCycle))
	}
	holdTicks := int(soakFaultHold / time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for k := range c.faulty {
			if (n+k)%holdTicks == 0 {
				c.step(k, -1)
			}
		}
	}
}

// step moves faulty replica k to position pos of the cycle (-1: the next).
func (c *faultCycler) step(k, pos int) {
	c.mu.Lock()
	if pos < 0 {
		pos = (c.state[k].pos + 1) % len(soakFaultCycle)
	}
	c.mu.Unlock()
	f := soakFaultCycle[pos]
	err := c.faulty[k].SetFault(f)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count++
	if err != nil && len(c.err) < 10 {
		c.err = append(c.err, fmt.Sprintf("replica %d: SetFault(%s): %v", c.faulty[k].Index(), f, err))
	}
	st := &c.state[k]
	if !failing(f) && failing(st.fault) {
		st.servingSince = now
	}
	st.pos, st.fault, st.faultSince = pos, f, now
}

// status returns whether replica index is faulty and, if so, its state.
func (c *faultCycler) status(index int) (faultState, bool) {
	k, ok := c.byIdx[index]
	if !ok {
		return faultState{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state[k], true
}

func (c *faultCycler) changes() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count, slices.Clone(c.err)
}

// The settle times allow for the scrape that was in flight when the fault
// changed: the newest sample may have started up to one interval plus one
// timeout (1.8 s) before the report, plus scheduling on a busy machine.
// Leaving DOWN also waits for the hysteresis (a second evaluation).
const (
	failSettle    = 3500 * time.Millisecond
	recoverSettle = failSettle + 2*scrape.DefaultInterval
	// lateSettle is what a fault that times out the scrapes (hang, slow)
	// waits more: it is late, not DOWN, until its third timeout in a row.
	lateSettle = 2 * scrape.DefaultInterval
)

// failSettleOf is how long a failing fault must have held before the
// replica must be DOWN.
func failSettleOf(f sim.Fault) time.Duration {
	if f == sim.FaultHang || f == sim.FaultSlow {
		return failSettle + lateSettle
	}
	return failSettle
}

// soakConsumer checks every report as it is delivered, on the monitor's
// goroutine, the way --jsonl consumes them (it also encodes each one).
type soakConsumer struct {
	targets []scrape.Target
	faults  *faultCycler
	warmEnd time.Time
	poller  *scrape.Poller

	mu       sync.Mutex
	stopped  bool
	st       consumerStats
	snap     []catalogue.Readings
	lastSeen []time.Time
}

// consumerStats is everything the consumer counted.
type consumerStats struct {
	reports, reportsAfterWarmUp                      int
	checkedFailing, checkedRecovered, checkedHealthy int
	healthyOK, healthyFailed                         int64 // scrapes
	faultyOK, faultyFailed                           int64
	maxLag, sumLag                                   time.Duration // report time → delivery
	maxGap                                           time.Duration // between reports
	lastReport                                       time.Time
	healthyErrors                                    []string // the first failed scrapes of healthy targets
	// maxHealthyAge is the oldest newest-good-scrape of a healthy target
	// in a report after the warm-up: how far the others ever fell behind.
	maxHealthyAge time.Duration
	problems      []string
	problemCount  int
}

func newSoakConsumer(targets []scrape.Target, faults *faultCycler, warmEnd time.Time) *soakConsumer {
	return &soakConsumer{targets: targets, faults: faults, warmEnd: warmEnd, lastSeen: make([]time.Time, len(targets))}
}

func (c *soakConsumer) problem(format string, args ...any) {
	c.st.problemCount++
	if len(c.st.problems) < 20 {
		c.st.problems = append(c.st.problems, fmt.Sprintf(format, args...))
	}
}

// consume is the monitor's output.
func (c *soakConsumer) consume(r analysis.Report) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	lag := time.Since(r.Time)
	c.st.reports++
	c.st.sumLag += lag
	c.st.maxLag = max(c.st.maxLag, lag)
	if !c.st.lastReport.IsZero() {
		c.st.maxGap = max(c.st.maxGap, r.Time.Sub(c.st.lastReport))
	}
	c.st.lastReport = r.Time
	if err := json.NewEncoder(io.Discard).Encode(r); err != nil {
		c.problem("report at %s does not encode: %v", r.Time.Format(time.TimeOnly), err)
	}
	c.countScrapes()
	if len(r.Replicas) != len(c.targets) {
		c.problem("report at %s has %d replicas, want %d", r.Time.Format(time.TimeOnly), len(r.Replicas), len(c.targets))
		return nil
	}
	afterWarmUp := r.Time.After(c.warmEnd)
	if afterWarmUp {
		c.st.reportsAfterWarmUp++
	}
	for i := range r.Replicas {
		c.checkReplica(r.Time, i, &r.Replicas[i], afterWarmUp)
	}
	return nil
}

// checkReplica checks one replica of a report against what its fault
// (or lack of one) implies.
func (c *soakConsumer) checkReplica(now time.Time, i int, rep *analysis.ReplicaReport, afterWarmUp bool) {
	at := now.Format(time.TimeOnly)
	if rep.Target != c.targets[i].Name {
		c.problem("%s: replica %d is %q, want %q (order lost)", at, i, rep.Target, c.targets[i].Name)
		return
	}
	if s, ok := controlIn(rep); ok {
		c.problem("%s: %s: control character reaches the screen in %q", at, rep.Target, s)
	}
	fs, faulty := c.faults.status(i)
	// A failing fault is judged on its own time, not the failing stretch:
	// when a slow replica's fault changes, the page it was trickling is
	// sent whole, and that scrape (if it has not timed out) succeeds.
	switch held := now.Sub(fs.faultSince); {
	case faulty && failing(fs.fault) && held >= failSettleOf(fs.fault):
		c.st.checkedFailing++
		if rep.State != analysis.StateDown || rep.Error == "" {
			c.problem("%s: %s in fault %s for %v is %s (error %q), want down with an error",
				at, rep.Target, fs.fault, held.Round(time.Millisecond), rep.State, rep.Error)
		}
	case faulty && !failing(fs.fault) && now.Sub(fs.servingSince) >= recoverSettle:
		c.st.checkedRecovered++
		if rep.State == analysis.StateDown || rep.Error != "" {
			c.problem("%s: %s serving again (%s) for %v is %s (error %q), want up",
				at, rep.Target, fs.fault, now.Sub(fs.servingSince).Round(time.Millisecond), rep.State, rep.Error)
		}
	case !faulty && afterWarmUp:
		// The others must never be stalled by the faulty third.
		c.st.checkedHealthy++
		if !rep.LastGood.IsZero() {
			c.st.maxHealthyAge = max(c.st.maxHealthyAge, now.Sub(rep.LastGood))
		}
		if rep.State == analysis.StateDown || !rep.RequestsPerSecond.Known() || !rep.Running.Known() {
			c.problem("%s: healthy %s is %s, req/s %v, running %v, error %q: stalled by the faulty ones?",
				at, rep.Target, rep.State, rep.RequestsPerSecond.Float(), rep.Running.Float(), rep.Error)
		}
	}
}

// controlIn returns the first text of rep that is not safe to draw.
func controlIn(rep *analysis.ReplicaReport) (string, bool) {
	texts := append([]string{rep.Target, rep.Model, rep.Error, rep.Action}, rep.Reasons...)
	return firstUnsafe(append(texts, rep.Warnings...)...)
}

// countScrapes counts the samples pushed since the previous report, from
// the poller's rings: every scrape, good or failed, is one sample.
func (c *soakConsumer) countScrapes() {
	if c.poller == nil {
		return
	}
	c.snap = c.poller.Readings(c.snap)
	for i, in := range c.snap {
		_, faulty := c.faults.status(i)
		for _, s := range in.Samples {
			if !s.Time.After(c.lastSeen[i]) {
				continue
			}
			c.lastSeen[i] = s.Time
			switch {
			case faulty && s.OK():
				c.st.faultyOK++
			case faulty:
				c.st.faultyFailed++
			case s.OK():
				c.st.healthyOK++
			default:
				c.st.healthyFailed++
				if len(c.st.healthyErrors) < 10 {
					c.st.healthyErrors = append(c.st.healthyErrors,
						fmt.Sprintf("%s %s: %s", s.Time.Format("15:04:05.000"), in.Target, s.Err))
				}
			}
		}
	}
}

func (c *soakConsumer) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.snap = nil
}

func (c *soakConsumer) snapshot() consumerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	st.problems = slices.Clone(st.problems)
	st.healthyErrors = slices.Clone(st.healthyErrors)
	return st
}

// soakSample is one row of the summary table.
type soakSample struct {
	Elapsed    time.Duration
	Goroutines int
	HeapInuse  uint64
	HeapLive   uint64 // bytes of live objects
	RSS        uint64 // 0 when unknown
	// ProcCPU and HostCPU are the cores this process and the whole machine
	// kept busy since the previous sample: other work on the machine
	// explains timeouts that vtop alone would not.
	ProcCPU, HostCPU  float64
	procCPU           time.Duration
	hostBusy, hostAll uint64
	Reports           int
	Scrapes           int64
}

func takeSample(elapsed time.Duration, c *soakConsumer, prev soakSample) soakSample {
	s := soakSample{Elapsed: elapsed, Goroutines: runtime.NumGoroutine(), RSS: readRSS()}
	s.procCPU = testutil.CPUTime()
	s.hostBusy, s.hostAll = hostCPU()
	s.HeapInuse, s.HeapLive = heapStats()
	st := c.snapshot()
	s.Reports = st.reports
	s.Scrapes = st.healthyOK + st.healthyFailed + st.faultyOK + st.faultyFailed
	span := (elapsed - prev.Elapsed).Seconds()
	s.ProcCPU = (s.procCPU - prev.procCPU).Seconds() / span
	if s.hostAll > prev.hostAll {
		// /proc/stat counts in ticks summed over every core.
		s.HostCPU = float64(s.hostBusy-prev.hostBusy) / float64(s.hostAll-prev.hostAll) * float64(runtime.NumCPU())
	}
	return s
}

// hostCPU returns the busy and total CPU ticks of the machine from the
// first line of /proc/stat (Linux; zeros elsewhere).
func hostCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0
	}
	for i, f := range fields[1:] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0
		}
		total += n
		if i != 3 && i != 4 { // idle and iowait
			busy += n
		}
	}
	return busy, total
}

// heapStats returns the heap in use (spans) and the live bytes after a
// full collection.
func heapStats() (inuse, live uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.HeapAlloc
}

// writeHeapProfile saves a heap profile into dir (from
// $VTOP_SOAK_PROFILES), to compare with go tool pprof -diff_base.
func writeHeapProfile(t *testing.T, dir string, elapsed time.Duration) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("heap-%04ds.pprof", int(elapsed.Seconds())))
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("heap profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Errorf("heap profile: %v", err)
	}
	t.Logf("heap profile written to %s", path)
}

// readRSS returns the resident set size from /proc/self/status (Linux),
// 0 where it cannot be read.
func readRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// settledGoroutines waits up to wait for the goroutine count to fall to
// target (0: for it to stop falling) and returns it.
func settledGoroutines(target int, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	n := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		if target > 0 && n <= target {
			return n
		}
		time.Sleep(100 * time.Millisecond)
		next := runtime.NumGoroutine()
		if target == 0 && next >= n {
			return next
		}
		n = next
	}
	return n
}

// goroutineCensus counts the live goroutines by the function they started
// in: evidence for a leak report.
func goroutineCensus() map[string]int {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return nil
	}
	census := map[string]int{}
	for _, block := range strings.Split(buf.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		count, _, ok := strings.Cut(lines[0], " @ ")
		n, err := strconv.Atoi(count)
		if !ok || err != nil {
			continue
		}
		var start string
		for _, l := range lines[1:] {
			if fields := strings.Fields(l); len(fields) >= 3 && fields[0] == "#" {
				start = fields[2] // the last frame is where it started
			}
		}
		census[start] += n
	}
	return census
}

func formatCensus(census map[string]int) string {
	names := make([]string, 0, len(census))
	for name := range census {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return census[b] - census[a] })
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "  %5d  %s\n", census[name], name)
	}
	return b.String()
}

// soakSummary is what the summary prints.
type soakSummary struct {
	duration, warmUp       time.Duration
	samples                []soakSample
	stats                  consumerStats
	baseline, afterMonitor int
	afterClose             int
	census                 map[string]int
	cpu                    time.Duration
	faultChanges           func() (int, []string)
}

func logSummary(t *testing.T, s soakSummary) {
	t.Helper()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "elapsed\tgoroutines\theap in use\tlive heap\tRSS\treports\tscrapes\tCPU (test)\tCPU (host)\t")
	for _, row := range s.samples {
		note := ""
		if row.Elapsed == s.warmUp {
			note = "  ← end of warm-up"
		}
		fmt.Fprintf(tw, "%v\t%d\t%s\t%s\t%s\t%d\t%d\t%.2f\t%.2f\t%s\n", row.Elapsed, row.Goroutines,
			mib(row.HeapInuse), mib(row.HeapLive), mib(row.RSS), row.Reports, row.Scrapes, row.ProcCPU, row.HostCPU, note)
	}
	_ = tw.Flush()
	st := s.stats
	changes, _ := s.faultChanges()
	meanLag := time.Duration(0)
	if st.reports > 0 {
		meanLag = st.sumLag / time.Duration(st.reports)
	}
	fmt.Fprintf(&b, "\nran %v (warm-up %v), %d replicas, one in %d faulty, fault changed every %v (%d changes)\n",
		s.duration.Round(time.Second), s.warmUp, soakReplicas, soakFaultyEvery, soakFaultHold, changes)
	fmt.Fprintf(&b, "reports: %d (%d after warm-up), max gap %v, analysis+delivery lag mean %v max %v\n",
		st.reports, st.reportsAfterWarmUp, st.maxGap.Round(time.Millisecond), meanLag.Round(time.Microsecond), st.maxLag.Round(time.Microsecond))
	fmt.Fprintf(&b, "scrapes: healthy %d ok / %d failed; faulty %d ok / %d failed\n",
		st.healthyOK, st.healthyFailed, st.faultyOK, st.faultyFailed)
	fmt.Fprintf(&b, "healthy targets: oldest last good scrape in a report after the warm-up %v\n", st.maxHealthyAge.Round(time.Millisecond))
	for _, e := range st.healthyErrors {
		fmt.Fprintf(&b, "  healthy scrape failed: %s\n", e)
	}
	fmt.Fprintf(&b, "checks: %d failing-replica, %d recovered-replica, %d healthy-replica; problems %d\n",
		st.checkedFailing, st.checkedRecovered, st.checkedHealthy, st.problemCount)
	fmt.Fprintf(&b, "CPU: %v over %v = %.2f cores (sim fleet and vtop together)\n",
		s.cpu.Round(time.Millisecond), s.duration.Round(time.Second), s.cpu.Seconds()/s.duration.Seconds())
	fmt.Fprintf(&b, "goroutines: baseline %d, after the monitor stopped %d, after the fleet closed %d\n",
		s.baseline, s.afterMonitor, s.afterClose)
	fmt.Fprintf(&b, "goroutines left after the monitor stopped, by start function:\n%s", formatCensus(s.census))
	t.Log("soak summary\n" + b.String())
}

func mib(n uint64) string {
	if n == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
