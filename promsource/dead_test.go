package promsource

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
)

// upOf is the up series of a target: job, instance, pod, then (seconds
// before t0, value) pairs.
func upOf(job, instance, pod string, points ...[2]float64) *model.SampleStream {
	labels := map[string]string{"__name__": "up", "job": job, "instance": instance}
	if pod != "" {
		labels["pod"] = pod
	}
	return series(labels, points...)
}

// failedFor is up = 0 every second over the 10 s window.
func failedFor(job, instance, pod string) *model.SampleStream {
	var pts [][2]float64
	for s := 9.5; s >= 0; s-- {
		pts = append(pts, [2]float64{s, 0})
	}
	return upOf(job, instance, pod, pts...)
}

// Every target Prometheus scrapes for the fleet is a replica: one whose
// scrapes failed over the whole window (it died before vtop began to
// read) has no series in the window, only up = 0, and is DOWN with
// Prometheus's reason, counted in the fleet and its advice. A failing
// target is the fleet's when its job is (some target of the job has
// series vtop reads) and no target with series names the same replica
// (then it is that replica's sidecar, its own business).
func TestDeadTargetsAreReplicas(t *testing.T) {
	alive := steady(lbl("vllm:num_requests_running", "pod", "a"), 3, 0)
	aliveUp := upOf("vllm", "10.0.0.1:8000", "a", [2]float64{0.5, 1})
	tests := []struct {
		name     string
		up       model.Matrix
		wantDown []string // replicas DOWN, by name
		want     int      // replicas listed
	}{
		{"a target down the whole window", model.Matrix{aliveUp, failedFor("vllm", "10.0.0.2:8000", "b")}, []string{"b"}, 2},
		{"named by its instance without a pod", model.Matrix{aliveUp, failedFor("vllm", "10.0.0.3:8000", "")}, []string{"10.0.0.3:8000"}, 2},
		{"a target of a job with no series vtop reads", model.Matrix{aliveUp, failedFor("node", "10.0.0.9:9100", "")}, nil, 1},
		{"a sidecar of a replica with series", model.Matrix{aliveUp, failedFor("vllm", "10.0.0.1:9100", "a")}, nil, 1},
		{"a target that failed and answers again", model.Matrix{aliveUp, upOf("vllm", "10.0.0.2:8000", "b", [2]float64{5, 0}, [2]float64{0.5, 1})}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := analyze(t, testSource(t, Config{Interval: time.Second}), model.Matrix{alive}, tt.up)
			if len(rep.Replicas) != tt.want {
				t.Fatalf("%d replicas (%v), want %d", len(rep.Replicas), targets(rep), tt.want)
			}
			var down []string
			for _, r := range rep.Replicas {
				if r.State == analysis.StateDown {
					down = append(down, r.Target)
					if !strings.Contains(r.Error, "Prometheus cannot scrape") || !strings.Contains(r.Error, "(up is 0)") {
						t.Errorf("%s: error %q, want Prometheus's failed scrape", r.Target, r.Error)
					}
					if r.FailedScrapes != 10 || !r.DownSince.Equal(t0.Add(-9500*time.Millisecond)) {
						t.Errorf("%s: %d failed since %s, want the 10 of the window since its first", r.Target, r.FailedScrapes, r.DownSince)
					}
				}
			}
			if strings.Join(down, " ") != strings.Join(tt.wantDown, " ") {
				t.Errorf("DOWN %q, want %q", down, tt.wantDown)
			}
			if rep.Fleet.Down != len(tt.wantDown) || rep.Fleet.Advice.Uncounted != len(tt.wantDown) {
				t.Errorf("fleet down %d, advice uncounted %d; want %d", rep.Fleet.Down, rep.Fleet.Advice.Uncounted, len(tt.wantDown))
			}
		})
	}
}

func targets(rep analysis.Report) []string {
	var out []string
	for _, r := range rep.Replicas {
		out = append(out, r.Target+" "+r.State.String())
	}
	return out
}

// A dead target stays a DOWN replica as long as Prometheus still has it
// (its up keeps coming, 0), however long ago its series stopped; once
// Prometheus drops it (no up any more), it goes after Forget as any
// replica whose data stopped.
func TestDeadTargetsStayWhilePrometheusHasThem(t *testing.T) {
	s := testSource(t, Config{Interval: time.Second, Forget: time.Minute})
	alive := fetched{raw: decodedOf(model.Matrix{steady(lbl("vllm:num_requests_running", "pod", "a"), 3, 0)})}
	dead := failedFor("vllm", "10.0.0.2:8000", "b")
	listed := func(at time.Time, f fetched) *analysis.ReplicaReport {
		s.apply(at, 10*time.Second, f)
		rep := analysis.Analyze(at, s.snapshot(), analysis.DefaultConfig(), nil)
		for i := range rep.Replicas {
			if rep.Replicas[i].Target == "b" {
				return &rep.Replicas[i]
			}
		}
		return nil
	}
	withUp := func(d time.Duration) fetched {
		f := shift(alive, d)
		f.up = shift(fetched{raw: decodedOf(model.Matrix{dead})}, d).raw
		return f
	}
	if b := listed(t0, withUp(0)); b == nil || b.State != analysis.StateDown {
		t.Fatalf("at first: b %v, want DOWN", b)
	}
	if b := listed(t0.Add(10*time.Minute), withUp(10*time.Minute)); b == nil || b.State != analysis.StateDown {
		t.Fatalf("10 minutes on, up still 0: b %v, want DOWN", b)
	}
	if b := listed(t0.Add(10*time.Minute+30*time.Second), shift(alive, 10*time.Minute+30*time.Second)); b == nil {
		t.Fatalf("30 s after Prometheus dropped it: b gone, want it kept for Forget")
	}
	if b := listed(t0.Add(12*time.Minute), shift(alive, 12*time.Minute)); b != nil {
		t.Errorf("2 minutes after Prometheus dropped it: b %s, want forgotten", b.State)
	}
}

// The past lists the dead targets too: the targets of the stretch are
// those with series vtop reads and, by the same rule as the live source,
// those whose scrapes failed.
func TestPastTargetsIncludeDeadOnes(t *testing.T) {
	withSeries := model.Matrix{
		&model.SampleStream{Metric: model.Metric{"job": "vllm", "instance": "10.0.0.1:8000", "pod": "a"}},
	}
	failed := model.Matrix{
		&model.SampleStream{Metric: model.Metric{"job": "vllm", "instance": "10.0.0.2:8000", "pod": "b"}},
		&model.SampleStream{Metric: model.Metric{"job": "vllm", "instance": "10.0.0.1:9100", "pod": "a"}}, // a's sidecar
		&model.SampleStream{Metric: model.Metric{"job": "node", "instance": "10.0.0.9:9100"}},             // not the fleet's
	}
	p := &Past{src: testSource(t, Config{}), index: map[scrapeTarget]int{}}
	p.name(withSeries, failed)
	var got []string
	for _, tg := range p.Targets {
		got = append(got, tg.Name+"="+tg.Instance)
	}
	if want := "a=10.0.0.1:8000 b=10.0.0.2:8000"; strings.Join(got, " ") != want {
		t.Errorf("targets %q, want %q", got, want)
	}
	// Its failed scrapes are its samples.
	up := decodedOf(model.Matrix{failedFor("vllm", "10.0.0.2:8000", "b")})
	after, through := model.TimeFromUnixNano(t0.Add(-10*time.Second).UnixNano()), model.TimeFromUnixNano(t0.UnixNano())
	n := 0
	for _, ps := range p.samples(nil, up, after, through) {
		if p.Targets[ps.Target].Name == "b" && strings.Contains(ps.Sample.Err, "(up is 0)") {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d failed scrapes of b, want 10", n)
	}
}

// A dead target says when it went down, from up's history: a whole read
// reads up further back than the window (upLookBack), and the run of
// failures is kept between refreshes, so that a replica dead for longer
// than the window is DOWN since its first failed scrape, with the last
// good one, and stays so as the next refreshes read up over the window
// alone.
func TestDeadTargetsSayWhenTheyWentDown(t *testing.T) {
	var pts [][2]float64
	for s := 59.5; s >= 0; s-- {
		v := 1.0
		if s < 40 {
			v = 0
		}
		pts = append(pts, [2]float64{s, v})
	}
	s := testSource(t, Config{Interval: time.Second})
	alive := fetched{raw: decodedOf(model.Matrix{steady(lbl("vllm:num_requests_running", "pod", "a"), 3, 0)})}
	f := alive
	f.up = decodedOf(model.Matrix{upOf("vllm", "10.0.0.2:8000", "b", pts...)})
	check := func(at time.Time, f fetched, failed int) {
		t.Helper()
		s.apply(at, 10*time.Second, f)
		rep := analysis.Analyze(at, s.snapshot(), analysis.DefaultConfig(), nil)
		var b *analysis.ReplicaReport
		for i := range rep.Replicas {
			if rep.Replicas[i].Target == "b" {
				b = &rep.Replicas[i]
			}
		}
		switch {
		case b == nil:
			t.Fatalf("at %s: b not listed", at.Format("15:04:05"))
		case b.State != analysis.StateDown || !b.DownSince.Equal(t0.Add(-39500*time.Millisecond)) ||
			!b.LastGood.Equal(t0.Add(-40500*time.Millisecond)) || b.FailedScrapes != failed:
			t.Errorf("at %s: b %s since %s (%d failed), last good %s; want DOWN since 11:59:20.5 (%d failed), last good 11:59:19.5",
				at.Format("15:04:05"), b.State, b.DownSince.Format("15:04:05.0"), b.FailedScrapes, b.LastGood.Format("15:04:05.0"), failed)
		}
	}
	check(t0, f, 40)
	// Five seconds on, up over the window alone: the run goes on.
	later := shift(alive, 5*time.Second)
	var window [][2]float64
	for s := 9.5; s >= 0; s-- {
		window = append(window, [2]float64{s - 5, 0})
	}
	later.up = decodedOf(model.Matrix{upOf("vllm", "10.0.0.2:8000", "b", window...)})
	check(t0.Add(5*time.Second), later, 45)
}

// A whole read asks up over upLookBack, an increment over the window.
func TestUpRangeReachesBackOnWholeReads(t *testing.T) {
	s := testSource(t, Config{})
	for _, whole := range []bool{true, false} {
		s.whole = whole
		want := "[10000ms]"
		if whole {
			want = "[" + strconv.FormatInt(upLookBack.Milliseconds(), 10) + "ms]"
		}
		if got := s.upQuery(10 * time.Second); !strings.HasSuffix(got, want) {
			t.Errorf("whole %v: %s, want the range %s", whole, got, want)
		}
	}
}
