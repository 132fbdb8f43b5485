package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// simRecording records one simulated replica in virtual time for d at
// 1 s, configured by cfg, as `vtop record` would.
func simRecording(t testing.TB, cfg func(*sim.ReplicaConfig), d time.Duration) *record.Recording {
	t.Helper()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 42, Configure: func(_ int, c *sim.ReplicaConfig) { cfg(c) }})
	if err != nil {
		t.Fatal(err)
	}
	target := scrape.Target{Name: "127.0.0.1:8000", URL: "http://127.0.0.1:8000/metrics"}
	start := time.Unix(1_800_000_000, 0)
	path := filepath.Join(t.TempDir(), "r.vtrec")
	rec, err := record.Create(path, record.Options{Targets: []scrape.Target{target}, Interval: time.Second, Start: start, Config: analysis.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	for s := range int(d / time.Second) {
		fleet.Advance(time.Second)
		body, err := fleet.Replicas()[0].Render(expfmt.NewFormat(expfmt.TypeTextPlain))
		if err != nil {
			t.Fatal(err)
		}
		rec.Page(scrape.Page{Target: target, Time: start.Add(time.Duration(s+1) * time.Second), Body: body, ContentType: "text/plain; version=0.0.4"})
	}
	rec.Close()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// longChat is the preempting scenario's traffic: long answers whose KV
// cache outgrows a small cache after admission.
func longChat(kvBlocks int) func(*sim.ReplicaConfig) {
	return func(c *sim.ReplicaConfig) {
		c.NumGPUBlocks = kvBlocks
		c.Workload = sim.Steady(1.1, sim.LongChat)
	}
}

func TestCompare(t *testing.T) {
	bigKV := simRecording(t, longChat(27000), 8*time.Minute)
	cases := []struct {
		name      string
		candidate *record.Recording
		want      []string // in the verdict
		unfair    bool
	}{
		{"smaller KV cache preempts", simRecording(t, longChat(4096), 8*time.Minute), []string{"preemptions/s", "p99 TTFT ×", "worse under this load"}, false},
		{"twice the load", simRecording(t, func(c *sim.ReplicaConfig) { c.NumGPUBlocks = 27000; c.Workload = sim.Steady(2.2, sim.LongChat) }, 8*time.Minute), nil, true},
		{"the same run", bigKV, []string{"no difference beyond noise"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Compare(bigKV, c.candidate, "big-kv", "candidate", Options{Skip: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := res.Text(&text); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + text.String())
			for _, w := range c.want {
				if !strings.Contains(res.Verdict, w) {
					t.Errorf("verdict %q lacks %q", res.Verdict, w)
				}
			}
			if (len(res.Unfair) > 0) != c.unfair {
				t.Errorf("unfair %v, want %v", res.Unfair, c.unfair)
			}
			if c.unfair && !strings.Contains(text.String(), "warning: arrival rate differs") {
				t.Errorf("no arrival-rate warning in the text")
			}
			var js bytes.Buffer
			if err := res.JSON(&js); err != nil || !json.Valid(js.Bytes()) {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

func TestCompareWindow(t *testing.T) {
	rec := simRecording(t, longChat(27000), 3*time.Minute)
	res, err := Compare(rec, rec, "a", "b", Options{Skip: time.Minute, Length: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Baseline.To.Sub(res.Baseline.From); got < 50*time.Second || got > time.Minute {
		t.Errorf("window of %v, want about a minute", got)
	}
	if _, err := Compare(rec, rec, "a", "b", Options{Skip: time.Hour}); err == nil {
		t.Error("a part beyond the end compared")
	}
}

func TestVerdictSentence(t *testing.T) {
	cases := []struct {
		gains, losses []string
		unfair        bool
		want          string
	}{
		{[]string{"+4 % generation tok/s"}, []string{"p99 TTFT +35 %", "0.8 preemptions/s"}, false,
			"candidate: +4 % generation tok/s but p99 TTFT +35 % and 0.8 preemptions/s: not better under this load"},
		{nil, []string{"p99 ITL +20 %"}, false, "candidate: p99 ITL +20 %: worse under this load"},
		{[]string{"-30 % p99 TTFT"}, nil, true, "candidate: -30 % p99 TTFT: better under this load (but the loads differ: see the warning)"},
		{nil, nil, false, "candidate: no difference beyond noise under this load"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := sentence(c.gains, c.losses, c.unfair); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
