package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/testutil"
)

// hostilePrometheus answers every query as a hostile or broken
// Prometheus would: the body for the raw read's names (counter, the
// points of one replica's request counter in the order sent), up for up,
// and flood, when set, to every query alike.
type hostilePrometheus struct {
	// counter holds the seconds before the evaluation of the points sent,
	// in the order sent; their values are 16 requests a second since the
	// epoch, so that reads at different times (a refresh's increment)
	// answer points of the same counter.
	counter []float64
	flood   []byte
	// echo labels the replica with the bearer token it was sent: its
	// instance "<token>:1", its model_name "<token>".
	echo bool
}

func (h *hostilePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if h.flood != nil {
		_, _ = w.Write(h.flood)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
	instance, model := "a:8000", ""
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && h.echo {
		instance, model = token+":1", `,"model_name":`+strconv.Quote(token)
	}
	var result []string
	if strings.HasPrefix(q, "up") {
		result = append(result, fmt.Sprintf(`{"metric":{"__name__":"up","instance":%q,"job":"vllm"},"values":[[%.3f,"1"],[%.3f,"1"]]}`, instance, at-2, at-1))
	} else if m := regexp.MustCompile(`__name__=~("(?:[^"\\]|\\.)*")`).FindStringSubmatch(q); m != nil {
		re, _ := strconv.Unquote(m[1])
		if regexp.MustCompile("^(?:" + re + ")$").MatchString("vllm:request_success_total") {
			var vals []string
			for _, ago := range h.counter {
				t := at - ago
				vals = append(vals, fmt.Sprintf(`[%.3f,"%s"]`, t, strconv.FormatFloat(16*t, 'f', -1, 64)))
			}
			result = append(result, `{"metric":{"__name__":"vllm:request_success_total","finished_reason":"stop","instance":`+strconv.Quote(instance)+`,"job":"vllm"`+model+`},"values":[`+strings.Join(vals, ",")+`]}`)
		}
	}
	_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, strings.Join(result, ","))
}

// floodOf is a matrix answer of n series of six points: a whole large
// fleet answered to any query.
func floodOf(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"__name__":"vllm:num_requests_running","instance":"10.%d.%d.%d:8000","job":"vllm","pod":"vllm-%d"},"values":[[1,"1"],[2,"1"],[3,"1"],[4,"1"],[5,"1"],[6,"1"]]}`, i>>16, (i>>8)&255, i&255, i)
	}
	b.WriteString("]}}")
	return b.Bytes()
}

// TestHostilePrometheus runs `vtop --once --json --prometheus` against
// servers answering what a proxy, a broken remote store or a flood
// would, one row per case with its outcome: the exit code, what the
// source's problem and warnings say, the requests a second read, and
// the peak RSS of the process (its bound is --max-memory's default).
func TestHostilePrometheus(t *testing.T) {
	var inOrder, backwards, twice []float64
	for s := 40.0; s >= 1; s-- {
		inOrder = append(inOrder, s)
	}
	for i := len(inOrder) - 1; i >= 0; i-- {
		backwards = append(backwards, inOrder[i])
	}
	twice = append(append(twice, inOrder[:30]...), inOrder[2:]...)
	tests := []struct {
		name    string
		server  *hostilePrometheus
		args    []string
		code    int
		problem string  // in the source's problem; "" for none
		warning string  // in its warnings; "" for none
		rps     float64 // the replica's requests a second; 0 for no replica
	}{
		// One counter is not a whole replica: it stays warming, exit 1.
		{name: "points in order", server: &hostilePrometheus{counter: inOrder}, code: command.ExitDegraded, rps: 16},
		{name: "points newest first", server: &hostilePrometheus{counter: backwards}, code: command.ExitDegraded, rps: 16,
			warning: "1 series answered points out of time order or twice at one time"},
		{name: "points sent twice", server: &hostilePrometheus{counter: twice}, code: command.ExitDegraded, rps: 16,
			warning: "1 series answered points out of time order or twice at one time"},
		{name: "100,000 series to every query", server: &hostilePrometheus{flood: floodOf(100_000)}, code: command.ExitNoData,
			problem: `narrow the selector (e.g. by namespace or job) or raise --max-memory (at `},
		{name: "a bound that is no size", server: &hostilePrometheus{}, args: []string{"--max-memory", "lots"}, code: command.ExitUsage},
		// The store answers the token it was sent as the replica's
		// instance and model: the report names the replica
		// "[redacted]:1" and its model "[redacted]" (below: no token).
		{name: "the bearer token echoed in instance and model_name", server: &hostilePrometheus{counter: inOrder, echo: true},
			args: credentialFlags(t, "token"), code: command.ExitDegraded, rps: 16},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(tt.server)
		cmd := testutil.VtopCommand(t, append([]string{"--once", "--json", "--window", "10s", "--prometheus", srv.URL}, tt.args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		peakMiB := peakRSSMiB(cmd.Process.Pid)
		code := testutil.ExitStatus(t, cmd.Wait(), cmd.Args)
		srv.Close()
		t.Logf("%s: exit %d, peak RSS %.0f MiB", tt.name, code, peakMiB)
		if code != tt.code {
			t.Errorf("%s: exit code %d, want %d\n%s%s", tt.name, code, tt.code, stdout.String(), stderr.String())
			continue
		}
		if peakMiB > 256 {
			t.Errorf("%s: peak RSS %.0f MiB, over the bound of 256 MiB", tt.name, peakMiB)
		}
		if tt.code == command.ExitUsage {
			if want := `--max-memory: "lots" is not a size`; !strings.Contains(stderr.String(), want) {
				t.Errorf("%s: stderr %q, want %q", tt.name, stderr.String(), want)
			}
			continue
		}
		checkHostileReport(t, tt.name, stdout.Bytes(), tt.problem, tt.warning, tt.rps)
		if tt.server.echo && (strings.Contains(stdout.String()+stderr.String(), hostileToken) ||
			!strings.Contains(stdout.String(), `"target": "[redacted]:1"`) || !strings.Contains(stdout.String(), `"model": "[redacted]"`)) {
			t.Errorf("%s: want the replica and its model named [redacted], the token nowhere:\n%s%s", tt.name, stdout.String(), stderr.String())
		}
	}
}

// peakRSSMiB follows a process's peak resident set (its VmHWM) until
// it ends and returns the last seen, in MiB. (The rusage of a child
// counts the parent's pages at the fork.)
func peakRSSMiB(pid int) float64 {
	peak := 0.0
	for {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return peak
		}
		for line := range strings.Lines(string(status)) {
			if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64)
				peak = max(peak, n/1024)
			}
		}
		if strings.Contains(string(status), "State:\tZ") {
			return peak
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkHostileReport checks a --json report's source problem and
// warnings and its one replica's requests a second (none if rps is 0).
func checkHostileReport(t *testing.T, name string, out []byte, problem, warning string, rps float64) {
	t.Helper()
	var r struct {
		Replicas []struct {
			RPS float64 `json:"requests_per_second"`
		} `json:"replicas"`
		Source struct {
			Problem  string   `json:"problem"`
			Warnings []string `json:"warnings"`
		} `json:"source"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	warnings := strings.Join(r.Source.Warnings, "\n")
	switch {
	case problem == "" && r.Source.Problem != "" || !strings.Contains(r.Source.Problem, problem):
		t.Errorf("%s: problem %q, want %q", name, r.Source.Problem, problem)
	case warning == "" && warnings != "" || !strings.Contains(warnings, warning):
		t.Errorf("%s: warnings %q, want %q", name, warnings, warning)
	case rps == 0 && len(r.Replicas) != 0:
		t.Errorf("%s: %d replicas, want none", name, len(r.Replicas))
	case rps != 0 && (len(r.Replicas) != 1 || math.Abs(r.Replicas[0].RPS-rps) > 0.5):
		t.Errorf("%s: replicas %+v, want one at %g requests/s", name, r.Replicas, rps)
	}
}

// TestHostileSlowPrometheus runs `vtop --jsonl` against a server that
// takes 4 s over every answer: the lines come in time order, those
// before the first answer say it has not come, and the replica is read
// once it has.
func TestHostileSlowPrometheus(t *testing.T) {
	var counter []float64
	for s := 40.0; s >= 1; s-- {
		counter = append(counter, s)
	}
	h := &hostilePrometheus{counter: counter}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(4 * time.Second)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cmd := testutil.VtopCommand(t, "--jsonl", "--duration", "10s", "--interval", "3s", "--timeout", "2500ms", "--window", "10s", "--prometheus", srv.URL)
	out, err := cmd.Output()
	if code := testutil.ExitStatus(t, err, cmd.Args); code != 0 {
		t.Fatalf("exit code %d, want 0\n%s", code, out)
	}
	var last time.Time
	waiting, answered := 0, 0
	for line := range strings.Lines(string(out)) {
		var r struct {
			Time     time.Time         `json:"time"`
			Replicas []json.RawMessage `json:"replicas"`
			Source   struct{ Problem string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if r.Time.Before(last) {
			t.Errorf("a line stamped %s after one stamped %s: out of time order", r.Time, last)
		}
		last = r.Time
		switch {
		case len(r.Replicas) == 1:
			answered++
		case strings.Contains(r.Source.Problem, "no answer yet"):
			waiting++
		default:
			t.Errorf("a line with %d replicas and the problem %q: want the replica, or the wait said", len(r.Replicas), r.Source.Problem)
		}
	}
	if waiting == 0 || answered == 0 {
		t.Errorf("%d lines waiting, %d with the replica; want both", waiting, answered)
	}
}
