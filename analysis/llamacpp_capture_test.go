package analysis_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/testutil"
)

// capture is one real llama.cpp server's run (testdata/llamacpp/README.md):
// every page with the time it was scraped, the truth of each second and
// the phases of the load.
type capture struct {
	pages  []capturedPage
	truth  []captureTruth
	phases map[string]capturePhase
}

type capturedPage struct {
	at   time.Time
	body []byte
}

// captureTruth is one line of truth.jsonl: what the server's /slots and
// the load client said at that second.
type captureTruth struct {
	Page           int     `json:"page"`
	TS             float64 `json:"ts"`
	Phase          string  `json:"phase"`
	SlotsBusy      int     `json:"slots_busy"`
	Deferred       int     `json:"requests_deferred"`
	ClientInflight int     `json:"client_inflight"`
	TokensClient   float64 `json:"tokens_generated_client"`
}

type capturePhase struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// unixTime is a Unix time in seconds as a time.Time, to the millisecond.
func unixTime(s float64) time.Time { return time.UnixMilli(int64(math.Round(s * 1000))).UTC() }

func loadCapture(t *testing.T, version string) capture {
	t.Helper()
	dir := filepath.Join("testdata", "llamacpp", version)
	var c capture
	const mark = "# scraped at "
	for _, chunk := range bytes.Split(testutil.ReadGzip(t, filepath.Join(dir, "metrics-pages.txt.gz")), []byte(mark))[1:] {
		head, body, _ := bytes.Cut(chunk, []byte("\n"))
		at, err := strconv.ParseFloat(string(head), 64)
		if err != nil {
			t.Fatalf("page %d: %v", len(c.pages)+1, err)
		}
		c.pages = append(c.pages, capturedPage{at: unixTime(at), body: body})
	}
	sc := bufio.NewScanner(bytes.NewReader(testutil.ReadGzip(t, filepath.Join(dir, "truth.jsonl.gz"))))
	for sc.Scan() {
		var tr captureTruth
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatal(err)
		}
		c.truth = append(c.truth, tr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "phases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var phases struct {
		Phases []capturePhase `json:"phases"`
	}
	if err := json.Unmarshal(raw, &phases); err != nil {
		t.Fatal(err)
	}
	c.phases = map[string]capturePhase{}
	for _, p := range phases.Phases {
		c.phases[p.Name] = p
	}
	if len(c.pages) != len(c.truth) || len(c.pages) < 200 || c.phases["overload"].End <= c.phases["overload"].Start {
		t.Fatalf("%s: %d pages, %d truths", version, len(c.pages), len(c.truth))
	}
	return c
}

// captureSecond is what vtop showed at one page of a capture.
type captureSecond struct {
	at         time.Time
	report     analysis.ReplicaReport
	advice     string
	autoscaler string // the advice's autoscaler line, its last sentence
}

// replayCapture feeds the pages, at the times they were scraped, through
// vtop's page parser and analysis.Analyze as the live monitor does: the
// previous report carried, the window's samples kept.
func replayCapture(t *testing.T, c capture) []captureSecond {
	t.Helper()
	cfg := analysis.DefaultConfig()
	keep := cfg.Window + 2*time.Second
	in := page.NewIngester()
	readings := []catalogue.Readings{{Target: "llama:8080"}}
	var prev *analysis.Report
	out := make([]captureSecond, 0, len(c.pages))
	for i, p := range c.pages {
		s, err := in.Ingest(p.body, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		s.Time = p.at
		var last *catalogue.Sample
		if n := len(readings[0].Samples); n > 0 {
			last = &readings[0].Samples[n-1]
		}
		s.MarkRising(last)
		kept := readings[0].Samples[:0:0]
		for _, old := range readings[0].Samples {
			if !old.Time.Before(p.at.Add(-keep)) {
				kept = append(kept, old)
			}
		}
		readings[0].Samples = append(kept, s)
		report := analysis.Analyze(p.at, readings, cfg, prev)
		prev = &report
		summary := report.Fleet.Advice.Summary
		out = append(out, captureSecond{at: p.at, report: report.Replicas[0], advice: report.Fleet.Advice.Recommendation, autoscaler: summary[len(summary)-1]})
	}
	return out
}

// said is what a reading says, state, reasons and action, for a failure.
func said(s captureSecond) string {
	return fmt.Sprintf("%s: %s", s.report.State, strings.Join(append(s.report.Reasons, s.report.Action), " | "))
}

// captureVersions are the llama.cpp captures: b4747 (2025-02) and b8901
// (2026-04), each idle → light → overload (8 clients on 2 slots) → idle.
var captureVersions = []string{"b4747", "b8901"}

// The real captures judged second by second against their truth.
func TestLlamaCppCaptures(t *testing.T) {
	for _, version := range captureVersions {
		t.Run(version, func(t *testing.T) {
			c := loadCapture(t, version)
			shown := replayCapture(t, c)
			overload := c.phases["overload"]
			// The truth's token count moves while tokens are generated.
			generating := func(i int) bool { return i > 0 && c.truth[i].TokensClient > c.truth[i-1].TokensClient }
			lastToken := 0.0
			for i := range c.truth {
				if generating(i) {
					lastToken = c.truth[i].TS
				}
			}

			t.Run("FULL through the overload within 5 s of its start", func(t *testing.T) {
				for i, s := range shown {
					ts := c.truth[i].TS
					if ts >= overload.Start+5 && ts < overload.End && s.report.State != analysis.StateFull {
						t.Errorf("%.0fs into the overload (deferred %d): %s", ts-overload.Start, c.truth[i].Deferred, said(s))
					}
				}
			})
			t.Run("never IDLE while tokens are generated", func(t *testing.T) {
				for i, s := range shown {
					if generating(i) && s.report.State == analysis.StateIdle {
						t.Errorf("%s, %.0fs in: %.0f tokens generated in the second: %s", c.truth[i].Phase,
							c.truth[i].TS-c.phases[c.truth[i].Phase].Start, c.truth[i].TokensClient-c.truth[i-1].TokensClient, said(s))
					}
				}
			})
			t.Run("IDLE within 10 s of the last token", func(t *testing.T) {
				for i, s := range shown {
					if ts := c.truth[i].TS; ts >= lastToken+10 && s.report.State != analysis.StateIdle {
						t.Errorf("%.0fs after the last token: %s", ts-lastToken, said(s))
					}
				}
			})
			t.Run("generation tok/s within 5% of the truth", func(t *testing.T) {
				// Over the window, where it lies within the overload: the
				// counters move at each request's end, the client's count
				// at each token, so a window holds at most a batch of
				// requests' tokens more or less.
				window := analysis.DefaultConfig().Window.Seconds()
				for i, s := range shown {
					if c.truth[i].TS < overload.Start+window+1 || c.truth[i].TS >= overload.End {
						continue
					}
					j := i - int(window)
					truth := (c.truth[i].TokensClient - c.truth[j].TokensClient) / (c.truth[i].TS - c.truth[j].TS)
					got := s.report.Figures.GenerationTokensPerSecond
					if !got.Known() || math.Abs(got.Float()-truth) > 0.05*truth {
						t.Errorf("%.0fs into the overload: %.0f tok/s, truth %.0f", c.truth[i].TS-overload.Start, got.Float(), truth)
					}
				}
			})
			t.Run("the mean ITL from token seconds", func(t *testing.T) {
				for i, s := range shown {
					if c.truth[i].TS < overload.Start+10 || c.truth[i].TS >= overload.End {
						continue
					}
					// tokens_predicted_seconds_total ÷ tokens_predicted_total over the window.
					j := max(i-int(analysis.DefaultConfig().Window.Seconds()), 0)
					want := (counter(t, c.pages[i].body, "llamacpp:tokens_predicted_seconds_total") - counter(t, c.pages[j].body, "llamacpp:tokens_predicted_seconds_total")) /
						(counter(t, c.pages[i].body, "llamacpp:tokens_predicted_total") - counter(t, c.pages[j].body, "llamacpp:tokens_predicted_total"))
					got := s.report.Figures.ITL.Mean
					if !got.Known() || math.Abs(got.Float()-want) > 0.02*want {
						t.Errorf("%.0fs into the overload: mean ITL %.6f s, the page's token seconds say %.6f s", c.truth[i].TS-overload.Start, got.Float(), want)
					}
				}
			})
			t.Run("no trend said of a flat queue", func(t *testing.T) {
				window := int(analysis.DefaultConfig().Window.Seconds())
				for i, s := range shown {
					// flat: the queue took one value through the window
					flat := true
					for j := max(i-window, 0); j < i; j++ {
						flat = flat && c.truth[j].Deferred == c.truth[i].Deferred
					}
					text := said(s)
					if flat && (strings.Contains(text, "queue shrinks by") || strings.Contains(text, "queue grows by")) {
						t.Errorf("%s, the queue at %d through the window: %s", c.truth[i].Phase, c.truth[i].Deferred, text)
					}
				}
			})
		})
	}
}

// counter is the value of an unlabelled family on a page.
func counter(t *testing.T, body []byte, name string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s on the page", name)
	return 0
}

// The fleet advice on a llama.cpp server says why it gives no count
// (llama.cpp counts no finished requests, so no FULL replica ever shows
// its capacity) rather than promise one; it does not ask for two scrapes
// once it has them; and it says no growth of a queue the newest readings
// hold flat (one jump from 0 to 6 is no growth of 0.3/s for 30 s).
func TestLlamaCppCaptureAdvice(t *testing.T) {
	for _, version := range captureVersions {
		c := loadCapture(t, version)
		for i, s := range replayCapture(t, c) {
			if strings.Contains(s.advice, "a count once") {
				t.Errorf("%s page %d: promises a count llama.cpp cannot give: %q", version, i+1, s.advice)
			}
			if s.report.State == analysis.StateFull && !strings.Contains(s.advice, "no count: the page exports no finished-request counter") {
				t.Errorf("%s page %d: FULL, and the advice does not say why it gives no count: %q", version, i+1, s.advice)
			}
			if strings.Contains(s.report.Action, "once one is measured") || strings.Contains(s.autoscaler, "once one is measured") {
				t.Errorf("%s page %d: promises an autoscaling target llama.cpp cannot give: %q, %q", version, i+1, s.report.Action, s.autoscaler)
			}
			if i >= 2 && strings.Contains(s.advice, "need two scrapes") {
				t.Errorf("%s page %d: asks for two scrapes after %d: %q", version, i+1, i+1, s.advice)
			}
			flat := i >= 5
			for j := max(i-5, 0); j < i; j++ {
				flat = flat && c.truth[j].Deferred == c.truth[i].Deferred
			}
			if flat && strings.Contains(s.advice, "queue grows by") {
				t.Errorf("%s page %d: the queue at %d over the newest readings: %q", version, i+1, c.truth[i].Deferred, s.advice)
			}
		}
	}
}
