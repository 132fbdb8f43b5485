package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// syncBuffer is a strings.Builder written by a child process's pipe and
// read by the test meanwhile.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// healthyFleet serves two healthy simulated vLLM replicas in real time
// until the test ends; the test switches their faults.
func healthyFleet(t *testing.T) (*sim.Fleet, []string) {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 2, Scenario: sim.Healthy, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(2 * time.Minute)
	return fleet, testutil.ServeFleet(t.Context(), t, fleet)
}

// startVtop runs vtop with args until the test ends (SIGTERM then), its
// stdout and stderr kept.
func startVtop(t *testing.T, args ...string) (stdout, stderr *syncBuffer) {
	t.Helper()
	cmd := testutil.VtopCommand(t, args...)
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = testutil.WaitWithin(t, cmd, 20*time.Second)
	})
	return stdout, stderr
}

// TestAlertmanagerReceivesResolvesAndResends runs vtop --alertmanager
// against Debian's Alertmanager and a simulated fleet, and reads the
// server's /api/v2/alerts back: a replica that goes down raises VtopDown
// with the labels alertname, replica, state, severity; the alert is sent
// again every --alertmanager-resend (startsAt kept, endsAt moved on); and
// it is resolved when the replica answers again, long before its endsAt
// would have resolved it.
func TestAlertmanagerReceivesResolvesAndResends(t *testing.T) {
	t.Parallel()
	am := StartAlertmanager(t)
	fleet, urls := healthyFleet(t)
	const resend = 2 * time.Second
	_, stderr := startVtop(t, append([]string{"--jsonl", "--interval", "250ms", "--window", "5s", "--no-gpus",
		"--alertmanager", am.URL(), "--alertmanager-resend", resend.String()}, urls...)...)

	time.Sleep(2 * time.Second) // vtop's first reports: both replicas up
	if held := am.Alerts(); len(held) != 0 {
		t.Fatalf("alerts before any fault: %v", held)
	}
	down := fleet.Replicas()[0]
	if err := down.SetFault(sim.FaultDown); err != nil {
		t.Fatal(err)
	}
	downAt := time.Now()
	wait := func(what string, limit time.Duration, cond func([]HeldAlert) bool) []HeldAlert {
		t.Helper()
		deadline := time.Now().Add(limit)
		for {
			held := am.Alerts()
			if cond(held) {
				return held
			}
			if time.Now().After(deadline) {
				t.Fatalf("not within %s: %s; the Alertmanager holds %v; vtop said %q", limit, what, held, stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	held := wait("VtopDown received", 10*time.Second, func(h []HeldAlert) bool { return len(h) > 0 })
	fired := held[0]
	t.Logf("received %s after %s", fired, time.Since(downAt).Round(time.Millisecond))
	want := map[string]string{"alertname": "VtopDown", "state": "DOWN", "severity": "critical"}
	for k, v := range want {
		if fired.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, fired.Labels[k], v)
		}
	}
	if !strings.Contains(urls[0], fired.Labels["replica"]) || len(held) != 1 {
		t.Errorf("alerts %v, want one, for replica %s", held, urls[0])
	}
	if fired.Status.State != "active" || !strings.HasPrefix(fired.Annotations["summary"], fired.Labels["replica"]+" DOWN: ") {
		t.Errorf("alert %v annotations %v, want active with the reason", fired, fired.Annotations)
	}
	if life := fired.EndsAt.Sub(fired.StartsAt); life < 4*resend-time.Second || life > 4*resend+time.Second {
		t.Errorf("endsAt %s after startsAt, want 4 re-sends (%s)", life, 4*resend)
	}

	held = wait("VtopDown re-sent (endsAt moved on)", 3*resend+5*time.Second, func(h []HeldAlert) bool {
		return len(h) == 1 && h[0].EndsAt.After(fired.EndsAt)
	})
	resent := held[0]
	t.Logf("re-sent  %s", resent)
	if !resent.StartsAt.Equal(fired.StartsAt) {
		t.Errorf("re-sent with startsAt %s, want the first %s kept", resent.StartsAt, fired.StartsAt)
	}
	if moved := resent.EndsAt.Sub(fired.EndsAt); moved < resend-time.Second {
		t.Errorf("endsAt moved %s, want about the re-send interval %s", moved, resend)
	}

	if err := down.SetFault(sim.FaultNone); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now()
	wait("VtopDown resolved", 10*time.Second, func(h []HeldAlert) bool { return len(h) == 0 })
	resolvedAt := time.Now()
	t.Logf("resolved %s after the replica answered again; its last endsAt was %s later", resolvedAt.Sub(upAt).Round(time.Millisecond), resent.EndsAt.Sub(resolvedAt).Round(time.Millisecond))
	if !resolvedAt.Before(resent.EndsAt.Add(-time.Second)) {
		t.Errorf("gone at %s, not before its endsAt %s: expired, not resolved by vtop", resolvedAt, resent.EndsAt)
	}
	if s := stderr.String(); s != "" {
		t.Errorf("vtop said %q, want nothing: every post went through", s)
	}
}

// TestOnChangeHookDelaysNoReport runs vtop --jsonl with a hook that
// writes the change it gets and sleeps 10 s on a change into DOWN, while a replica goes down,
// comes back and goes down again: the hook runs (the change on its
// stdin), and the reports keep their interval while it sleeps.
func TestOnChangeHookDelaysNoReport(t *testing.T) {
	t.Parallel()
	fleet, urls := healthyFleet(t)
	dir := t.TempDir()
	const interval = 250 * time.Millisecond
	stdout, stderr := startVtop(t, append([]string{"--jsonl", "--interval", interval.String(), "--window", "5s", "--no-gpus",
		"--on-change-per-minute", "100",
		// The changes into DOWN sleep; the others (a replica's first verdict
		// after warming) end at once, not to fill the 4 hooks run at once.
		"--on-change", `f="` + dir + `/change-$$.json"; cat > "$f"; if grep -q '"state":"down"' "$f"; then sleep 10; fi`}, urls...)...)
	replica := fleet.Replicas()[0]
	for _, f := range []sim.Fault{sim.FaultNone, sim.FaultDown, sim.FaultNone, sim.FaultDown} {
		if err := replica.SetFault(f); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
	}
	time.Sleep(time.Second)

	var times []time.Time
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r struct {
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a report line: %v: %.200s", err, line)
		}
		times = append(times, r.Time)
	}
	if len(times) < 20 {
		t.Fatalf("%d reports in 7 s at %s; stderr %q", len(times), interval, stderr.String())
	}
	var worst time.Duration
	for i := 1; i < len(times); i++ {
		worst = max(worst, times[i].Sub(times[i-1]))
	}
	first, last := times[0], times[len(times)-1]
	t.Logf("%d reports from %s to %s, at most %s apart (interval %s)", len(times), first.Format("15:04:05.000"), last.Format("15:04:05.000"), worst.Round(time.Millisecond), interval)
	if worst > 2*interval {
		t.Errorf("two reports %s apart while the hook slept, want about the interval %s", worst, interval)
	}

	runs, _ := filepath.Glob(filepath.Join(dir, "change-*.json"))
	var downs int
	for _, path := range runs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Replica, State, From, Text string }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		t.Logf("hook got %s", b)
		if c.State == "down" && strings.HasPrefix(c.Text, "DOWN: ") {
			downs++
		}
	}
	if downs != 2 {
		t.Errorf("the hook got %d changes into DOWN, want 2 (it ran %d times)", downs, len(runs))
	}
}

// TestDownAtStartReachesEveryOutput runs vtop --jsonl with --alertmanager
// (Debian's) and --on-change while one replica of two is down from before
// vtop starts, then answers again: the replica down at start reaches the
// Alertmanager as VtopDown, the hook as none → down and the event log
// (each report's events) as DOWN; when it answers again the alert is
// resolved, and the hook and the event log get its WARMING and the state
// it settles in. Every replica's hook runs form a chain from none, and
// the event log tells the same changes.
func TestDownAtStartReachesEveryOutput(t *testing.T) {
	t.Parallel()
	am := StartAlertmanager(t)
	fleet, urls := healthyFleet(t)
	down := fleet.Replicas()[0]
	if err := down.SetFault(sim.FaultDown); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A window longer than the 10 s of readings a verdict of health needs:
	// the replicas settle 10 s after they first answer.
	stdout, stderr := startVtop(t, append([]string{"--jsonl", "--interval", "250ms", "--window", "15s", "--no-gpus",
		"--alertmanager", am.URL(), "--alertmanager-resend", "2s", "--on-change-per-minute", "100",
		"--on-change", `cat > "$(mktemp "` + dir + `/change-XXXXXX")"`}, urls...)...)

	type change struct {
		Time                 time.Time
		Replica, From, State string
	}
	hooked := func() map[string][]change {
		runs, _ := filepath.Glob(filepath.Join(dir, "change-*"))
		out := map[string][]change{}
		for _, path := range runs {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var c change
			if json.Unmarshal(b, &c) != nil {
				continue // a run still writing
			}
			out[c.Replica] = append(out[c.Replica], c)
		}
		for _, cs := range out {
			slices.SortFunc(cs, func(a, b change) int { return a.Time.Compare(b.Time) })
		}
		return out
	}
	var replica string // the down replica's name, as vtop writes it
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 30s: %s; the Alertmanager holds %v, the hook got %v; vtop said %q", what, am.Alerts(), hooked(), stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	downHeld := func() bool {
		for _, a := range am.Alerts() {
			if a.Labels["alertname"] == "VtopDown" && strings.Contains(urls[0], a.Labels["replica"]) {
				replica = a.Labels["replica"]
				return true
			}
		}
		return false
	}
	wait("VtopDown held", downHeld)
	wait("the hook told none → down", func() bool {
		cs := hooked()[replica]
		return len(cs) > 0 && cs[0].From == "none" && cs[0].State == "down"
	})

	if err := down.SetFault(sim.FaultNone); err != nil {
		t.Fatal(err)
	}
	wait("VtopDown resolved", func() bool { return !downHeld() })
	wait("the hook told the return, through WARMING, to a verdict", func() bool {
		cs := hooked()[replica]
		return len(cs) >= 3 && cs[1].From == "down" && cs[1].State == "warming" && cs[len(cs)-1].State != "warming"
	})
	time.Sleep(time.Second) // the reports of the last change written

	events := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r struct {
			Events []struct{ Target, State, Text string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a report line: %v: %.200s", err, line)
		}
		for _, e := range r.Events {
			if name, _, _ := strings.Cut(e.Text, ":"); strings.ToLower(name) == e.State {
				events[e.Target] = append(events[e.Target], e.State)
			}
		}
	}
	all := hooked()
	if len(all) != 2 {
		t.Errorf("the hook ran for %d replicas, want both: %v", len(all), all)
	}
	for target, cs := range all {
		var states []string
		from := "none"
		for _, c := range cs {
			if c.From != from {
				t.Errorf("%s: the hook got %s → %s after a change to %s", target, c.From, c.State, from)
			}
			from = c.State
			states = append(states, c.State)
		}
		t.Logf("%s: the hook got %q, the event log %q", target, states, events[target])
		if strings.Join(states, " ") != strings.Join(events[target], " ") {
			t.Errorf("%s: the hook got %q, the event log told %q", target, states, events[target])
		}
	}
	if s := stderr.String(); s != "" {
		t.Errorf("vtop said %q, want nothing: every post and run went through", s)
	}
}
