package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// texts are every sentence of a report: reasons, actions, advice, events.
func texts(rep Report) string {
	var all []string
	for _, r := range rep.Replicas {
		all = append(all, r.Reasons...)
		all = append(all, r.Action)
	}
	all = append(all, rep.Fleet.Advice.Summary...)
	for _, e := range rep.Events {
		all = append(all, e.Text)
	}
	return strings.Join(all, "\n")
}

// TestWordsOfTheReports: an unknown figure is said as such, not as "n/a
// tokens"; a count of one is singular; efficiency is a percentage, as every
// other share in the sentences.
func TestWordsOfTheReports(t *testing.T) {
	noPromptHistogram := func() Report {
		s := newServer()
		s.running = 8
		long := chat
		long.ttft, long.prefill = 2.4, 2.3
		samples, now := run(s, 30, time.Second, finishing(1, long))
		for i := range samples {
			samples[i].Total.Histograms[catalogue.PromptLength] = catalogue.Buckets{}
		}
		return Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, DefaultConfig(), nil)
	}
	oneFullReplica := func() Report {
		s := newServer()
		s.running, s.kv, s.waiting = 256, 0.6, 41
		samples, now := run(s, 30, time.Second, finishing(12, chat), queueing(41, 1.8))
		return Analyze(now, []catalogue.Readings{{Target: "a", Samples: samples}}, DefaultConfig(), nil)
	}
	tests := []struct {
		name       string
		report     func() Report
		want, lack []string
	}{
		{"prompt length not exported", noPromptHistogram, []string{"prompt length n/a"}, []string{"n/a tokens"}},
		{"one replica, efficiency", oneFullReplica, []string{"(efficiency 87%)", "1 replica"}, []string{"1 replicas", "efficiency 0."}},
	}
	for _, tt := range tests {
		got := texts(tt.report())
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: texts lack %q:\n%s", tt.name, w, got)
			}
		}
		for _, l := range tt.lack {
			if strings.Contains(got, l) {
				t.Errorf("%s: texts have %q:\n%s", tt.name, l, got)
			}
		}
	}
}

// TestJSONNumbersRounded: figures are written to 12 significant digits,
// which drops the noise of binary floating point (11.100000000000001)
// and keeps every digit a scrape or a Prometheus rate carries.
func TestJSONNumbersRounded(t *testing.T) {
	tests := []struct {
		in   Num
		want string
	}{
		{Num(11.100000000000001), "11.1"},
		{Num(0.1 + 0.2), "0.3"},
		{Num(1.0 / 3), "0.333333333333"},
		{Num(13.833333333333334), "13.8333333333"},
		{430_000, "430000"},
		{3e9, "3e+09"},
		{Num(2.5e-7), "2.5e-07"},
		{0, "0"},
		{NA, "null"},
		{Num(math.Inf(1)), "null"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.in)
		if err != nil || string(b) != tt.want {
			t.Errorf("%v → %s (%v), want %s", float64(tt.in), b, err, tt.want)
		}
	}
}
