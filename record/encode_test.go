package record

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
)

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
		if _, kerr := page.NewIngester().Ingest(page.Keep(nil, []byte(body)), textPlain); kerr != nil {
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
