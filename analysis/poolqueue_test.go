package analysis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
)

// poolReading is one scrape of a llama.cpp server whose HTTP pool is
// fixed: its page and how long the scrape waited for it, or no answer
// within the timeout (late).
type poolReading struct {
	state  llamaState
	waited time.Duration
	late   bool
}

// replayPool evaluates the readings one a second, the previous report
// carried, as the monitor does; the page of kind renders each state.
func replayPool(t *testing.T, readings []poolReading, render func(llamaState) []byte) []analysis.ReplicaReport {
	t.Helper()
	cfg := analysis.DefaultConfig()
	in := page.NewIngester()
	targets := []catalogue.Readings{{Target: "llama:8080"}}
	var prev *analysis.Report
	var out []analysis.ReplicaReport
	for i, r := range readings {
		at := time.Unix(1_800_000_000, 0).Add(time.Duration(i) * time.Second)
		s := catalogue.Sample{Err: "no answer within 800ms", TimedOut: true}
		if !r.late {
			var err error
			if s, err = in.Ingest(render(r.state), "text/plain; version=0.0.4"); err != nil {
				t.Fatal(err)
			}
		}
		s.Time, s.Waited = at, r.waited
		targets[0].Samples = append(targets[0].Samples, s)
		rep := analysis.Analyze(at, targets, cfg, prev)
		prev = &rep
		out = append(out, rep.Replicas[0])
	}
	return out
}

// underPool appends n seconds of an overload whose queue waits in the
// HTTP pool: the page shows both slots busy (or one, the moment a request
// ended and freed the thread the scrape got) and nothing deferred. The
// pattern says of each scrape: o answered at once, w answered after
// 600 ms (a real b4747 server's were 0.4–2.3 s), x not within the timeout.
func underPool(rs []poolReading, n int, pattern string) []poolReading {
	last := llamaState{}
	for i := len(rs) - 1; i >= 0; i-- {
		if !rs[i].late {
			last = rs[i].state
			break
		}
	}
	for i := range n {
		var waited time.Duration
		switch pattern[i%len(pattern)] {
		case 'x':
			rs = append(rs, poolReading{late: true})
			continue
		case 'w':
			waited = 600 * time.Millisecond
		}
		last = llamaState{prompt: last.prompt + 160, predicted: last.predicted + 1024, processing: float64(2 - i%2)}
		rs = append(rs, poolReading{state: last, waited: waited})
	}
	return rs
}

// quietReadings appends n pages of a server with nothing to do.
func quietReadings(rs []poolReading, n int) []poolReading {
	for range n {
		rs = append(rs, poolReading{state: llamaState{}})
	}
	return rs
}

// An overload whose queue waits in llama.cpp's fixed HTTP pool: the page
// shows no queue, but vtop's own scrapes wait in it, some past the
// timeout, while requests run at the cap. That is FULL, with the queue's
// evidence, not a replica that looks unloaded between scrapes that look
// DOWN; and a run of timeouts is DOWN only when no scrape is answered for
// ten. The same waits on an engine whose connections hold no worker
// (vLLM), scrapes answered at once, or a llama.cpp server with nothing
// running, prove no queue.
func TestAQueueInTheHTTPPoolIsFull(t *testing.T) {
	// the pattern of the real b4747 server: some scrapes late, the others
	// answered after a wait
	overload := underPool(quietReadings(nil, 15), 30, "wxwxxwxw")
	t.Run("FULL within 5 s, never DOWN while pages come between", func(t *testing.T) {
		reps := replayPool(t, overload, llamaPage)
		for i := 15 + 5; i < len(reps); i++ {
			r := reps[i]
			if r.State != analysis.StateFull {
				t.Fatalf("%ds into the overload: %s, want FULL: %s", i-15, r.State, strings.Join(r.Reasons, " | "))
			}
		}
		last := reps[len(reps)-1]
		if last.Late {
			last = reps[len(reps)-2]
		}
		if got := strings.Join(last.Reasons, " | "); !strings.Contains(got, "requests wait for the server's HTTP threads") || !strings.Contains(got, "--threads-http") {
			t.Errorf("FULL does not say where the queue is: %s", got)
		}
		if strings.Contains(last.Action, "scale on") || !strings.Contains(last.Action, "--threads-http") {
			t.Errorf("the action scales on a gauge that cannot see the queue: %s", last.Action)
		}
	})
	t.Run("waits without a timeout", func(t *testing.T) {
		reps := replayPool(t, underPool(quietReadings(nil, 15), 20, "w"), llamaPage)
		if r := reps[len(reps)-1]; r.State != analysis.StateFull {
			t.Errorf("every scrape waited 600 ms at the cap: %s, want FULL: %s", r.State, strings.Join(r.Reasons, " | "))
		}
	})
	t.Run("scrapes answered at once: no queue", func(t *testing.T) {
		for i, r := range replayPool(t, underPool(quietReadings(nil, 15), 20, "oowoo"), llamaPage) {
			if r.State == analysis.StateFull {
				t.Fatalf("reading %d: FULL with one scrape in five waiting: %s", i+1, strings.Join(r.Reasons, " | "))
			}
		}
	})
	t.Run("timeouts as the overload begins: late, not DOWN", func(t *testing.T) {
		// The real server's first four scrapes into the overload timed out.
		reps := replayPool(t, underPool(quietReadings(nil, 15), 20, "oxxxxoxo"), llamaPage)
		for i, r := range reps[15:] {
			if r.State == analysis.StateDown {
				t.Errorf("%ds into the overload: DOWN, %s", i, strings.Join(r.Reasons, " | "))
			}
		}
		if r := reps[len(reps)-2]; r.State != analysis.StateFull {
			t.Errorf("at the end: %s, want FULL", r.State)
		}
	})
	t.Run("a hung server is DOWN after ten unanswered scrapes", func(t *testing.T) {
		reps := replayPool(t, underPool(overload, 12, "x"), llamaPage)
		for i, r := range reps[len(overload):] {
			want := analysis.StateFull
			if i+1 >= 10 {
				want = analysis.StateDown
			}
			if r.State != want {
				t.Errorf("%d scrapes unanswered: %s, want %s", i+1, r.State, want)
			}
		}
	})
	t.Run("nothing running: no queue", func(t *testing.T) {
		idle := quietReadings(nil, 15)
		for range 6 {
			idle = append(idle, poolReading{late: true}, poolReading{state: llamaState{}})
		}
		for i, r := range replayPool(t, idle, llamaPage) {
			if r.State == analysis.StateFull {
				t.Fatalf("reading %d: FULL of a server with nothing running: %s", i+1, strings.Join(r.Reasons, " | "))
			}
		}
	})
	t.Run("an engine whose connections hold no worker", func(t *testing.T) {
		for i, r := range replayPool(t, overload, vllmPageOf) {
			if r.State == analysis.StateFull {
				t.Fatalf("reading %d: FULL from timeouts of a vLLM page with no queue: %s", i+1, strings.Join(r.Reasons, " | "))
			}
		}
	})
}

// vllmPageOf renders the same gauges and counters as a vLLM page.
func vllmPageOf(s llamaState) []byte {
	return []byte(strings.NewReplacer(
		"llamacpp:prompt_tokens_total", "vllm:prompt_tokens_total",
		"llamacpp:tokens_predicted_total", "vllm:generation_tokens_total",
		"llamacpp:requests_processing", "vllm:num_requests_running",
		"llamacpp:requests_deferred", "vllm:num_requests_waiting").Replace(string(llamaPage(s))))
}
