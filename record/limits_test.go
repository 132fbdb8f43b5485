package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/testutil"
)

// forgedFrame is a key frame as an attacker writes it: content
// compressed whole (its zstd header states its size) or as a stream
// (unsized), under a head that states a size of its own.
type forgedFrame struct {
	target  int
	seq     int64
	at      time.Duration // after the header's start; 0: seq seconds
	stated  int           // the size the frame's head states; 0: the true one
	page    []byte
	unsized bool
}

// commentPage is a page of n bytes of comment lines: a zstd bomb's
// content, a few KiB compressed.
func commentPage(n int) []byte {
	line := "# " + strings.Repeat("x", 61) + "\n"
	return bytes.Repeat([]byte(line), n/len(line))
}

// forged writes a recording of a header of n targets and the frames.
func forged(t testing.TB, n int, frames ...forgedFrame) []byte {
	t.Helper()
	return forgedUnder(t, Header{Interval: time.Second}, n, frames...)
}

// forgedUnder is forged with the header's interval and analysis of h.
func forgedUnder(t testing.TB, h Header, n int, frames ...forgedFrame) []byte {
	t.Helper()
	h.Format, h.Start, h.KeyEvery = FormatVersion, time.Unix(1_800_000_000, 0), 1
	for _, tg := range manyTargets(n) {
		h.Targets = append(h.Targets, Target{Name: tg.Name, URL: tg.URL})
	}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint16(magic[:], FormatVersion)
	out = appendRecord(out, kindHeader, js)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		content := append([]byte(textPlain+"\n"), binary.AppendUvarint(nil, uint64(len(f.page)))...)
		content = append(content, f.page...)
		zst := enc.EncodeAll(content, nil)
		if f.unsized {
			var b bytes.Buffer
			enc.Reset(&b)
			_, _ = enc.Write(content)
			_ = enc.Close()
			zst = b.Bytes()
		}
		stated := f.stated
		if stated == 0 {
			stated = len(content)
		}
		p := binary.AppendUvarint(nil, uint64(f.target))
		p = binary.AppendUvarint(p, uint64(f.seq))
		at := f.at
		if at == 0 {
			at = time.Duration(f.seq) * time.Second
		}
		p = binary.AppendVarint(p, int64(at))
		p = append(p, flagKey|flagPage|flagWhole|flagColumns)
		p = binary.AppendUvarint(p, uint64(stated))
		out = appendRecord(out, kindFrame, append(p, zst...))
	}
	return out
}

// manyTargets names n targets.
func manyTargets(n int) []scrape.Target {
	ts := make([]scrape.Target, n)
	for i := range ts {
		name := fmt.Sprintf("10.%d.%d.%d:8000", i>>16, (i>>8)&255, i&255)
		ts[i] = scrape.Target{Name: name, URL: "http://" + name + "/metrics"}
	}
	return ts
}

// allocated is what f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestFramePageCap: a frame's page is bounded by the page cap (a
// sixteenth of --max-memory) before it is decoded, and a frame decodes no
// further than the size it states, whatever its zstd content says.
func TestFramePageCap(t *testing.T) {
	testutil.SkipShort(t, "pages of 16 and 60 MiB decoded")
	bomb := commentPage(60 << 20)
	cases := []struct {
		name      string
		frame     forgedFrame
		maxMemory int64
		refused   string // the error of the open, "" for none
		damaged   int    // records counted as damage
		pageErr   string // the error of decoding the frame, "" for none
		allocMiB  float64
	}{
		{name: "a page of 60 MiB", frame: forgedFrame{page: bomb}, refused: "frame 1 of 10.0.0.0:8000 holds a page of 60.0 MiB, more than a page may hold at --max-memory 256MiB (16 MiB): raise --max-memory to read it", allocMiB: 2},
		{name: "a page of 60 MiB under --max-memory 1GiB", frame: forgedFrame{page: bomb}, maxMemory: 1 << 30, allocMiB: 130},
		{name: "a page of 16 MiB, the cap", frame: forgedFrame{page: commentPage(16<<20 - 64)}, allocMiB: 40},
		{name: "stating 4 KiB, its zstd frame 60 MiB", frame: forgedFrame{page: bomb, stated: 4 << 10}, damaged: 1, allocMiB: 2},
		{name: "stating 64 KiB, decoding to 60 MiB without saying so", frame: forgedFrame{page: bomb, stated: 64 << 10, unsized: true},
			pageErr: "frame 1 decodes to more than the 65536 bytes it states", allocMiB: 2},
		{name: "stating 1 KiB, compressed in more than 1 KiB can take", frame: forgedFrame{page: []byte(strings.Repeat("vllm:x 1\n", 1000)), stated: 1 << 10, unsized: true},
			damaged: 1, allocMiB: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.frame.seq = 1
			data := forged(t, 1, c.frame)
			var rec *Recording
			var openErr, pageErr error
			alloc := allocated(func() {
				rec, openErr = parse(bytes.NewReader(data), int64(len(data)), Limits{MaxMemory: c.maxMemory})
				if openErr != nil {
					return
				}
				cur := NewCursor(rec)
				defer cur.Close()
				if len(rec.Frames(0)) > 0 {
					_, pageErr = cur.Page(0, 0)
				}
			})
			t.Logf("allocated %.1f MiB for a file of %d bytes", float64(alloc)/(1<<20), len(data))
			var re *Error
			switch {
			case c.refused != "" && (openErr == nil || openErr.Error() != c.refused || !errors.As(openErr, &re) || re.Code != ExitData):
				t.Fatalf("open: %v, want %q (exit %d)", openErr, c.refused, ExitData)
			case c.refused == "" && openErr != nil:
				t.Fatalf("open: %v", openErr)
			case c.refused != "":
			case rec.Damage.Records != c.damaged:
				t.Errorf("%d records damaged, want %d", rec.Damage.Records, c.damaged)
			case c.pageErr == "" && pageErr != nil, c.pageErr != "" && (pageErr == nil || !strings.Contains(pageErr.Error(), c.pageErr)):
				t.Errorf("page: %v, want %q", pageErr, c.pageErr)
			}
			if mib := float64(alloc) / (1 << 20); mib > c.allocMiB && !raceEnabled {
				t.Errorf("allocated %.0f MiB, want at most %.0f", mib, c.allocMiB)
			}
		})
	}
}

// TestHeaderTargetsBound: a header listing more than MaxTargets targets
// is refused before they are read, naming how many; a recorder is never
// started on more.
func TestHeaderTargetsBound(t *testing.T) {
	testutil.SkipShort(t, "headers of 10,000 and 200,000 targets")
	for _, n := range []int{MaxTargets, MaxTargets + 1, 200_000} {
		data := forged(t, n, forgedFrame{seq: 1, page: []byte("vllm:num_requests_running 1\n")})
		rec, err := Parse(data)
		switch want := fmt.Sprintf("the header lists %d targets, more than a recording may hold (%d)", n, MaxTargets); {
		case n <= MaxTargets && err != nil:
			t.Errorf("%d targets: %v", n, err)
		case n <= MaxTargets && len(rec.Targets()) != n:
			t.Errorf("%d targets read, want %d", len(rec.Targets()), n)
		case n > MaxTargets && (err == nil || err.Error() != want || ExitCode(err, 0) != ExitData):
			t.Errorf("%d targets: %v, want %q", n, err, want)
		}
	}
	_, err := Create(tempPath(t), Options{Targets: manyTargets(MaxTargets + 1)})
	if want := "10001 targets, more than a recording may hold (10000)"; err == nil || !strings.Contains(err.Error(), want) || ExitCode(err, 0) != ExitUsage {
		t.Errorf("recording %d targets: %v, want %q", MaxTargets+1, err, want)
	}
}

// TestLastFramesEvaluated: without recorded evaluations, the last one
// made up sees every frame, even a recording of one scrape, or one whose
// last scrape came early in an interval.
func TestLastFramesEvaluated(t *testing.T) {
	page := []byte("vllm:num_requests_running 1\n")
	for _, times := range [][]time.Duration{{time.Second}, {time.Second, 2200 * time.Millisecond}, {time.Second, 1300 * time.Millisecond}} {
		var frames []forgedFrame
		for i, at := range times {
			frames = append(frames, forgedFrame{seq: int64(i + 1), at: at, page: page})
		}
		rec, err := Parse(forged(t, 1, frames...))
		if err != nil {
			t.Fatal(err)
		}
		ticks := rec.Ticks()
		if len(ticks) == 0 {
			t.Fatalf("frames at %v: no evaluation", times)
		}
		if last := rec.Cut(ticks[len(ticks)-1], 0); last.Seq != int64(len(times)) {
			t.Errorf("frames at %v: the last evaluation sees frame %d, want %d", times, last.Seq, len(times))
		}
	}
}

// TestCursorHoldsWithinLimits: a fleet whose pages together pass the
// quarter of the bound a cursor may hold between frames is read frame by
// frame, all targets in turn as a replay does, holding no more than that,
// and gives the same pages as a cursor with room for all of them.
func TestCursorHoldsWithinLimits(t *testing.T) {
	testutil.SkipShort(t, "32 pages of 1.5 MiB recorded and read twice")
	const targets, steps = 8, 4
	path := tempPath(t)
	rec, err := Create(path, Options{Targets: manyTargets(targets), Interval: time.Second, Start: time.Unix(1_800_000_000, 0), All: true, KeyEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	page := commentPage(1536 << 10) // 1.5 MiB: 8 of them pass the 8 MiB of a 32 MiB bound
	for s := range steps {
		for i, tg := range manyTargets(targets) {
			p := append(page[:len(page):len(page)], fmt.Sprintf("vllm:num_requests_running %d\n", s*targets+i)...)
			rec.Page(scrape.Page{Target: tg, Time: time.Unix(1_800_000_001+int64(s), 0), Body: p, ContentType: textPlain})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tight, err := OpenWithin(path, Limits{MaxMemory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer tight.Close()
	roomy, err := OpenWithin(path, Limits{MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer roomy.Close()
	tc, rc := NewCursor(tight), NewCursor(roomy)
	defer tc.Close()
	defer rc.Close()
	for s := range steps {
		for i := range targets {
			got, err := tc.Page(i, s)
			if err != nil {
				t.Fatal(err)
			}
			body := string(got.Body)
			want, _ := rc.Page(i, s)
			if body != string(want.Body) {
				t.Fatalf("target %d frame %d differs from the page read with room", i, s)
			}
			if tc.held > tight.limits.heldCap() {
				t.Fatalf("the cursor holds %d bytes, past its %d", tc.held, tight.limits.heldCap())
			}
		}
	}
}

// TestMadeUpEvaluationsOfManyTargets: the evaluations made up for a
// recording without them cost nothing per target: a header of 10,000
// targets over frames of one of them took 160 KB an evaluation, 320 MiB
// for 2,000 frames of a file of under a MiB.
func TestMadeUpEvaluationsOfManyTargets(t *testing.T) {
	var frames []forgedFrame
	for i := range 2000 {
		frames = append(frames, forgedFrame{seq: int64(i + 1), page: []byte("vllm:num_requests_running 1\n")})
	}
	data := forged(t, MaxTargets, frames...)
	var rec *Recording
	var err error
	alloc := allocated(func() { rec, err = Parse(data) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a file of %d bytes: %d evaluations, %.0f MiB allocated", len(data), len(rec.Ticks()), float64(alloc)/(1<<20))
	if len(rec.Ticks()) < 1999 { // from the second frame's time on
		t.Errorf("%d evaluations, want one a second", len(rec.Ticks()))
	}
	if alloc > 32<<20 {
		t.Errorf("reading it allocated %.0f MiB, want at most 32", float64(alloc)/(1<<20))
	}
	last := rec.Ticks()[len(rec.Ticks())-1]
	if c := rec.Cut(last, 0); c.Seq != 2000 {
		t.Errorf("the last evaluation sees frame %d of the first target, want 2000", c.Seq)
	}
	if c := rec.Cut(last, 1); c.Seq != 0 {
		t.Errorf("the last evaluation sees frame %d of a target without frames, want none", c.Seq)
	}
}

// TestMadeUpEvaluationsOfAGap: a stretch without frames longer than a
// few intervals, when the recorder was not scraping (every interval
// gives every target a frame, a failed scrape's too), is skipped: two
// frames of a file of 400 bytes, an hour apart under an interval of 1 ms,
// made 3.5 million evaluations (615 MiB).
func TestMadeUpEvaluationsOfAGap(t *testing.T) {
	page := []byte("vllm:num_requests_running 1\n")
	cases := []struct {
		name     string
		interval time.Duration
		window   time.Duration
		at       []time.Duration
		want     int // evaluations
	}{
		{"a frame a second", time.Second, 30 * time.Second, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, 3},
		{"a scrape late by most of an interval", time.Second, 30 * time.Second, []time.Duration{time.Second, 2900 * time.Millisecond, 3 * time.Second}, 2},
		{"two frames 20 s apart", time.Second, 30 * time.Second, []time.Duration{time.Second, 21 * time.Second}, 2},
		{"two frames an hour apart, every millisecond", time.Millisecond, time.Hour, []time.Duration{time.Second, 59 * time.Minute}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var frames []forgedFrame
			for i, at := range c.at {
				frames = append(frames, forgedFrame{seq: int64(i + 1), at: at, page: page})
			}
			h := Header{Interval: c.interval, Config: analysis.Config{Window: c.window}}
			rec, err := Parse(forgedUnder(t, h, 1, frames...))
			if err != nil {
				t.Fatal(err)
			}
			ticks := rec.Ticks()
			if len(ticks) != c.want {
				t.Fatalf("%d evaluations, want %d", len(ticks), c.want)
			}
			if last := rec.Cut(ticks[len(ticks)-1], 0); last.Seq != int64(len(c.at)) {
				t.Errorf("the last evaluation sees frame %d, want %d", last.Seq, len(c.at))
			}
		})
	}
}
