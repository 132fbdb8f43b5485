package promsource

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/monitor"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// The integration test's rhythm: Prometheus scrapes every second, the
// source refreshes every second over a 10 s window.
const (
	itScrape   = time.Second
	itInterval = time.Second
	itWindow   = 10 * time.Second
)

// fleetUnderPrometheus serves a mixed simulated fleet on loopback and a
// real Prometheus scraping it, and waits until Prometheus holds a full
// window. It returns the fleet, the server and each replica's instance.
func fleetUnderPrometheus(t *testing.T, replicas int) (*sim.Fleet, *testutil.Prometheus, []string) {
	t.Helper()
	testutil.PrometheusTool(t, "prometheus") // skip before serving anything
	fleet, err := sim.NewFleet(sim.Options{Replicas: replicas, Scenario: sim.Mixed, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	urls := testutil.ServeFleet(t.Context(), t, fleet)
	instances := make([]string, len(urls))
	for i, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = pu.Host
	}
	prom := testutil.StartPrometheus(t, itScrape, instances)
	prom.WaitForWindow(itWindow + 2*itScrape)
	return fleet, prom, instances
}

// runSource runs a source of the server until the test ends.
func runSource(t *testing.T, cfg Config) *Source {
	t.Helper()
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = src.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return src
}

// report refreshes and evaluates the source's readings at its time. The
// source also refreshes on its own: the time and the readings are taken
// again until both come from the same refresh.
func report(src *Source, cfg analysis.Config) analysis.Report {
	<-src.Refresh()
	for {
		at := src.Now()
		readings := src.Readings(nil)
		if src.Now().Equal(at) {
			return analysis.Analyze(at, readings, cfg, nil)
		}
	}
}

// promFigure is one figure of a replica and the PromQL that computes it.
type promFigure struct {
	name string
	expr string // by instance, at the report's time
	get  func(*analysis.ReplicaReport) analysis.Num
}

func promFigures(window time.Duration) []promFigure {
	w := fmt.Sprintf("[%dms]", window.Milliseconds())
	return []promFigure{
		{"requests/s", "sum by (instance) (rate(vllm:request_success_total" + w + "))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.RequestsPerSecond }},
		{"generation tokens/s", "sum by (instance) (rate(vllm:generation_tokens_total" + w + "))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.GenerationTokensPerSecond }},
		{"running", "sum by (instance) (vllm:num_requests_running)",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.Running }},
		{"p99 TTFT", "histogram_quantile(0.99, sum by (instance, le) (rate(vllm:time_to_first_token_seconds_bucket" + w + ")))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.TTFT.P99 }},
		{"p50 ITL", "histogram_quantile(0.5, sum by (instance, le) (rate(vllm:inter_token_latency_seconds_bucket" + w + ")))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.ITL.P50 }},
	}
}

// byInstance indexes a vector by its instance label.
func byInstance(v model.Vector) map[string]float64 {
	out := make(map[string]float64, len(v))
	for _, s := range v {
		out[string(s.Metric["instance"])] = float64(s.Value)
	}
	return out
}

// sameFigure reports whether vtop's figure equals PromQL's to 1e-6
// relative; both unknown (absent or NaN) is equal.
func sameFigure(got analysis.Num, want float64, present bool) bool {
	if !present || math.IsNaN(want) {
		return !got.Known()
	}
	g := float64(got)
	return g == want || math.Abs(g-want) <= 1e-6*math.Max(math.Abs(g), math.Abs(want))
}

func replicaNamed(r *analysis.Report, name string) *analysis.ReplicaReport {
	for i := range r.Replicas {
		if r.Replicas[i].Target == name {
			return &r.Replicas[i]
		}
	}
	return nil
}

func TestAgainstPrometheus(t *testing.T) {
	fleet, prom, instances := fleetUnderPrometheus(t, 4)
	acfg := analysis.DefaultConfig()
	acfg.Window = itWindow
	cfg := Config{URL: prom.URL(), Selector: `{job="vllm"}`, Interval: itInterval, Window: itWindow}

	t.Run("figures equal PromQL at the report's time", func(t *testing.T) {
		src := runSource(t, cfg)
		for round := range 6 {
			rep := report(src, acfg)
			checkExact(t, prom, &rep, instances, round)
			time.Sleep(itInterval * 7 / 10) // let the source refresh on its own too
		}
		if st := src.Status(); !st.OK() {
			t.Errorf("status: %+v", st)
		}
		// The rounds after the first read only what was new: the
		// comparison covers the increments, not only full reads.
		if st := src.Stats(); st.FullReads != 1 || st.Refreshes < 6 {
			t.Errorf("%d refreshes, %d of them full: want one full read and increments after it", st.Refreshes, st.FullReads)
		}
	})

	t.Run("first report has full-window rates", func(t *testing.T) {
		src, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		first := firstMonitorReport(t, src, acfg)
		if len(first.Replicas) != len(instances) {
			t.Fatalf("first report has %d replicas, want %d", len(first.Replicas), len(instances))
		}
		for _, r := range first.Replicas {
			if r.WarmingUp || r.Samples < int(itWindow/itScrape)-1 || !r.Figures.RequestsPerSecond.Known() {
				t.Errorf("%s: warming up %v, %d samples in the window, requests/s %v", r.Target, r.WarmingUp, r.Samples, r.Figures.RequestsPerSecond)
			}
		}
	})

	t.Run("a group of instances sums as PromQL does", func(t *testing.T) {
		checkGroup(t, cfg, acfg, prom, instances)
	})

	t.Run("history ends where the live figures are", func(t *testing.T) {
		checkHistory(t, cfg, acfg, instances)
	})

	t.Run("a killed replica is DOWN when Prometheus notices", func(t *testing.T) {
		checkKilledReplica(t, cfg, acfg, fleet, prom, instances)
	})

	t.Run("Prometheus stopped and started again", func(t *testing.T) {
		checkPrometheusRestart(t, cfg, acfg, prom, instances)
	})
}

// checkExact compares every figure of every replica with PromQL at the
// report's time.
func checkExact(t *testing.T, prom *testutil.Prometheus, rep *analysis.Report, instances []string, round int) {
	t.Helper()
	if len(rep.Replicas) != len(instances) {
		t.Fatalf("round %d: %d replicas, want %d", round, len(rep.Replicas), len(instances))
	}
	known := 0
	for _, f := range promFigures(itWindow) {
		want := byInstance(prom.Vector(f.expr, rep.Time))
		for _, inst := range instances {
			r := replicaNamed(rep, inst)
			if r == nil {
				t.Fatalf("round %d: no replica named %s", round, inst)
			}
			w, ok := want[inst]
			if !sameFigure(f.get(r), w, ok) {
				t.Errorf("round %d: %s %s = %v, PromQL says %v (present %v)", round, inst, f.name, f.get(r), w, ok)
			}
			if f.get(r).Known() {
				known++
			}
		}
	}
	if known < len(instances)*3 {
		t.Errorf("round %d: only %d figures known: the comparison proves little", round, known)
	}
}

// firstMonitorReport runs a monitor on src, with all it can do as vtop
// wires it, and returns its first report.
func firstMonitorReport(t *testing.T, src *Source, acfg analysis.Config) analysis.Report {
	t.Helper()
	reports := make(chan analysis.Report, 10)
	ms := monitor.Source{Feed: src, ReadingsAt: src.ReadingsAt, Status: src.Status, History: src.History,
		SetWindow: src.SetWindow, SetWanted: src.SetWanted, SetInView: src.SetInView}
	m := monitor.New(ms, acfg, func(r analysis.Report) error { reports <- r; return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case r := <-reports:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no report within 30 s")
	}
	return analysis.Report{}
}

// checkKilledReplica kills one replica and measures when the source's
// report turns it DOWN against when Prometheus recorded up = 0.
func checkKilledReplica(t *testing.T, cfg Config, acfg analysis.Config, fleet *sim.Fleet, prom *testutil.Prometheus, instances []string) {
	src := runSource(t, cfg)
	victim := instances[1]
	if err := fleet.Replicas()[1].SetFault(sim.FaultDown); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fleet.Replicas()[1].SetFault(sim.FaultNone) }()
	var down analysis.Report
	testutil.WaitFor(t, 30*time.Second, "victim DOWN", func() bool {
		down = analysis.Analyze(src.Now(), src.Readings(nil), acfg, nil)
		r := replicaNamed(&down, victim)
		return r != nil && r.State == analysis.StateDown
	})
	noticed := firstUpZero(t, prom, victim, down.Time)
	if lag := down.Time.Sub(noticed); lag > 2*cfg.Interval {
		t.Errorf("DOWN at %s, %s after Prometheus recorded up = 0 at %s; want within %s", down.Time.Format("15:04:05.000"), lag, noticed.Format("15:04:05.000"), 2*cfg.Interval)
	}
	r := replicaNamed(&down, victim)
	if !strings.Contains(r.Error, "up is 0") {
		t.Errorf("victim's error %q does not say up is 0", r.Error)
	}
	for _, o := range down.Replicas {
		if o.Target != victim && (o.State == analysis.StateDown || !o.Figures.RequestsPerSecond.Known()) {
			t.Errorf("%s: %s, requests/s %v: the others must keep their figures", o.Target, o.State, o.Figures.RequestsPerSecond)
		}
	}
	checkLongDead(t, cfg, acfg, victim, noticed, len(instances))
}

// checkLongDead: once a killed replica has failed for longer than the
// window, its series are stale in Prometheus and only its up (0) is
// left; a source begun then still lists it DOWN, counted down in the
// fleet and the advice, and so does the past at that moment.
func checkLongDead(t *testing.T, cfg Config, acfg analysis.Config, victim string, noticed time.Time, replicas int) {
	t.Helper()
	keep := itWindow + 2*itInterval
	testutil.WaitFor(t, 30*time.Second, "a window of failures", func() bool { return time.Since(noticed) > keep+3*itScrape })
	rep := report(runSource(t, cfg), acfg)
	r := replicaNamed(&rep, victim)
	if len(rep.Replicas) != replicas || r == nil || r.State != analysis.StateDown || !strings.Contains(r.Error, "up is 0") ||
		rep.Fleet.Down != 1 || rep.Fleet.Advice.Uncounted != 1 {
		t.Errorf("a source begun %s after the kill: %d replicas, victim %v, fleet down %d, advice uncounted %d; want %d, the victim DOWN (up is 0), counted down",
			rep.Time.Sub(noticed).Round(time.Second), len(rep.Replicas), r, rep.Fleet.Down, rep.Fleet.Advice.Uncounted, replicas)
	}
	// Since when, from up's history beyond the window.
	if r != nil && (!r.DownSince.Equal(noticed) || r.LastGood.IsZero() || !r.LastGood.Before(noticed)) {
		t.Errorf("the victim DOWN since %s, last good %s; want since Prometheus's first up = 0 at %s, after its last good scrape",
			r.DownSince.Format("15:04:05.000"), r.LastGood.Format("15:04:05.000"), noticed.Format("15:04:05.000"))
	}
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	past, err := src.Past(t.Context(), rep.Time.Add(-keep), rep.Time)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(past.Targets, func(pt PastTarget) bool { return pt.Name == victim })
	if len(past.Targets) != replicas || i < 0 {
		t.Fatalf("the past's targets %v: want the %d replicas, %s among them", past.Targets, replicas, victim)
	}
	var newest catalogue.Sample
	err = past.ReadSamples(t.Context(), func(samples []PastSample) error {
		for _, ps := range samples {
			if ps.Target == i {
				newest = ps.Sample
			}
		}
		return nil
	})
	if err != nil || !strings.Contains(newest.Err, "up is 0") {
		t.Errorf("the past of %s: newest sample %v (error %q), %v; want a failed scrape", victim, newest.Time, newest.Err, err)
	}
}

// firstUpZero is the time of the first failed scrape of instance in the
// window before t.
func firstUpZero(t *testing.T, prom *testutil.Prometheus, instance string, at time.Time) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, _, _, err := prom.API().Query(ctx, fmt.Sprintf("up{instance=%q}[30s]", instance), at)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(model.Matrix)
	for _, s := range m {
		for i, p := range s.Values {
			if p.Value == 0 && (i == 0 || s.Values[i-1].Value == 1) {
				return p.Timestamp.Time()
			}
		}
	}
	t.Fatalf("Prometheus has no up = 0 of %s before %s", instance, at)
	return time.Time{}
}

// checkPrometheusRestart stops the server under a running source, checks
// the error, starts it again on the same data and checks the figures come
// back without a new source.
func checkPrometheusRestart(t *testing.T, cfg Config, acfg analysis.Config, prom *testutil.Prometheus, instances []string) {
	src := runSource(t, cfg)
	testutil.WaitFor(t, 30*time.Second, "all replicas up", func() bool { return allUp(report(src, acfg), len(instances)) })
	prom.Stop()
	var rep analysis.Report
	testutil.WaitFor(t, 30*time.Second, "the error of a stopped Prometheus", func() bool {
		rep = report(src, acfg)
		return !src.Status().OK()
	})
	st := src.Status()
	if !strings.Contains(st.Problem, "connection refused") || strings.Contains(st.Problem, "Prometheus") ||
		st.Name != "Prometheus "+prom.URL() || st.LastGood.IsZero() || !st.Checked.After(st.LastGood) {
		t.Errorf("status %+v: want the server named once, connection refused, and the data's age", st)
	}
	// The server failed, not the replicas: they keep their last data and
	// verdict (the monitor marks them stale), none DOWN for it.
	for _, r := range rep.Replicas {
		if r.State == analysis.StateDown || r.LastGood.IsZero() || !r.Figures.Running.Known() || !r.Figures.RequestsPerSecond.Known() {
			t.Errorf("%s: %s, error %q, last good %v, running %v: want its last verdict and data", r.Target, r.State, r.Error, r.LastGood, r.Figures.Running)
		}
	}
	if len(rep.Replicas) != len(instances) {
		t.Errorf("%d replicas while Prometheus is down, want the %d known", len(rep.Replicas), len(instances))
	}
	prom.Start()
	testutil.WaitFor(t, 60*time.Second, "figures back", func() bool { return allUp(report(src, acfg), len(instances)) })
	if st := src.Status(); !st.OK() {
		t.Errorf("status after the restart: %+v", st)
	}
}

// allUp reports whether n replicas are reported, none DOWN, all with
// request rates.
func allUp(r analysis.Report, n int) bool {
	if len(r.Replicas) != n {
		return false
	}
	for _, x := range r.Replicas {
		if x.State == analysis.StateDown || !x.Figures.RequestsPerSecond.Known() {
			return false
		}
	}
	return true
}

// checkHistory loads the history and checks that at its newest point every
// charted figure equals what the live readings give at that instant: the
// history's PromQL and the analysis agree, replica names included.
func checkHistory(t *testing.T, cfg Config, acfg analysis.Config, instances []string) {
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := src.History(t.Context(), 12*time.Second, 12)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(instances) {
		t.Fatalf("history of %d replicas, want %d", len(hist), len(instances))
	}
	at := hist[0].Points[len(hist[0].Points)-1].Time
	f, err := src.fetch(t.Context(), at, itWindow, itWindow, true, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	src.apply(at, itWindow, f)
	live := analysis.Analyze(at, src.snapshot(), acfg, nil)
	compared := 0
	for _, th := range hist {
		if len(th.Points) < 10 || !th.Points[len(th.Points)-1].Time.Equal(at) {
			t.Errorf("%s: %d points, newest at %v; want ≥ 10 ending at %v", th.Target, len(th.Points), th.Points[len(th.Points)-1].Time, at)
			continue
		}
		r := replicaNamed(&live, th.Target)
		if r == nil {
			t.Fatalf("history names %q, the live readings do not", th.Target)
		}
		want := monitor.Points([]catalogue.TargetHistory{{Target: "live", Points: []catalogue.HistoryPoint{livePoint(r)}}})["live"][0]
		got := monitor.Points([]catalogue.TargetHistory{{Target: th.Target, Points: th.Points[len(th.Points)-1:]}})[th.Target][0]
		gv, wv := pointValues(got), pointValues(want)
		for i := range gv {
			if !sameFigure(analysis.Num(gv[i]), wv[i], !math.IsNaN(wv[i])) && !(math.IsNaN(gv[i]) && math.IsNaN(wv[i])) {
				t.Errorf("%s: figure %d: history %v, live %v", th.Target, i, gv[i], wv[i])
			}
			if !math.IsNaN(wv[i]) {
				compared++
			}
		}
	}
	if compared < len(instances)*10 {
		t.Errorf("only %d figures known: the comparison proves little", compared)
	}
}

// livePoint is a replica's charted figures as a history point.
func livePoint(r *analysis.ReplicaReport) catalogue.HistoryPoint {
	var hp catalogue.HistoryPoint
	for c := range catalogue.NumChartFigures {
		hp.Values[c] = float64(r.Figures.Chart(c))
	}
	return hp
}

// pointValues lists a point's figures (narrowed to float32 by the point).
func pointValues(p analysis.Point) []float64 {
	out := make([]float64, catalogue.NumChartFigures)
	for c := range catalogue.NumChartFigures {
		out[c] = float64(*p.Chart(c))
	}
	return out
}

// checkGroup reads the fleet as one group (--group-by job) and compares
// its figures with PromQL's sum over the instances: the rates equal
// sum(rate(x[w])) and the gauges sum(x), and the group says how many
// instances it holds.
func checkGroup(t *testing.T, cfg Config, acfg analysis.Config, prom *testutil.Prometheus, instances []string) {
	cfg.GroupBy = "job"
	src := runSource(t, cfg)
	w := fmt.Sprintf("[%dms]", itWindow.Milliseconds())
	figures := []promFigure{
		{"requests/s", "sum by (job) (rate(vllm:request_success_total" + w + "))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.RequestsPerSecond }},
		{"generation tokens/s", "sum by (job) (rate(vllm:generation_tokens_total" + w + "))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.GenerationTokensPerSecond }},
		{"prompt tokens/s", "sum by (job) (rate(vllm:prompt_tokens_total" + w + "))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.PromptTokensPerSecond }},
		{"running", "sum by (job) (vllm:num_requests_running)",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.Running }},
		{"waiting", "sum by (job) (vllm:num_requests_waiting)",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.Waiting }},
		{"p99 TTFT", "histogram_quantile(0.99, sum by (job, le) (rate(vllm:time_to_first_token_seconds_bucket" + w + ")))",
			func(r *analysis.ReplicaReport) analysis.Num { return r.Figures.TTFT.P99 }},
	}
	for round := range 4 {
		rep := report(src, acfg)
		if len(rep.Replicas) != 1 || rep.Replicas[0].Target != "vllm" {
			t.Fatalf("round %d: replicas %d, want the one group vllm", round, len(rep.Replicas))
		}
		r := &rep.Replicas[0]
		if r.Instances != len(instances) {
			t.Errorf("round %d: the group holds %d instances, says %d", round, len(instances), r.Instances)
		}
		if r.Restarted || r.State == analysis.StateDown {
			t.Errorf("round %d: group %s, restarted %v (%q)", round, r.State, r.Restarted, r.Reasons)
		}
		for _, f := range figures {
			v := prom.Vector(f.expr, rep.Time)
			if len(v) != 1 {
				t.Fatalf("round %d: %s: PromQL answered %d series", round, f.name, len(v))
			}
			want, got := float64(v[0].Value), float64(f.get(r))
			// The rates are PromQL's to rounding; a quantile of summed
			// buckets is PromQL's as well.
			if !f.get(r).Known() || math.Abs(got-want) > 1e-6*math.Max(math.Abs(want), 1) {
				t.Errorf("round %d: group %s = %v, PromQL's sum says %v", round, f.name, got, want)
			}
		}
		time.Sleep(itInterval * 7 / 10)
	}
}
