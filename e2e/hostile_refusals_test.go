package e2e

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/testutil"
)

// valueStore is a Prometheus that answers every raw read with a point a
// second over the range asked, for each of its families the query's
// __name__ regex matches: the value at Unix second s is value(family, s),
// written as Prometheus writes a sample ("NaN", "+Inf", "1e+308").
type valueStore struct {
	families []string
	value    func(family string, s int64) float64
}

var (
	storeNames = regexp.MustCompile(`__name__=~("(?:[^"\\]|\\.)*")`)
	storeRange = regexp.MustCompile(`\[(\d+)(ms|s|m|h)\]`)
)

func (v *valueStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = r.ParseForm()
	q := r.Form.Get("query")
	at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
	seconds := int64(10)
	if m := storeRange.FindStringSubmatch(q); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		seconds = int64((time.Duration(n) * map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour}[m[2]]).Seconds())
	}
	seconds = min(max(seconds, 1), 600) + 2
	var result []string
	points := func(f func(s int64) string) string {
		var vals []string
		for s := int64(at) - seconds; s <= int64(at); s++ {
			vals = append(vals, fmt.Sprintf(`[%d,"%s"]`, s, f(s)))
		}
		return strings.Join(vals, ",")
	}
	labels := `"instance":"a:8000","job":"vllm","model_name":"m"`
	if strings.HasPrefix(q, "up") {
		result = append(result, `{"metric":{"__name__":"up",`+labels+`},"values":[`+points(func(int64) string { return "1" })+`]}`)
	} else if m := storeNames.FindStringSubmatch(q); m != nil {
		re, _ := strconv.Unquote(m[1])
		match := regexp.MustCompile("^(?:" + re + ")$")
		for _, family := range v.families {
			name, extra, _ := strings.Cut(family, "{")
			if !match.MatchString(name) {
				continue
			}
			if extra != "" {
				extra = "," + strings.TrimSuffix(extra, "}")
			}
			result = append(result, fmt.Sprintf(`{"metric":{"__name__":%q,%s%s},"values":[%s]}`, name, labels, extra,
				points(func(s int64) string { return promValue(v.value(family, s)) })))
		}
	}
	_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, strings.Join(result, ","))
}

// promValue writes v as Prometheus's API does.
func promValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// nanFamilies are a vLLM replica's gauges and counters, and its TTFT
// histogram (its buckets, _sum and _count).
var nanFamilies = []string{
	"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
	"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
	`vllm:request_success_total{"finished_reason":"stop"}`,
	`vllm:time_to_first_token_seconds_bucket{"le":"0.5"}`, `vllm:time_to_first_token_seconds_bucket{"le":"+Inf"}`,
	"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count",
}

// nanButTTFT is the value of a family at Unix second s: NaN for the
// gauges and counters, 2 first tokens a second for the TTFT histogram.
func nanButTTFT(family string, s int64) float64 {
	switch {
	case strings.HasPrefix(family, "vllm:time_to_first_token_seconds_sum"):
		return 0.2 * float64(s%1_000_000)
	case strings.HasPrefix(family, "vllm:time_to_first_token_seconds"):
		return 2 * float64(s%1_000_000)
	}
	return math.NaN()
}

// alternatingCounters is the value of a family at Unix second s: gauges
// in their domain, every counter 1e308 and 1e307 in turn (past 2^53, so
// refused), the TTFT histogram counting.
func alternatingCounters(family string, s int64) float64 { return alternating(family, s, false) }

// alternatingAll alternates the histogram's values and the process's
// start time too.
func alternatingAll(family string, s int64) float64 { return alternating(family, s, true) }

func alternating(family string, s int64, everything bool) float64 {
	switch {
	case strings.HasPrefix(family, "vllm:num_requests_running"):
		return 1
	case strings.HasPrefix(family, "vllm:num_requests_waiting"):
		return 0
	case strings.HasPrefix(family, "vllm:kv_cache_usage_perc"):
		return 0.2
	case strings.HasPrefix(family, "vllm:time_to_first_token") && !everything:
		return nanButTTFT(family, s)
	case s%2 == 0:
		return 1e308
	}
	return 1e307
}

// nanPage serves a vLLM page whose gauges and counters are all NaN while
// its TTFT histogram counts 2 first tokens a second.
func nanPage(t *testing.T) string {
	start := time.Now()
	return testutil.StartServer(t, func(w http.ResponseWriter, _ *http.Request) {
		c := math.Round(2 * time.Since(start).Seconds())
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		var b strings.Builder
		for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"} {
			fmt.Fprintf(&b, "# TYPE %s gauge\n%s{model_name=\"m\"} NaN\n", name, name)
		}
		for _, name := range []string{"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total"} {
			fmt.Fprintf(&b, "# TYPE %s counter\n%s{model_name=\"m\"} NaN\n", name, name)
		}
		b.WriteString("# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} NaN\n")
		fmt.Fprintf(&b, ttftType+"vllm:time_to_first_token_seconds_bucket{le=\"0.5\",model_name=\"m\"} %g\n"+
			"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} %g\n"+
			"vllm:time_to_first_token_seconds_sum{model_name=\"m\"} %g\nvllm:time_to_first_token_seconds_count{model_name=\"m\"} %g\n", c, c, c/10, c)
		_, _ = w.Write([]byte(b.String()))
	})
}

// pastFlood is a store whose targets of a stretch are one, and whose
// every other answer is 100,000 series: the reads of the past pass
// their share of --max-memory.
func pastFlood(t *testing.T) http.Handler {
	flood := floodOf(100_000)
	one := &valueStore{families: nanFamilies, value: alternatingCounters}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if strings.HasPrefix(r.Form.Get("query"), "group by") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a:8000","job":"vllm"},"values":[[%s,"1"]]}]}}`, r.Form.Get("end"))
			return
		}
		if r.Form.Get("query") == "" {
			one.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(flood)
	})
}

// refusalCase is one row of the hostile table's refusals: a run of the
// binary, the exit code it must end with, what its output must say (and
// must not), the time it may take, and its peak RSS, which must stay
// within --max-memory's default of 256 MiB.
type refusalCase struct {
	name    string
	args    func(t *testing.T) []string
	code    int
	want    []string // each in stdout or stderr
	notWant []string // none in either
	within  time.Duration
}

// TestHostileRefusals runs each row and prints its outcome and peak RSS.
func TestHostileRefusals(t *testing.T) {
	t.Parallel()
	tests := []refusalCase{
		{
			name: "a page whose gauges and counters are all NaN while first tokens come is UNJUDGED, not IDLE or HEALTHY",
			args: func(t *testing.T) []string {
				return []string{"--once", "--json", "--no-gpus", "--window", "6s", "--interval", "2s", nanPage(t)}
			},
			code: command.ExitDegraded, want: []string{`"state": "unjudged"`, "running, waiting, prompt tokens, generation tokens, finished requests refused over the window", "the TTFT histogram counted"},
			notWant: []string{`"state": "idle"`, `"state": "healthy"`},
			within:  30 * time.Second,
		},
		{
			name: "a store whose gauges and counters are all NaN while first tokens come is UNJUDGED, not IDLE or HEALTHY",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(&valueStore{families: nanFamilies, value: nanButTTFT})
				t.Cleanup(srv.Close)
				return []string{"--once", "--json", "--window", "30s", "--interval", "1s", "--prometheus", srv.URL}
			},
			code: command.ExitDegraded, want: []string{`"state": "unjudged"`, "running, waiting, prompt tokens, generation tokens, finished requests refused over the window", "the TTFT histogram counted 2 req/s"},
			notWant: []string{`"state": "idle"`, `"state": "healthy"`},
			within:  30 * time.Second,
		},
		{
			name: "a store whose counters alternate 1e308 and 1e307 (refused) marks no restart",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(&valueStore{families: nanFamilies, value: alternatingCounters})
				t.Cleanup(srv.Close)
				return []string{"--once", "--json", "--window", "30s", "--interval", "1s", "--prometheus", srv.URL}
			},
			code: -1, want: []string{"past 2^53"}, notWant: []string{"window holds a restart", `"restarted": true`},
			within: 30 * time.Second,
		},
		{
			name: "a store whose counters, histogram and start time alternate 1e308 and 1e307 marks no restart",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(&valueStore{families: append(nanFamilies, "process_start_time_seconds", "http_requests_total"), value: alternatingAll})
				t.Cleanup(srv.Close)
				return []string{"--once", "--json", "--window", "30s", "--interval", "1s", "--prometheus", srv.URL}
			},
			code: -1, want: []string{"past 2^53"}, notWant: []string{"window holds a restart", `"restarted": true`},
			within: 30 * time.Second,
		},
		{
			name: "vtop rules --group-by without: a PromQL keyword promtool rejects in by (…)",
			args: func(*testing.T) []string { return []string{"rules", "--group-by", "without"} },
			code: command.ExitUsage, want: []string{`group-by "without" is a PromQL keyword`}, notWant: []string{"groups:"},
			within: 10 * time.Second,
		},
		{
			name: "vtop rules --group-by pod,NaN: a PromQL number",
			args: func(*testing.T) []string { return []string{"rules", "--group-by", "pod,NaN"} },
			code: command.ExitUsage, want: []string{`group-by "NaN" is a PromQL number`}, notWant: []string{"groups:"},
			within: 10 * time.Second,
		},
		{
			name: "vtop rules --hysteresis 9223372036854775807: a for: that wrapped to -10s",
			args: func(*testing.T) []string { return []string{"rules", "--hysteresis", "9223372036854775807"} },
			code: command.ExitUsage, want: []string{"hysteresis 9223372036854775807: for: would be"}, notWant: []string{"groups:", "for: -"},
			within: 10 * time.Second,
		},
		{
			name: "vtop rules --hysteresis 3689348815: a for: that wrapped to -3s709ms",
			args: func(*testing.T) []string { return []string{"rules", "--hysteresis", "3689348815"} },
			code: command.ExitUsage, want: []string{"hysteresis 3689348815: for: would be"}, notWant: []string{"groups:", "for: -"},
			within: 10 * time.Second,
		},
		{
			name: "--at -1m --window 1000h: a read of 36,000 chunks is refused at once",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(&valueStore{families: nanFamilies, value: alternatingCounters})
				t.Cleanup(srv.Close)
				return []string{"--prometheus", srv.URL, "--at", "-1m", "--window", "1000h", "--once"}
			},
			code: command.ExitUsage, want: []string{"--window 1000h0m0s with --at: the read of the past would span 1000h0m10s"},
			within: 10 * time.Second,
		},
		{
			name: "--at -1m --window 2562047h: a read that started in 1734 is refused at once",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(&valueStore{families: nanFamilies, value: alternatingCounters})
				t.Cleanup(srv.Close)
				return []string{"--prometheus", srv.URL, "--at", "-1m", "--window", "2562047h", "--once"}
			},
			code: command.ExitUsage, want: []string{"--window 2562047h0m0s with --at"},
			within: 10 * time.Second,
		},
		{
			name: "-f /dev/zero names the line and the limit",
			args: func(*testing.T) []string { return []string{"--once", "-f", "/dev/zero"} },
			code: command.ExitUsage, want: []string{"/dev/zero:1: a line over 64 KiB: one target per line"}, notWant: []string{"bufio"},
			within: 10 * time.Second,
		},
		{
			name: "-f a file of 1 GiB of NULs names the line and the limit",
			args: func(t *testing.T) []string {
				p := filepath.Join(t.TempDir(), "nuls.txt")
				if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(p, 1<<30); err != nil {
					t.Fatal(err)
				}
				return []string{"--once", "-f", p}
			},
			code: command.ExitUsage, want: []string{"nuls.txt:1: a line over 64 KiB: one target per line"}, notWant: []string{"bufio"},
			within: 10 * time.Second,
		},
		{
			name: "a target on port 99999 is a usage error, not DOWN",
			args: func(*testing.T) []string { return []string{"127.0.0.1:99999", "--once"} },
			code: command.ExitUsage, want: []string{`invalid target "127.0.0.1:99999": port 99999 is not 1–65535`},
			within: 10 * time.Second,
		},
		{
			name: "a --header with CR LF in its value is refused at start",
			args: func(*testing.T) []string {
				return []string{"--once", "--header", "X-Token: s3cret\r\nX-Other: b", "127.0.0.1:1"}
			},
			code: command.ExitUsage, want: []string{`--header "X-Token": its value holds a control character`}, notWant: []string{"s3cret"},
			within: 10 * time.Second,
		},
		{
			name: "diff b.vtrec b.vtrec of a fleet with a replica that never answered compares, saying so",
			args: func(t *testing.T) []string {
				live := testutil.StartServer(t, testutil.ServePage(string(testutil.VLLMPage(t, 1)), "text/plain; version=0.0.4"))
				dead := testutil.ClosedPort(t)
				rec := filepath.Join(t.TempDir(), "b.vtrec")
				if _, stderr, code := testutil.RunVtop(t, "record", "-o", rec, "--duration", "3s", "--interval", "200ms", "--window", "1s", live, dead); code != 0 {
					t.Fatalf("record: exit %d: %s", code, stderr)
				}
				return []string{"diff", rec, rec}
			},
			code: 0, want: []string{"no good scrape in the part compared; left out of the sum"}, notWant: []string{"fewer than two readings"},
			within: 30 * time.Second,
		},
		{
			name: "--once against a store that never answers waits what it says (no answer within 6s), not twice",
			args: func(t *testing.T) []string {
				stop := make(chan struct{})
				srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-stop:
					}
				}))
				t.Cleanup(func() { close(stop); srv.Close() })
				return []string{"--once", "--json", "--prometheus", srv.URL, "--timeout", "2s", "--interval", "5s"}
			},
			code: command.ExitNoData, want: []string{"no answer within 6s"},
			within: 9 * time.Second,
		},
		{
			name: "record --prometheus whose stretch's reads pass the memory budget exits 3 and leaves no header-only file",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(pastFlood(t))
				t.Cleanup(srv.Close)
				out := filepath.Join(t.TempDir(), "past.vtrec")
				t.Cleanup(func() {
					if _, err := os.Stat(out); err == nil {
						t.Errorf("%s left behind, holding no scrape", out)
					}
				})
				return []string{"record", "--prometheus", srv.URL, "--from", "-2m", "-o", out}
			},
			code: command.ExitNoData, want: []string{"narrow the selector"},
			within: 60 * time.Second,
		},
		{
			name: "--at against a store whose reads pass the memory budget exits 3",
			args: func(t *testing.T) []string {
				srv := httptest.NewServer(pastFlood(t))
				t.Cleanup(srv.Close)
				return []string{"--prometheus", srv.URL, "--at", "-1m", "--once"}
			},
			code: command.ExitNoData, want: []string{"narrow the selector"},
			within: 60 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runRefusal(t, tt)
		})
	}
}

// runRefusal runs one row of the table.
func runRefusal(t *testing.T, tt refusalCase) {
	t.Helper()
	cmd := testutil.VtopCommand(t, tt.args(t)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	peak := make(chan float64, 1)
	go func() { peak <- peakRSSMiB(cmd.Process.Pid) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(tt.within):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %s\n%s", tt.within, tail(stdout.String()+stderr.String()))
	}
	took := time.Since(began)
	code := testutil.ExitStatus(t, err, cmd.Args)
	peakMiB := <-peak
	t.Logf("exit %d after %s, peak RSS %.0f MiB", code, took.Round(10*time.Millisecond), peakMiB)
	out := stdout.String() + stderr.String()
	if tt.code >= 0 && code != tt.code {
		t.Errorf("exit %d, want %d\n%s", code, tt.code, tail(out))
	}
	for _, w := range tt.want {
		if !strings.Contains(out, w) {
			t.Errorf("output does not say %q\n%s", w, tail(out))
		}
	}
	for _, w := range tt.notWant {
		if strings.Contains(out, w) {
			t.Errorf("output says %q\n%s", w, tail(out))
		}
	}
	if peakMiB > 256 {
		t.Errorf("peak RSS %.0f MiB, over --max-memory's 256 MiB", peakMiB)
	}
}

// TestHostileTargetsFIFO: -f from a FIFO that never writes (a hung
// -f <(kubectl …)) is stopped by Ctrl-C or SIGTERM, whether a writer has
// the FIFO open or none ever opens it.
func TestHostileTargetsFIFO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		sig    syscall.Signal
		writer bool // a writer holds the FIFO open, writing nothing
	}{
		{"Ctrl-C, a writer that writes nothing", syscall.SIGINT, true},
		{"SIGTERM, a writer that writes nothing", syscall.SIGTERM, true},
		{"Ctrl-C, no writer ever", syscall.SIGINT, false},
		{"SIGTERM, no writer ever", syscall.SIGTERM, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), "targets")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.writer {
				w, err := os.OpenFile(fifo, os.O_RDWR, 0) // opens at once, and holds a writer
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Close() })
			}
			cmd := testutil.VtopCommand(t, "--once", "--no-gpus", "-f", fifo)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // reading the FIFO by now
			began := time.Now()
			_ = cmd.Process.Signal(tt.sig)
			err := testutil.WaitWithin(t, cmd, 10*time.Second)
			code := testutil.ExitStatus(t, err, cmd.Args)
			t.Logf("exit %d %s after the signal; stderr %q", code, time.Since(began).Round(time.Millisecond), stderr.String())
			if code != command.ExitUsage {
				t.Errorf("exit %d, want %d: the targets never came", code, command.ExitUsage)
			}
			if !strings.Contains(stderr.String(), fifo) {
				t.Errorf("stderr %q does not name the file", stderr.String())
			}
		})
	}
}
