package recordcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil"
)

// recordSim runs `vtop record` against a simulated fleet over loopback
// for a second and returns the file.
func recordSim(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet, err := sim.NewFleet(sim.Options{Replicas: 2, Scenario: sim.Mixed, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	fleet.Advance(time.Minute)
	var targets []scrape.Target
	for _, u := range testutil.ServeFleet(ctx, t, fleet) {
		tg, err := scrape.ParseTarget(u)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	path := filepath.Join(dir, "rec.vtrec")
	var out bytes.Buffer
	f := RecordFlags{Output: path, Duration: 1500 * time.Millisecond, MaxSize: "1GiB"}
	code, err := f.Record(ctx, &out, "test", []string{"record"}, targets, scrape.Options{Interval: 100 * time.Millisecond})
	if err != nil || code != 0 || !strings.Contains(out.String(), "recorded ") {
		t.Fatalf("record: %d %v %q", code, err, out.String())
	}
	return path
}

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	path := recordSim(t, dir)
	notRec := filepath.Join(dir, "notes.txt")
	os.WriteFile(notRec, []byte("hello\n"), 0o600)
	empty := filepath.Join(dir, "empty.vtrec")
	os.WriteFile(empty, nil, 0o600)

	cases := []struct {
		name string
		run  func(out, errOut *bytes.Buffer) (int, error)
		code int
		want string // in the output
	}{
		{"replay jsonl", func(o, e *bytes.Buffer) (int, error) { return ReplayFlags{File: path, JSONL: true}.RunText(o, e) }, -1, `"replicas":[`},
		{"replay once json", func(o, e *bytes.Buffer) (int, error) {
			return ReplayFlags{File: path, Once: true, JSON: true}.RunText(o, e)
		}, -1, `"window_seconds"`},
		{"replay --json without --once", func(o, e *bytes.Buffer) (int, error) { return ReplayFlags{File: path, JSON: true}.RunText(o, e) }, record.ExitUsage, ""},
		{"replay a text file", func(o, e *bytes.Buffer) (int, error) { return ReplayFlags{File: notRec, JSONL: true}.RunText(o, e) }, record.ExitUsage, ""},
		{"replay an empty file", func(o, e *bytes.Buffer) (int, error) { return ReplayFlags{File: empty, JSONL: true}.RunText(o, e) }, record.ExitData, ""},
		{"export", func(o, e *bytes.Buffer) (int, error) { return ExportFlags{File: path, Job: "vllm"}.Run(o, e) }, 0, "# EOF\n"},
		{"export an empty file", func(o, e *bytes.Buffer) (int, error) { return ExportFlags{File: empty}.Run(o, e) }, record.ExitData, ""},
		{"diff", func(o, e *bytes.Buffer) (int, error) {
			return DiffFlags{Baseline: path, Candidate: path, SLOTTFT: time.Second}.Run(o)
		}, 0, "candidate: "},
		{"diff with a text file", func(o, e *bytes.Buffer) (int, error) { return DiffFlags{Baseline: path, Candidate: notRec}.Run(o) }, record.ExitUsage, ""},
		{"diff beyond the end", func(o, e *bytes.Buffer) (int, error) {
			return DiffFlags{Baseline: path, Candidate: path, Skip: time.Hour}.Run(o)
		}, record.ExitData, ""},
		{"record over an existing file", func(o, e *bytes.Buffer) (int, error) {
			return RecordFlags{Output: path, MaxSize: "1GiB"}.Record(context.Background(), o, "test", nil, []scrape.Target{{Name: "a:1", URL: "http://127.0.0.1:1/metrics"}}, scrape.Options{})
		}, record.ExitUsage, ""},
		{"record with a bad size", func(o, e *bytes.Buffer) (int, error) {
			return RecordFlags{Output: filepath.Join(dir, "new.vtrec"), MaxSize: "lots"}.Record(context.Background(), o, "test", nil, []scrape.Target{{Name: "a:1", URL: "http://127.0.0.1:1/metrics"}}, scrape.Options{})
		}, record.ExitUsage, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code, err := c.run(&out, &errOut)
			if c.code >= 0 && code != c.code {
				t.Errorf("exit %d (%v), want %d", code, err, c.code)
			}
			if c.code == -1 && (code > 2 || err != nil) {
				t.Errorf("exit %d (%v)", code, err)
			}
			if c.code > 2 && err == nil {
				t.Error("no error")
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("output lacks %q: %.300s", c.want, out.String())
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{{"1GiB", 1 << 30, true}, {"500MB", 500e6, true}, {"64 KiB", 64 << 10, true}, {"1234", 1234, true}, {"lots", 0, false}, {"-1MB", 0, false}}
	for _, c := range cases {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %d %v", c.in, got, err)
		}
	}
}
