package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// smallRecording records 2 replicas for 30 s with a key frame every 10
// and returns the file and what was fed.
func smallRecording(t testing.TB) (string, []scrapeRec) {
	t.Helper()
	path := tempPath(t)
	fed := recordFleet(t, path, simFleet(t, sim.Options{Replicas: 2, Scenario: sim.Mixed}), 30, time.Second, Options{KeyEvery: 10})
	return path, fed
}

func TestBadInput(t *testing.T) {
	path, _ := smallRecording(t)
	good := readFile(t, path)
	// A newer vtop writes its format in the prefix and in the header.
	newer := binary.LittleEndian.AppendUint16(magic[:], FormatVersion+1)
	newer = appendRecord(newer, kindHeader, []byte(`{"format":2,"targets":[{"name":"a:1"}]}`))
	noTargets := append(append(magic[:0:0], magic[:]...), 1, 0)
	noTargets = appendRecord(noTargets, kindHeader, []byte(`{"format":1,"targets":[]}`))
	badHeader := withoutCopies(t, good) // as vtop wrote before the header's copy
	badHeader[prefixLen+5] ^= 0xff
	cases := []struct {
		name string
		data []byte
		want error
		code int
	}{
		{"empty file", nil, ErrEmpty, ExitData},
		{"only the magic", magic[:5], ErrEmpty, ExitData},
		{"a text file", []byte("vllm:num_requests_running 3\n"), ErrNotRecording, ExitUsage},
		{"a gzip file", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, ErrNotRecording, ExitUsage},
		{"newer format", newer, nil, ExitData},
		{"no targets", noTargets, ErrNoTargets, ExitData},
		{"damaged header", badHeader, ErrNoHeader, ExitData},
		{"prefix without header", good[:prefixLen], ErrEmpty, ExitData},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeTemp(t, c.data)
			_, err := Open(p)
			if err == nil {
				t.Fatal("no error")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if got := ExitCode(err, 1); got != c.code {
				t.Errorf("exit code %d, want %d (%v)", got, c.code, err)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	t.Run("newer format says so", func(t *testing.T) {
		_, err := Parse(newer)
		if err == nil || !strings.Contains(err.Error(), "newer") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("missing file is a usage error", func(t *testing.T) {
		_, err := Open(path + ".missing")
		if ExitCode(err, 1) != ExitUsage {
			t.Errorf("error %v", err)
		}
	})
}

func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	p := tempPath(t)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordEnds returns the offset at which each record after the header
// ends, in file order, with the target and seq of frames (-1 for ticks).
func recordEnds(t testing.TB, data []byte) (ends []int, targets []int, seqs []int64) {
	t.Helper()
	w := &window{src: bytes.NewReader(data), size: int64(len(data))}
	_, _, _, pos, _ := readRecord(w, int64(prefixLen))
	for pos < int64(len(data)) {
		kind, payload, _, next, ok := readRecord(w, pos)
		if !ok {
			t.Fatalf("record at %d unreadable in an intact file", pos)
		}
		tg, seq := -1, int64(-1)
		if kind == kindFrame {
			h, _ := parseFrame(payload, 0, len(payload), 1<<20)
			tg, seq = h.target, h.meta.seq
		}
		ends, targets, seqs = append(ends, int(next)), append(targets, tg), append(seqs, seq)
		pos = next
	}
	return ends, targets, seqs
}

// TestCutFile cuts a recording at random offsets: every frame complete
// before the cut replays, identical, and the cut is reported.
func TestCutFile(t *testing.T) {
	path, fed := smallRecording(t)
	data := readFile(t, path)
	want := wantSamples(fed, 2)
	ends, targets, seqs := recordEnds(t, data)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 25 {
		cut := ends[0] - 1 + rng.IntN(len(data)-ends[0]+1)
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			rec, err := Parse(data[:cut])
			if err != nil {
				t.Fatal(err)
			}
			complete := map[[2]int64]bool{}
			for i, end := range ends {
				if end <= cut && targets[i] >= 0 {
					complete[[2]int64{int64(targets[i]), seqs[i]}] = true
				}
			}
			n := 0
			for ti := range 2 {
				n += len(rec.Frames(ti))
			}
			if n != len(complete) {
				t.Errorf("%d frames readable, %d complete before the cut", n, len(complete))
			}
			checkSamples(t, rec, want, func(int, int64) bool { return true })
			atEnd := false
			for _, e := range ends {
				atEnd = atEnd || e == cut
			}
			if !atEnd && (!rec.Damage.Tail || !strings.HasPrefix(rec.Damage.String(), "recording ends at ")) {
				t.Errorf("cut mid-record not reported: %+v %q", rec.Damage, rec.Damage)
			}
			if atEnd && rec.Damage.Any() {
				t.Errorf("a cut between records is no damage: %q", rec.Damage)
			}
		})
	}
}

// TestFlippedBytes flips a few bytes in the middle: every frame before
// the damage replays, the frames after the next key frame too, and the
// loss is counted.
func TestFlippedBytes(t *testing.T) {
	path, fed := smallRecording(t)
	data := readFile(t, path)
	want := wantSamples(fed, 2)
	ends, targets, seqs := recordEnds(t, data)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		bad := append([]byte(nil), data...)
		at := ends[len(ends)/4] + rng.IntN(ends[len(ends)*3/4]-ends[len(ends)/4])
		for k := range 1 + rng.IntN(4) {
			bad[at+k] ^= byte(1 + rng.IntN(255))
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			rec, err := Parse(bad)
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Damage.Any() || rec.Damage.Tail {
				t.Fatalf("damage not reported as such: %+v", rec.Damage)
			}
			checkSamples(t, rec, want, func(int, int64) bool { return true })
			have := map[[2]int64]bool{}
			for ti := range 2 {
				for _, f := range rec.Frames(ti) {
					have[[2]int64{int64(ti), f.Seq}] = true
				}
			}
			after := 0
			for i, e := range ends {
				key := [2]int64{int64(targets[i]), seqs[i]}
				if targets[i] >= 0 && e <= at && !have[key] {
					t.Errorf("frame %v complete before the damage is lost", key)
				}
				if targets[i] >= 0 && e > at+100 && have[key] {
					after++
				}
			}
			if after == 0 {
				t.Error("nothing after the damage replays: no resynchronisation")
			}
			if !strings.Contains(rec.Damage.String(), "damaged") {
				t.Errorf("damage text %q", rec.Damage)
			}
		})
	}
}

// TestKilledRecorder kills a recording process with SIGKILL: the file
// replays up to the last complete scrape, with nothing reported damaged
// but possibly the one record being written.
func TestKilledRecorder(t *testing.T) {
	if os.Getenv("VTOP_RECORD_CHILD") != "" {
		recordUntilKilled(os.Getenv("VTOP_RECORD_CHILD"))
		return
	}
	path := tempPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRecorder$")
	cmd.Env = append(os.Environ(), "VTOP_RECORD_CHILD="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child prints a line per frame written; kill it mid-stream.
	lines := bufio.NewScanner(stdout)
	written := 0
	for lines.Scan() && written < 150 {
		written++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.InProgress {
		t.Error("a killed recorder's lock outlived it")
	}
	n := len(rec.Frames(0)) + len(rec.Frames(1))
	if n < written {
		t.Errorf("%d frames replay, the recorder had written %d", n, written)
	}
	if rec.Damage.Records > 1 || rec.Damage.Skipped > 0 {
		t.Errorf("more than the last record lost: %q", rec.Damage)
	}
	cur := NewCursor(rec)
	for ti := range 2 {
		for i := range rec.Frames(ti) {
			if s := cur.Sample(ti, i); !s.OK() || !s.HasVLLM {
				t.Fatalf("target %d frame %d: %+v", ti, i, s.Err)
			}
		}
	}
}

// recordUntilKilled is the child of TestKilledRecorder: it records a
// simulated fleet until killed, printing a line after each frame.
func recordUntilKilled(path string) {
	fleet, err := sim.NewFleet(sim.Options{Replicas: 2, Scenario: sim.Mixed, Seed: 5})
	if err != nil {
		panic(err)
	}
	targets := simTargets(2)
	rec, err := Create(path, Options{Targets: targets, Interval: time.Second, KeyEvery: 10})
	if err != nil {
		panic(err)
	}
	at := time.Unix(1_800_000_000, 0)
	for {
		fleet.Advance(time.Second)
		at = at.Add(time.Second)
		for i, r := range fleet.Replicas() {
			body, _ := r.Render(textFormat)
			rec.Page(scrape.Page{Target: targets[i], Time: at, Body: body, ContentType: textPlain})
			fmt.Println("frame")
		}
	}
}

func TestSecondRecorderRefused(t *testing.T) {
	path := tempPath(t)
	opts := Options{Targets: simTargets(1), Interval: time.Second}
	first, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := Create(path, opts); err == nil || ExitCode(err, 1) != ExitUsage {
		t.Fatalf("second recorder on a file in use: %v", err)
	}
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.InProgress {
		t.Error("a recording being written is not reported in progress")
	}
	first.Close()
	if rec, _ := Open(path); rec.InProgress {
		t.Error("in progress after Close")
	}
	if _, err := Create(path, opts); err == nil {
		t.Error("a finished recording was overwritten")
	}
}

func TestMaxSize(t *testing.T) {
	path := tempPath(t)
	fed := recordFleet(t, path, simFleet(t, sim.Options{Replicas: 1, Scenario: sim.Healthy}), 40, time.Second, Options{MaxBytes: 8000})
	st, _ := os.Stat(path)
	if st.Size() > 8000 {
		t.Errorf("file is %d bytes, over the 8000 limit", st.Size())
	}
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rec.Frames(0))
	if n == 0 || n >= len(fed) || rec.Damage.Any() {
		t.Errorf("%d of %d frames, damage %q: want a clean prefix", n, len(fed), rec.Damage)
	}
}
