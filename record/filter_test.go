package record

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// TestKeepIngestsAlike proves that recording only the kept lines loses
// nothing: the page parser reads the same sample from them as from the
// whole page, for every kind of page vtop meets.
func TestKeepIngestsAlike(t *testing.T) {
	v1 := simFleet(t, sim.Options{Replicas: 4, Scenario: sim.Mixed})
	v0 := simFleet(t, sim.Options{Replicas: 1, Scenario: sim.Healthy, VLLMVersion: sim.V0})
	om := expfmt.NewFormat(expfmt.TypeOpenMetrics)
	text := expfmt.NewFormat(expfmt.TypeTextPlain)
	cases := []struct {
		name, contentType string
		page              []byte
	}{
		{"v1 one engine", textPlain, render(t, v1.Replicas()[1], text)},
		{"v1 two engines", textPlain, render(t, v1.Replicas()[0], text)},
		{"v1 preempting", textPlain, render(t, v1.Replicas()[3], text)},
		{"v0", textPlain, render(t, v0.Replicas()[0], text)},
		{"openmetrics", "application/openmetrics-text; version=1.0.0", render(t, v1.Replicas()[2], om)},
		{"openmetrics without content type", "", render(t, v1.Replicas()[2], om)},
		{"client_golang test page", textPlain, testutil.VLLMPage(t, 3)},
		{"CRLF line ends", textPlain, []byte(strings.ReplaceAll(string(testutil.VLLMPage(t, 1)), "\n", "\r\n"))},
		{"only unread vllm families", textPlain, []byte("# HELP vllm:other x\n# TYPE vllm:other gauge\nvllm:other 1\nprocess_resident_memory_bytes 5\n")},
		{"unread vllm sample only", textPlain, []byte("up 1\nvllm:other{a=\"b\"} 1\n")},
		{"no vllm at all", textPlain, []byte("# TYPE node_load1 gauge\nnode_load1 0.5\nhttp_requests_total{code=\"200\"} 3\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, werr := page.NewIngester().Ingest(c.page, c.contentType)
			kept := Keep(nil, c.page)
			got, gerr := page.NewIngester().Ingest(kept, c.contentType)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("errors differ: whole %v, kept %v", werr, gerr)
			}
			if same(want, got) != "" {
				t.Errorf("samples differ\nwhole: %+v\nkept:  %+v", want, got)
			}
			if len(c.page) > 2000 && len(kept) >= len(c.page)*3/4 {
				t.Errorf("kept %d of %d bytes: the filter keeps too much", len(kept), len(c.page))
			}
		})
	}
}

// A page the parser refuses as a whole (cut mid-line, garbage between the
// lines vtop reads) is recorded with its error, which replay hands on as
// the sample's error without parsing the kept lines: the refusal survives
// the filter that would otherwise hide it.
func TestRefusedPagesKeepTheirError(t *testing.T) {
	for _, body := range []string{
		"vllm:num_requests_running{model_name=\"m\"} 3\nnode_load1 1",        // cut: no final newline
		"vllm:num_requests_running{model_name=\"m\"} 3\n<html>oops</html>\n", // garbage in an unread line
	} {
		_, err := page.NewIngester().Ingest([]byte(body), textPlain)
		if err == nil {
			t.Fatalf("%q: the parser accepts it; this test needs a refused page", body)
		}
		if _, kerr := page.NewIngester().Ingest(Keep(nil, []byte(body)), textPlain); kerr != nil {
			continue // the kept lines are refused too: nothing to hide
		}
		path := filepath.Join(t.TempDir(), "refused.vtrec")
		tg, _ := scrape.ParseTarget("gpu-a:8000")
		rec, cerr := Create(path, Options{Interval: time.Second, Targets: []scrape.Target{tg}})
		if cerr != nil {
			t.Fatal(cerr)
		}
		rec.Page(scrape.Page{Target: tg, Time: time.Unix(1e9, 0), Body: []byte(body), ContentType: textPlain, Err: err.Error()})
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		r, oerr := Open(path)
		if oerr != nil {
			t.Fatal(oerr)
		}
		c := NewCursor(r)
		defer c.Close()
		if s := c.Sample(0, 0); s.Err != err.Error() {
			t.Errorf("%q: replayed error %q, want the live %q", body, s.Err, err.Error())
		}
	}
}

// same compares two samples field by field, NaN equal to NaN (the %+v
// forms are equal exactly when the samples are); "" when they are.
func same(a, b catalogue.Sample) string {
	as, bs := fmt.Sprintf("%+v", a), fmt.Sprintf("%+v", b)
	if as == bs {
		return ""
	}
	return as + "\n" + bs
}
