package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A change of state is one event, not a state event plus a threshold
// crossing that says the same thing one reading earlier ("p99 TTFT 3s over
// the 1s SLO", then "SLOW: p99 TTFT 3s over the 1s SLO"). A crossing that
// is news — the state holds, or the change is about something else — is
// still an event.
func TestOneEventPerStateChange(t *testing.T) {
	slowTTFT := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 3, itl: 0.027, e2e: 11}
	slowITL := request{reason: catalogue.FinishStop, prompt: 500, gen: 300, ttft: 0.5, itl: 0.3, e2e: 90}
	slowBoth := slowITL
	slowBoth.ttft = 3
	tests := []struct {
		name   string
		before func(s *server) // each second before the change
		after  func(s *server) // each second after it
		want   []string        // the events, by prefix, in order
	}{
		{"healthy → SLOW by TTFT",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.finish(6, slowTTFT) },
			[]string{"SLOW: p99 TTFT"}},
		{"healthy → PREEMPTING with the KV cache over 90%", // preemption material at once: 10/s of 6 requests/s
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.97; s.preemptions += 10; s.finish(6, chat) },
			[]string{"PREEMPTING: "}},
		{"SLOW by ITL stays SLOW as TTFT crosses its SLO: news",
			func(s *server) { s.finish(6, slowITL) },
			func(s *server) { s.finish(6, slowBoth) },
			[]string{"p99 TTFT"}},
		{"healthy, the KV cache over 90% and no change: news",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.93; s.finish(6, chat) },
			[]string{"KV cache 93%"}},
		{"healthy → SLOW by TTFT with the KV cache over 90%: another fact",
			func(s *server) { s.finish(6, chat) },
			func(s *server) { s.kv = 0.93; s.finish(6, slowTTFT) },
			[]string{"SLOW: p99 TTFT", "KV cache 93%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const change, end = 40, 80
			s := newServer()
			s.running, s.kv = 48, 0.3
			samples, _ := run(s, end, time.Second, func(s *server, i int) {
				if i < change {
					tt.before(s)
				} else {
					tt.after(s)
				}
			})
			var got []string
			var prev *Report
			for i := 1; i <= end; i++ {
				r := Analyze(samples[i].Time, []catalogue.Readings{{Target: "a", Samples: samples[:i+1]}}, DefaultConfig(), prev)
				for _, e := range r.Events {
					got = append(got, e.Text)
				}
				prev = &r
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events %q, want %d starting %q", got, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("event %d = %q, want %q…", i, got[i], want)
				}
			}
		})
	}
}
