package record

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
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

// Recording many targets allocates a few compressors, not one each: a
// frame's dictionary is its target's previous frame, set at every frame,
// so the encoders follow the frames compressed at once, not the fleet.
// One per target, each with zstd's default window, allocated some 10 MB
// apiece: 2 GB for these 200 targets.
func TestRecordingManyTargetsSharesEncoders(t *testing.T) {
	testutil.SkipShort(t, "600 pages of 200 simulated replicas")
	const targets, steps = 200, 3
	fleet := simFleet(t, sim.Options{Replicas: targets})
	var bodies [steps][][]byte
	for s := range steps {
		fleet.Advance(5 * time.Second)
		for _, r := range fleet.Replicas() {
			bodies[s] = append(bodies[s], render(t, r, expfmt.NewFormat(expfmt.TypeTextPlain)))
		}
	}
	ts := simTargets(targets)
	start := time.Unix(1_800_000_000, 0)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec, err := Create(tempPath(t), Options{Interval: 5 * time.Second, Targets: ts, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	pageBytes := 0
	for s := range steps {
		for i, body := range bodies[s] {
			pageBytes += len(body)
			rec.Page(scrape.Page{Target: ts[i], Time: start.Add(time.Duration(s+1) * 5 * time.Second), Body: body, ContentType: textPlain})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d pages of %.1f MB in all: %.0f MB allocated", targets*steps, float64(pageBytes)/1e6, float64(allocated)/1e6)
	if limit := uint64(300e6); allocated > limit {
		t.Errorf("recording %d targets allocated %.0f MB, more than %.0f MB: a compressor per target?", targets, float64(allocated)/1e6, float64(limit)/1e6)
	}
}
