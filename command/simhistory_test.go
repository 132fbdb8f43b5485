package command

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestParseHistoryEnd(t *testing.T) {
	now := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", now, false},
		{"now", now, false},
		{"now+20m", now.Add(20 * time.Minute), false},
		{"now-1h30m", now.Add(-90 * time.Minute), false},
		{"1796496000", time.Unix(1796496000, 0), false},
		{"1796496000.250", time.UnixMilli(1796496000250), false},
		{"2026-12-05T19:00:00Z", now.Add(time.Hour), false},
		{"now+soon", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := parseHistoryEnd(tt.in, now)
		if (err != nil) != tt.err || !got.Equal(tt.want) {
			t.Errorf("parseHistoryEnd(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestAppendOpenMetrics(t *testing.T) {
	const labels, ts = `instance="vllm-0:8000",job="vllm"`, "1796496000.000"
	tests := []struct {
		name, page, want string
	}{
		{"counter named without _total in its TYPE",
			"# HELP vllm:x_total help\n# TYPE vllm:x_total counter\nvllm:x_total{engine=\"0\"} 3\n",
			"# TYPE vllm:x counter\nvllm:x_total{" + labels + ",engine=\"0\"} 3 " + ts + "\n"},
		{"a counter without _total is unknown",
			"# TYPE odd counter\nodd 1\n",
			"# TYPE odd unknown\nodd{" + labels + "} 1 " + ts + "\n"},
		{"untyped is unknown, empty braces filled",
			"# TYPE u untyped\nu{} 2.5e+06\n",
			"# TYPE u unknown\nu{" + labels + "} 2.5e+06 " + ts + "\n"},
		{"histogram lines as they are",
			"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 4\nh_sum 1.5\nh_count 4\n",
			"# TYPE h histogram\nh_bucket{" + labels + ",le=\"+Inf\"} 4 " + ts + "\nh_sum{" + labels + "} 1.5 " + ts + "\nh_count{" + labels + "} 4 " + ts + "\n"},
		{"the page's own instance and job renamed",
			"# TYPE g gauge\ng{job=\"a,b\",instance=\"i\",x=\"job=\\\"\"} 1\n",
			"# TYPE g gauge\ng{" + labels + ",exported_job=\"a,b\",exported_instance=\"i\",x=\"job=\\\"\"} 1 " + ts + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		appendOpenMetrics(&b, []byte(tt.page), labels, ts)
		if b.String() != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, b.String(), tt.want)
		}
	}
}

// TestHistoryIsOpenMetrics writes a small history and reads it back:
// every replica every step with an up series, timestamps a step apart
// ending at --end, and every scrape's samples parsed (by expfmt's text
// parser, without the OpenMetrics TYPE lines) with the labels of a scrape
// of job vllm. promtool reads it in TestHistoryChunks.
func TestHistoryIsOpenMetrics(t *testing.T) {
	end := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	out := filepath.Join(t.TempDir(), "h.om")
	s := &Sim{Replicas: 3, Scenario: "mixed", Seed: 1, VLLMVersion: "v1", Listen: "127.0.0.1:0", WarmUp: time.Minute,
		History: 30 * time.Second, Step: 5 * time.Second, End: end.Format(time.RFC3339), Output: out}
	var stdout, stderr bytes.Buffer
	if err := s.Run(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(body, []byte("# EOF\n")) {
		t.Errorf("the history does not end with # EOF")
	}
	ups := map[string][]int64{}
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, "up{") {
			continue
		}
		f := strings.Fields(line)
		ups[f[0]] = append(ups[f[0]], parseMillis(t, f[len(f)-1]))
	}
	if len(ups) != 3 {
		t.Fatalf("up series %v, want one per replica", ups)
	}
	for series, stamps := range ups {
		if len(stamps) != 6 {
			t.Errorf("%s: %d scrapes, want 6 (30 s every 5 s)", series, len(stamps))
		}
		for i := 1; i < len(stamps); i++ {
			if stamps[i]-stamps[i-1] != 5000 {
				t.Errorf("%s: scrapes %d ms apart, want 5000", series, stamps[i]-stamps[i-1])
			}
		}
		if last := time.UnixMilli(stamps[len(stamps)-1]); last.Before(end) || last.Sub(end) >= 5*time.Second {
			t.Errorf("%s: last scrape at %s, want within a step after --end %s", series, last, end)
		}
	}
	// The samples parse, with the labels of a scrape of job vllm.
	text := strings.ReplaceAll(string(body), "# EOF\n", "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	var families int
	for chunk := range strings.SplitSeq(text, "# TYPE up gauge\n") {
		if chunk == "" {
			continue
		}
		// The TYPE lines name counters without _total: drop them for the
		// text parser, which wants the sample names.
		// The text format's timestamps are milliseconds.
		var lines []string
		for l := range strings.Lines(chunk) {
			if !strings.HasPrefix(l, "# TYPE") {
				i := strings.LastIndexByte(l, '.')
				lines = append(lines, l[:i]+l[i+1:])
			}
		}
		mfs, err := parser.TextToMetricFamilies(strings.NewReader(strings.Join(lines, "")))
		if err != nil {
			t.Fatalf("a scrape of the history does not parse: %v", err)
		}
		families += len(mfs)
		for name, mf := range mfs {
			for _, m := range mf.GetMetric() {
				var inst, job string
				for _, lp := range m.GetLabel() {
					switch lp.GetName() {
					case "instance":
						inst = lp.GetValue()
					case "job":
						job = lp.GetValue()
					}
				}
				if job != "vllm" || !strings.HasPrefix(inst, "vllm-") {
					t.Fatalf("%s: instance %q job %q, want a scrape's labels", name, inst, job)
				}
			}
		}
	}
	if families == 0 {
		t.Fatal("no families in the history")
	}
}

func parseMillis(t *testing.T, sec string) int64 {
	t.Helper()
	whole, frac, ok := strings.Cut(sec, ".")
	if !ok || len(frac) != 3 {
		t.Fatalf("timestamp %q: want seconds with three decimals", sec)
	}
	var ms int64
	for _, c := range whole + frac {
		ms = ms*10 + int64(c-'0')
	}
	return ms
}

// TestHistoryFlags refuses what --history cannot do, naming the flag.
func TestHistoryFlags(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.om")
	if err := os.WriteFile(exists, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  func(*Sim)
		want string
	}{
		{"--end without --history", func(s *Sim) { s.History = 0; s.End = "now" }, "go with --history"},
		{"bad --end", func(s *Sim) { s.End = "tomorrow" }, "--end"},
		{"step too fine", func(s *Sim) { s.Step = time.Microsecond }, "--step"},
		{"span under a step", func(s *Sim) { s.History = time.Second }, "--history"},
		{"chunk without a directory", func(s *Sim) { s.Output = ""; s.Chunk = time.Minute }, "--chunk"},
		{"with --dcgm", func(s *Sim) { s.DCGM = true }, "--dcgm"},
		{"output exists", func(s *Sim) { s.Output = exists }, "--output"},
	}
	for _, tt := range tests {
		s := &Sim{Replicas: 1, Scenario: "healthy", Seed: 1, VLLMVersion: "v1", Listen: "127.0.0.1:0",
			History: time.Minute, Step: 5 * time.Second, Output: filepath.Join(dir, tt.name+".om")}
		tt.set(s)
		err := s.Run(context.Background(), &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.want)
		}
	}
}

// TestHistoryChunks writes the history in chunk files a consumer takes
// (here: reads and removes) as they come; promtool reads each.
func TestHistoryChunks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chunks")
	s := &Sim{Replicas: 2, Scenario: "healthy", Seed: 1, VLLMVersion: "v1", Listen: "127.0.0.1:0",
		History: time.Minute, Step: 5 * time.Second, Chunk: 20 * time.Second, Output: dir}
	errc := make(chan error, 1)
	go func() { errc <- s.Run(context.Background(), &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}) }()
	promtool, _ := exec.LookPath("promtool")
	var taken int
	var runErr error
	for done := false; !done; {
		select {
		case runErr = <-errc:
			done = true
		case <-time.After(50 * time.Millisecond):
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.om"))
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(body), "up{"); got != 2*4 {
				t.Errorf("%s: %d scrapes, want 8 (2 replicas, 20 s of 5 s steps)", f, got)
			}
			if promtool != "" {
				if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", f, filepath.Join(t.TempDir(), "b")).CombinedOutput(); err != nil {
					t.Errorf("promtool on %s: %v\n%s", f, err, out)
				}
			}
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			taken++
		}
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if taken != 3 {
		t.Errorf("%d chunk files, want 3", taken)
	}
}
