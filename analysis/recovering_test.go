package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// overAnySLO reports whether a window figure the states judge against an
// SLO is over it in r: the test's own reading of the figures.
func overAnySLO(r *ReplicaReport, cfg Config) bool {
	return r.TTFT.P99.Float() > cfg.SLOTTFT.Seconds() || r.ITL.P99.Float() > cfg.SLOITL.Seconds() ||
		cfg.SLOE2E > 0 && r.E2E.P99.Float() > cfg.SLOE2E.Seconds()
}

// TestRecoveringAfterABacklog: a replica whose backlog drained is not
// HEALTHY while its window's p99 TTFT still holds the requests that
// waited in it. It is FULL while the queue stands, RECOVERING once the
// queue is gone (after FULL's exit is held), with reasons that say when
// the backlog cleared, how soon requests get their first token now and
// when the backlog's requests leave the window, and HEALTHY once the
// window's p99 is back within the SLO. At no second is it HEALTHY beside
// a p99 over the SLO.
func TestRecoveringAfterABacklog(t *testing.T) {
	backlogged := chat
	backlogged.ttft, backlogged.queue, backlogged.prefill, backlogged.e2e = 20, 19.9, 0.1, 28
	quick := chat
	quick.ttft, quick.queue, quick.prefill = 0.15, 0.01, 0.1
	s := newServer()
	s.running, s.kv = 64, 0.5
	samples := []catalogue.Sample{s.scrape(t0)}
	cfg := DefaultConfig()
	var prev *Report
	seen := map[State]int{}
	var recovering *ReplicaReport
	for sec := 1; sec <= 70; sec++ {
		if sec <= 20 {
			s.waiting = 300 - 10*float64(sec)
			s.finish(8, backlogged)
		} else {
			s.waiting = 0
			s.finish(8, quick)
		}
		now := t0.Add(time.Duration(sec) * time.Second)
		samples = append(samples, s.scrape(now))
		rep := Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, cfg, prev)
		prev = &rep
		r := rep.Replicas[0]
		seen[r.State]++
		if r.State == StateHealthy && overAnySLO(&r, cfg) {
			t.Errorf("second %d: HEALTHY beside p99 TTFT %v over the %v SLO; reasons %q", sec, r.TTFT.P99, cfg.SLOTTFT, r.Reasons)
		}
		if sec == 30 {
			recovering = &r
		}
		if sec >= 24 && sec <= 45 && r.State != StateRecovering {
			t.Errorf("second %d: %v, want RECOVERING (the queue gone since 14:00:21, the window's p99 TTFT %v still over the SLO); reasons %q",
				sec, r.State, r.TTFT.P99, r.Reasons)
		}
		if sec >= 55 && r.State != StateHealthy {
			t.Errorf("second %d: %v, want HEALTHY once the backlog's requests left the window (p99 TTFT %v); reasons %q", sec, r.State, r.TTFT.P99, r.Reasons)
		}
	}
	if seen[StateFull] == 0 {
		t.Errorf("never FULL while the queue stood: %v", seen)
	}
	if recovering == nil || recovering.State != StateRecovering {
		return
	}
	reasons := strings.Join(recovering.Reasons, "\n")
	t.Logf("RECOVERING at 14:00:30: %s\n%s", recovering.Action, reasons)
	for _, want := range []string{
		"the backlog cleared at 14:00:21",
		"first tokens of the last 5s came in 150ms",
		"p99 TTFT 19.9s over the 1s SLO still holds the backlog's requests",
		"until about 14:00:51",
	} {
		if !strings.Contains(reasons, want) {
			t.Errorf("RECOVERING's reasons lack %q:\n%s", want, reasons)
		}
	}
	if !strings.HasPrefix(recovering.Action, "none to take") {
		t.Errorf("RECOVERING's action %q: want none to take", recovering.Action)
	}
}

// TestNeverHealthyBesideAFigureOverItsSLO: the hysteresis that holds a
// HEALTHY replica while SLOW is pending does not show HEALTHY beside the
// p99 that makes it SLOW: a move out of HEALTHY whose evidence is a
// window figure over its SLO shows at once. An e2e over its SLO (with
// --slo-e2e), which no other state judges, makes a replica RECOVERING
// rather than HEALTHY.
func TestNeverHealthyBesideAFigureOverItsSLO(t *testing.T) {
	itl := func(v float64) request { r := chat; r.itl = v; return r }
	cool, hot := itl(0.06), itl(0.12)
	s := newServer()
	s.running, s.kv = 48, 0.3
	samples := []catalogue.Sample{s.scrape(t0)}
	cfg := DefaultConfig()
	cfg.Window = time.Second
	var prev *Report
	for i, r := range []request{cool, cool, cool, hot, hot} {
		s.finish(30, r)
		now := t0.Add(time.Duration(i+1) * time.Second)
		samples = append(samples, s.scrape(now))
		rep := Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, cfg, prev)
		prev = &rep
		got := rep.Replicas[0]
		if got.State == StateHealthy && overAnySLO(&got, cfg) {
			t.Errorf("second %d: HEALTHY beside p99 ITL %v over the SLO (pending %v); reasons %q", i+1, got.ITL.P99, got.Pending, got.Reasons)
		}
	}

	long := chat
	long.e2e = 50
	s = newServer()
	s.running, s.kv = 48, 0.3
	samples, now := run(s, 30, time.Second, finishing(6, long))
	cfg = DefaultConfig()
	cfg.SLOE2E = 30 * time.Second
	r := analyzeOne(samples, now, cfg)
	if r.State != StateRecovering {
		t.Errorf("p99 e2e %v over the 30s e2e SLO: %v, want RECOVERING; reasons %q", r.E2E.P99, r.State, r.Reasons)
	}
	if want := "p99 e2e"; !strings.Contains(strings.Join(r.Reasons, "\n"), want) {
		t.Errorf("reasons %q do not name the figure over its SLO", r.Reasons)
	}
	cfg.SLOE2E = 0
	if r := analyzeOne(samples, now, cfg); r.State != StateHealthy {
		t.Errorf("the same without an e2e SLO: %v, want HEALTHY; reasons %q", r.State, r.Reasons)
	}
}
