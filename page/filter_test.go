package page

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// Keep loses nothing Ingest reads: the kept lines read to the same sample
// (or error) as the whole page, for every kind of page vtop meets, and a
// large page keeps well under three quarters of its bytes.
func TestKeepIngestsAlike(t *testing.T) {
	const textPlain = "text/plain; version=0.0.4; charset=utf-8"
	fleet := func(o sim.Options) *sim.Fleet {
		o.Seed = 7
		f, err := sim.NewFleet(o)
		if err != nil {
			t.Fatal(err)
		}
		f.Advance(2 * time.Minute)
		return f
	}
	render := func(r *sim.Replica, format expfmt.Format) []byte {
		b, err := r.Render(format)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v1 := fleet(sim.Options{Replicas: 4, Scenario: sim.Mixed})
	v0 := fleet(sim.Options{Replicas: 1, Scenario: sim.Healthy, VLLMVersion: sim.V0})
	om := expfmt.NewFormat(expfmt.TypeOpenMetrics)
	text := expfmt.NewFormat(expfmt.TypeTextPlain)
	one := string(testutil.VLLMPage(t, 1))
	cases := []struct {
		name, contentType string
		page              []byte
	}{
		{"v1 one engine", textPlain, render(v1.Replicas()[1], text)},
		{"v1 two engines", textPlain, render(v1.Replicas()[0], text)},
		{"v1 preempting", textPlain, render(v1.Replicas()[3], text)},
		{"v0", textPlain, render(v0.Replicas()[0], text)},
		{"openmetrics", "application/openmetrics-text; version=1.0.0", render(v1.Replicas()[2], om)},
		{"openmetrics without content type", "", render(v1.Replicas()[2], om)},
		{"client_golang test page", textPlain, testutil.VLLMPage(t, 3)},
		{"CRLF line ends", textPlain, []byte(strings.ReplaceAll(one, "\n", "\r\n"))},
		{"indented lines", textPlain, []byte(strings.ReplaceAll(one, "\n", "\n \t"))},
		{"only unread vllm families", textPlain, []byte("# HELP vllm:other x\n# TYPE vllm:other gauge\nvllm:other 1\nprocess_resident_memory_bytes 5\n")},
		{"unread vllm sample only", textPlain, []byte("up 1\nvllm:other{a=\"b\"} 1\n")},
		{"no vllm at all", textPlain, []byte("# TYPE node_load1 gauge\nnode_load1 0.5\nhttp_requests_total{code=\"200\"} 3\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kept := Keep(nil, c.page)
			if whole, got := show(NewIngester(), string(c.page), c.contentType), show(NewIngester(), string(kept), c.contentType); got != whole {
				t.Errorf("samples differ\nwhole: %s\nkept:  %s", whole, got)
			}
			if len(c.page) > 2000 && len(kept) >= len(c.page)*3/4 {
				t.Errorf("kept %d of %d bytes: the filter keeps too much", len(kept), len(c.page))
			}
		})
	}
}
