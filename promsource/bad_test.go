package promsource

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

// fakeProm answers the source's queries as a Prometheus server with one
// replica ("a:8000") would, unless its mode says otherwise.
type fakeProm struct {
	mu      sync.Mutex
	mode    string // "" answers well
	count   int    // what count() says; 0 means the empty vector, and no series
	headers http.Header
}

func (f *fakeProm) set(mode string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode = mode
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	mode, count := f.mode, f.count
	f.headers = r.Header.Clone()
	f.mu.Unlock()
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	if rest, ok := strings.CutPrefix(mode, "raw "); ok {
		// A fault of the raw read only: the count and up answer well.
		mode = ""
		if strings.HasPrefix(q, "{__name__") {
			mode = rest
		}
	}
	if mode != "no vllm anywhere" && f.fault(w, r, mode) {
		return
	}
	at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasPrefix(q, "count by (job) (up)"):
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"prometheus"},"value":[%.3f,"1"]},{"metric":{"job":"node"},"value":[%.3f,"3"]}]}}`, at, at)
	case strings.HasPrefix(q, "count by (job)") && mode == "no vllm anywhere":
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	case strings.HasPrefix(q, "count by (job)"):
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"vllm-prod"},"value":[%.3f,"40"]},{"metric":{"job":"kserve"},"value":[%.3f,"8"]}]}}`, at, at)
	case strings.HasPrefix(q, "count("):
		result := ""
		if count > 0 {
			result = fmt.Sprintf(`{"metric":{},"value":[%.3f,"%d"]}`, at, count)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, result)
	case strings.HasPrefix(q, "up"):
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"a:8000","job":"vllm"},"values":[[%.3f,"1"],[%.3f,"1"]]}]}}`, at-2, at-1)
	case count == 0:
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
	default:
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:num_requests_running","instance":"a:8000","job":"vllm"},"values":[[%.3f,"3"],[%.3f,"4"]]},{"metric":{"__name__":"vllm:generation_tokens_total","instance":"a:8000","job":"vllm"},"values":[[%.3f,"100"],[%.3f,"150"]]}]}}`, at-2, at-1, at-2, at-1)
	}
}

// fault answers as a broken server would, and reports whether it did.
func (f *fakeProm) fault(w http.ResponseWriter, r *http.Request, mode string) bool {
	switch mode {
	case "slow":
		<-r.Context().Done()
	case "503":
		http.Error(w, "Service Unavailable: too many queries\nmore text", http.StatusServiceUnavailable)
	case "401":
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	case "404":
		http.NotFound(w, r)
	case "html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><html><body>Grafana</body></html>")
	case "other json":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"dashboards":[{"id":1}]}`)
	case "truncated":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:num_requests_running","instance":"a:8000"},"values":[[1.5,"3"]`)
	case "vector":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	case "bad value":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:num_requests_running","instance":"a:8000"},"values":[[1.5,"many"]]}]}}`)
	case "rejected":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"1:27: parse error: unexpected \"=\" in label matching, expected string\u001b[2J"}`)
	default:
		return false
	}
	return true
}

// refreshOnce runs one refresh of a source and evaluates it.
func refreshOnce(t *testing.T, s *Source) analysis.Report {
	t.Helper()
	s.refresh(context.Background())
	return analysis.Analyze(s.Now(), s.Readings(nil), analysis.DefaultConfig(), nil)
}

// Each way a server can fail gives a clear message, once, in the
// source's status (which names the server apart, so the message does not
// repeat it); a server that never answered gives no replicas, not one
// named after the server.
func TestBadServers(t *testing.T) {
	tests := []struct {
		name  string
		mode  string
		count int
		cfg   Config
		url   string // instead of the fake's
		want  string
	}{
		{name: "refused", url: "http://" + testutil.ClosedPort(t), count: 2, want: "connection refused"},
		// The first read is whole: it may take wholeReadTimeouts timeouts.
		{name: "slow", mode: "slow", count: 2, cfg: Config{Timeout: 200 * time.Millisecond}, want: "no answer within 600ms"},
		{name: "5xx", mode: "503", count: 2, want: "HTTP 503 Service Unavailable: too many queries"},
		{name: "unauthorized", mode: "401", count: 2, want: "HTTP 401 Unauthorized: not authorized"},
		{name: "wrong path", mode: "404", count: 2, want: "no Prometheus query API at this URL"},
		{name: "HTML", mode: "html", count: 2, want: "not a Prometheus query API: the server answered HTML"},
		{name: "another API's JSON", mode: "other json", count: 2, want: "not a Prometheus query API: the answer holds no query result"},
		{name: "query rejected", mode: "rejected", count: 2, want: `Prometheus rejected the query: 1:27: parse error: unexpected "=" in label matching`},
		{name: "no vLLM series", count: 0, cfg: Config{Selector: `{job="vllm"}`},
			want: `the selector {job="vllm"} matches no vLLM series; vLLM series exist under job="kserve", job="vllm-prod"`},
		{name: "no vLLM series anywhere", mode: "no vllm anywhere", count: 0, cfg: Config{Selector: `{job="nope"}`},
			want: `the selector {job="nope"} matches no vLLM series, and the server has none under any job; the jobs it scrapes: job="node", job="prometheus"`},
		// The fake's one replica has two series: one over a cap of one.
		{name: "huge fleet", count: 2, cfg: Config{MaxSeries: 1}, want: "the selector matches more than 1 series, the cap; narrow it"},
		// The fake answers each half of the raw read with those two: four
		// in all, over a cap of three though each answer is under it.
		{name: "huge fleet, over the cap in both halves together", count: 2, cfg: Config{MaxSeries: 3}, want: "the selector matches more than 3 series, the cap"},
		{name: "answer over the cap", count: 2, cfg: Config{MaxBody: 300}, want: "larger than the cap"},
		// The raw read is decoded as it arrives, apart from the other
		// queries: its failures read alike.
		{name: "raw read: 5xx", mode: "raw 503", count: 2, want: "HTTP 503 Service Unavailable: too many queries"},
		{name: "raw read: slow", mode: "raw slow", count: 2, cfg: Config{Timeout: 200 * time.Millisecond}, want: "no answer within 600ms"},
		{name: "raw read: HTML", mode: "raw html", count: 2, want: "not a Prometheus query API: the server answered HTML"},
		{name: "raw read: another API's JSON", mode: "raw other json", count: 2, want: "not a Prometheus query API: the answer holds no query result"},
		{name: "raw read: rejected", mode: "raw rejected", count: 2, want: `Prometheus rejected the query: 1:27: parse error`},
		{name: "raw read: truncated", mode: "raw truncated", count: 2, want: "not a Prometheus query API: the answer ends early (truncated JSON)"},
		{name: "raw read: not a matrix", mode: "raw vector", count: 2, want: "not a Prometheus query API: a range selector answered vector"},
		{name: "raw read: a value that is no number", mode: "raw bad value", count: 2, want: "not a Prometheus query API: invalid JSON: decodePoint: value"},
		{name: "raw read: over the cap", count: 2, cfg: Config{MaxBody: 250}, want: "larger than the cap"},
	}
	for _, tt := range tests {
		fake := &fakeProm{mode: tt.mode, count: tt.count}
		srv := httptest.NewServer(fake)
		cfg := tt.cfg
		cfg.URL = srv.URL
		if tt.url != "" {
			cfg.URL = tt.url
		}
		s := testSource(t, cfg)
		rep := refreshOnce(t, s)
		srv.Close()
		st := s.Status()
		if st.OK() || !strings.Contains(st.Problem, tt.want) || !safetext.IsSafe(st.Problem) {
			t.Errorf("%s: status problem %q, want one with %q", tt.name, st.Problem, tt.want)
		}
		if st.Name != "Prometheus "+s.Name() || strings.Contains(st.Problem, s.Name()) {
			t.Errorf("%s: source %q, problem %q: want the server named once, by the source", tt.name, st.Name, st.Problem)
		}
		if len(rep.Replicas) != 0 {
			t.Errorf("%s: replicas %+v: a server that never answered has none to show", tt.name, rep.Replicas)
		}
		if st.LastGood.IsZero() != true || st.Checked.IsZero() {
			t.Errorf("%s: last good %v, checked %v: want no good data, and the time of the attempt", tt.name, st.LastGood, st.Checked)
		}
	}
}

// A failing server keeps every replica's last data and verdict, at the
// time they were read (not DOWN: the replicas may be fine); the status
// says how old they are; when the cause goes, the same source is back
// without a restart.
func TestKeepsLastDataAndRecovers(t *testing.T) {
	fake := &fakeProm{count: 2}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := testSource(t, Config{URL: srv.URL})
	steps := []struct {
		mode   string
		wantOK bool
	}{
		{"", true},
		{"503", false},
		{"slow", false},
		{"", true},
	}
	var first analysis.State
	s.cfg.Timeout = 200 * time.Millisecond
	for i, st := range steps {
		fake.set(st.mode)
		rep := refreshOnce(t, s)
		if len(rep.Replicas) != 1 || rep.Replicas[0].Target != "a:8000" {
			t.Fatalf("step %d: replicas %+v", i, rep.Replicas)
		}
		r := rep.Replicas[0]
		if i == 0 {
			first = r.State
		}
		if r.State == analysis.StateDown || (!st.wantOK && r.State != first) || s.Status().OK() != st.wantOK {
			t.Errorf("step %d (%q): %s, status %+v", i, st.mode, r.State, s.Status())
		}
		if status := s.Status(); !st.wantOK && (!s.Now().Equal(status.LastGood) || status.Checked.Before(status.LastGood)) {
			t.Errorf("step %d (%q): readings of %v, status %+v: want the last good readings, at their time, and a later attempt", i, st.mode, s.Now(), status)
		}
		if r.Figures.Running != 4 || r.LastGood.IsZero() {
			t.Errorf("step %d (%q): running %v, last good %v: the last data must stay", i, st.mode, r.Figures.Running, r.LastGood)
		}
	}
}

// Access options reach the server; credentials never reach the output.
func TestAccessAndSecrets(t *testing.T) {
	fake := &fakeProm{mode: "401"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	token := testutil.WriteFile(t, "token", []byte("tok-s3cret\n"))
	basic := testutil.WriteFile(t, "basic", []byte("alice:pw-s3cret\n"))
	tests := []struct {
		name   string
		access Access
		url    string
		check  func(h http.Header) bool
	}{
		{"bearer", Access{BearerTokenFile: token}, srv.URL, func(h http.Header) bool { return h.Get("Authorization") == "Bearer tok-s3cret" }},
		{"basic", Access{BasicAuthFile: basic}, srv.URL, func(h http.Header) bool { return h.Get("Authorization") == "Basic YWxpY2U6cHctczNjcmV0" }},
		{"tenant header", Access{Headers: []string{"X-Scope-OrgID: team-s3cret"}}, srv.URL, func(h http.Header) bool { return h.Get("X-Scope-OrgID") == "team-s3cret" }},
		{"user info in the URL", Access{}, strings.Replace(srv.URL, "http://", "http://bob:url-s3cret@", 1), func(h http.Header) bool { return h.Get("Authorization") != "" }},
		// A Prometheus on this machine is not asked to compress.
		{"no gzip on loopback", Access{}, srv.URL, func(h http.Header) bool { return h.Get("Accept-Encoding") == "identity" }},
	}
	for _, tt := range tests {
		s := testSource(t, Config{URL: tt.url, Access: tt.access})
		rep := refreshOnce(t, s)
		fake.mu.Lock()
		h := fake.headers
		fake.mu.Unlock()
		if !tt.check(h) {
			t.Errorf("%s: the server saw headers %v", tt.name, h)
		}
		out := fmt.Sprintf("%s %+v %+v", s.Name(), s.Status(), rep)
		if strings.Contains(out, "s3cret") {
			t.Errorf("%s: a secret reached the output: %s", tt.name, out)
		}
	}
}

// Options that cannot work are refused by New, naming the option and not
// echoing secrets.
func TestNewRefusesBadOptions(t *testing.T) {
	empty := testutil.WriteFile(t, "empty", nil)
	noColon := testutil.WriteFile(t, "basic", []byte("alice\n"))
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no scheme", Config{URL: "prometheus:9090"}, "URL \"prometheus:9090\": want http(s)://host"},
		{"selector without braces", Config{URL: "http://p", Selector: `job="vllm"`}, "selector must be label matchers in braces"},
		{"missing token file", Config{URL: "http://p", Access: Access{BearerTokenFile: "/nonexistent/token"}}, "bearer token file"},
		{"empty token file", Config{URL: "http://p", Access: Access{BearerTokenFile: empty}}, "is empty"},
		{"basic auth without colon", Config{URL: "http://p", Access: Access{BasicAuthFile: noColon}}, "user:password"},
		{"bad header", Config{URL: "http://p", Access: Access{Headers: []string{"X-Secret s3cret"}}}, `header must be "Key: Value"`},
		{"missing CA file", Config{URL: "http://p", Access: Access{CAFile: "/nonexistent/ca.pem"}}, "CA file"},
		{"CA file without a certificate", Config{URL: "http://p", Access: Access{CAFile: empty}}, "no PEM certificate"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.want)
		}
	}
}

// A refresh costs the same few requests whatever the fleet's size. A
// whole read (the first, after a failure, when the window changes) asks
// the raw samples of the window, in two halves, and up, and counts
// nothing: the cap is checked as the answers arrive. Every refresh after
// it is an increment, however long they go on: the raw samples since the
// refresh before, with a margin, in the same halves; up; and one part of
// the series over the whole window, the next part each time.
func TestConstantRequestsPerRefresh(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	fake := &fakeProm{count: 2}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err == nil {
			mu.Lock()
			queries = append(queries, r.Form.Get("query"))
			mu.Unlock()
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	clock := t0
	s := testSource(t, Config{URL: srv.URL, Window: 30 * time.Second, Now: func() time.Time { return clock }})
	const full, counted = "[30000ms]", "count("
	steps := []struct {
		after     time.Duration
		mode      string
		window    time.Duration // set before the refresh when not zero
		requests  int
		rawRange  string
		part      int // the part re-read over the window; -1 for none
		fullReads int
	}{
		{0, "", 0, 3, full, -1, 1},                                // the first reads the whole window
		{5 * time.Second, "", 0, 4, "[7000ms]", 0, 1},             // 5 s since, and the 2 s margin
		{50 * time.Second, "", 0, 3, full, -1, 2},                 // 50 s since: more than the window
		{5 * time.Second, "", 0, 4, "[7000ms]", 0, 2},             // 5 s since the full read
		{25 * time.Second, "", 0, 4, "[27000ms]", 1, 2},           // 30 s since
		{25 * time.Second, "", 0, 4, "[27000ms]", 2, 2},           // 55 s since
		{5 * time.Second, "", 0, 4, "[7000ms]", 3, 2},             // a minute: still an increment
		{5 * time.Second, "", 0, 4, "[7000ms]", 4, 2},             // and the next part
		{5 * time.Second, "503", 0, 0, "", -1, 2},                 // the queries fail
		{5 * time.Second, "", 0, 3, full, -1, 3},                  // after a failure: read whole
		{1 * time.Second, "", 0, 4, "[3000ms]", 0, 3},             // 1 s since; the parts start again
		{1 * time.Second, "", time.Minute, 3, "[60000ms]", -1, 4}, // the window changed
	}
	for i, st := range steps {
		clock = clock.Add(st.after)
		fake.set(st.mode)
		if st.window > 0 {
			s.SetWindow(st.window)
		}
		mu.Lock()
		queries = nil
		mu.Unlock()
		refreshOnce(t, s)
		mu.Lock()
		got := slices.Clone(queries)
		mu.Unlock()
		if st.mode != "" {
			// a failing server may be asked the count only
			continue
		}
		if len(got) != st.requests {
			t.Errorf("step %d: %d requests %q, want %d", i, len(got), got, st.requests)
		}
		hasCount, part := false, -1
		rawRanges := map[int]string{}
	queries:
		for _, q := range got {
			for h := range s.q.halves {
				if sel := s.q.selector(s.q.halves[h]); strings.HasPrefix(q, sel+"[") {
					rawRanges[h] = q[len(sel):]
					continue queries
				}
			}
			switch {
			case strings.HasPrefix(q, counted):
				hasCount = true
			case strings.HasPrefix(q, "{__name__"):
				for p := range s.q.parts {
					if q == s.q.raw(s.q.parts[p], 30*time.Second) {
						part = p
					}
				}
				if part < 0 {
					t.Errorf("step %d: %q is neither the raw read nor a part of it over the window", i, q)
				}
			}
		}
		if hasCount || len(rawRanges) != rawSplit || rawRanges[0] != st.rawRange || rawRanges[1] != st.rawRange || part != st.part {
			t.Errorf("step %d: counted %v, raw ranges %v, part %d re-read; want no count, %d halves over %s, part %d", i, hasCount, rawRanges, part, rawSplit, st.rawRange, st.part)
		}
		if n := s.Stats().FullReads; n != st.fullReads {
			t.Errorf("step %d: %d full reads, want %d", i, n, st.fullReads)
		}
	}
}

// An increment must answer within the timeout; a whole-window read (the
// first, and the one after a failure) gets wholeReadTimeouts of them, so
// that a busy server that answers it slowly is still read.
func TestWholeReadsGetLongerTimeouts(t *testing.T) {
	fake := &fakeProm{count: 2}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	clock := t0
	s := testSource(t, Config{URL: srv.URL, Timeout: 200 * time.Millisecond, Now: func() time.Time { return clock }})
	steps := []struct {
		mode, want string
	}{
		{"", ""},                               // whole: fine
		{"slow", "no answer within 200ms"},     // an increment
		{"slow", "no answer within 600ms"},     // whole again, after the failure
		{"", ""},                               // whole, fine
		{"raw slow", "no answer within 200ms"}, // an increment
	}
	for i, st := range steps {
		clock = clock.Add(5 * time.Second)
		fake.set(st.mode)
		refreshOnce(t, s)
		if p := s.Status().Problem; (st.want == "") != (p == "") || !strings.Contains(p, st.want) {
			t.Errorf("step %d (%q): problem %q, want %q", i, st.mode, p, st.want)
		}
	}
}

// A server that answers nothing costs a refresh one wait, the one its
// problem names ("no answer within 600ms"): the targets read ahead (up)
// failing ends the refresh, instead of the raw read waiting as long again
// (--once waited 60 s saying "no answer within 30s").
func TestSlowServerOneWait(t *testing.T) {
	fake := &fakeProm{mode: "slow", count: 2}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := testSource(t, Config{URL: srv.URL, Timeout: 200 * time.Millisecond})
	began := time.Now()
	refreshOnce(t, s)
	took := time.Since(began)
	if st := s.Status(); !strings.Contains(st.Problem, "no answer within 600ms") {
		t.Fatalf("problem %q, want no answer within 600ms", st.Problem)
	}
	if took > 1100*time.Millisecond {
		t.Errorf("the refresh took %s, over the 600ms its problem names", took.Round(time.Millisecond))
	}
}

// A refresh asked as the source starts (--once) is served by the first
// refresh, which began with nothing read: against a server that answers
// nothing, one wait, not that one and another.
func TestFirstRefreshServesTheFirstAsk(t *testing.T) {
	fake := &fakeProm{mode: "slow", count: 2}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := testSource(t, Config{URL: srv.URL, Timeout: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	began := time.Now()
	time.Sleep(50 * time.Millisecond) // the first refresh is under way
	<-s.Refresh()
	if took := time.Since(began); took > 1100*time.Millisecond {
		t.Errorf("the first refresh asked came in after %s, over the 600ms its problem names (%q)", took.Round(time.Millisecond), s.Status().Problem)
	}
}
