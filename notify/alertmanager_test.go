package notify

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/safetext"
)

func TestParseAlertmanagerURL(t *testing.T) {
	tests := []struct {
		raw, wantErr string
	}{
		{"http://am:9093", ""},
		{"https://am.example/alertmanager/", ""},
		{"am:9093", "not an http(s) URL"},
		{"ftp://am:9093", "not an http(s) URL"},
		{"http://", "not an http(s) URL"},
		{"http://user:hunter22@am:9093", "credentials do not go in the URL"},
		{"http://am:9093/?x=1", "without query"},
	}
	for _, tt := range tests {
		_, err := ParseAlertmanagerURL(tt.raw)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.raw, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.raw, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), "hunter22"):
			t.Errorf("%s: the error repeats the password: %v", tt.raw, err)
		}
	}
}

// fakeAlertmanager is an HTTP server that records the alerts posted to
// /api/v2/alerts and answers with the status its fail function gives.
type fakeAlertmanager struct {
	mu     sync.Mutex
	posts  [][]Alert
	fail   func(n int) (int, string) // status and body of post n (from 0)
	paths  []string
	server *httptest.Server
}

func startFake(t *testing.T, fail func(int) (int, string)) *fakeAlertmanager {
	f := &fakeAlertmanager{fail: fail}
	f.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var alerts []Alert
		if err := json.NewDecoder(r.Body).Decode(&alerts); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		n := len(f.paths)
		f.paths = append(f.paths, r.URL.Path)
		status, body := http.StatusOK, ""
		if f.fail != nil {
			status, body = f.fail(n)
		}
		if status == http.StatusOK {
			f.posts = append(f.posts, alerts)
		}
		f.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(f.server.Close)
	return f
}

func (f *fakeAlertmanager) delivered() (posts [][]Alert, paths []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]Alert(nil), f.posts...), append([]string(nil), f.paths...)
}

// notices collects what a sender says.
type notices struct {
	mu   sync.Mutex
	said []string
}

func (n *notices) say(s string) { n.mu.Lock(); n.said = append(n.said, s); n.mu.Unlock() }
func (n *notices) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.said...)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runSender(t *testing.T, cfg AlertmanagerConfig) *Alertmanager {
	t.Helper()
	s, err := NewAlertmanager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func TestAlertmanagerPostsToTheV2API(t *testing.T) {
	am := startFake(t, nil)
	s := runSender(t, AlertmanagerConfig{URL: am.server.URL + "/prefix/"})
	tr := NewTracker(time.Minute)
	s.Enqueue(tr.Update(followed(nil, report(0, "gpu-a:8000=full", "gpu-b:8000=healthy"))))
	// The sender counts a post once the server has answered it, so after
	// the server holds it: wait for both.
	eventually(t, "one post, counted", func() bool { p, _ := am.delivered(); return len(p) == 1 && s.Stats().Posts == 1 })
	posts, paths := am.delivered()
	if paths[0] != "/prefix/api/v2/alerts" {
		t.Errorf("posted to %s, want /prefix/api/v2/alerts", paths[0])
	}
	a := posts[0][0]
	if a.Labels["alertname"] != "VtopFull" || a.Labels["replica"] != "gpu-a:8000" || !a.StartsAt.Equal(t0) || !a.EndsAt.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("posted %+v", a)
	}
	if st := s.Stats(); st.Posts != 1 || st.Alerts != 1 || st.Failures != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestAlertmanagerFailuresAreSaidKeptAndRetried(t *testing.T) {
	am := startFake(t, func(n int) (int, string) {
		if n < 2 {
			return http.StatusInternalServerError, "upstream said: token s3cr3t-token"
		}
		return http.StatusOK, ""
	})
	var said notices
	safetext.AddSecrets("s3cr3t-token") // what the client sent
	s := runSender(t, AlertmanagerConfig{URL: am.server.URL, Say: said.say})
	tr := NewTracker(time.Minute)
	s.Enqueue(tr.Update(followed(nil, report(0, "a=down"))))
	// The recovery is said after the post returns, so after the server has
	// the alert: wait for both.
	eventually(t, "the alert delivered after two failures, and the recovery said", func() bool {
		p, _ := am.delivered()
		return len(p) == 1 && len(said.all()) >= 2
	})
	got := said.all()
	if len(got) != 2 || !strings.Contains(got[0], "HTTP 500 Internal Server Error") || !strings.Contains(got[1], "delivered again, after 2 failed posts") {
		t.Fatalf("said %q, want the first failure and the recovery", got)
	}
	if strings.Contains(got[0], "s3cr3t-token") || !strings.Contains(got[0], safetext.Redacted) {
		t.Errorf("the failure shows the echoed secret: %q", got[0])
	}
	if st := s.Stats(); st.Posts != 3 || st.Failures != 2 || st.Alerts != 1 || st.LastError != "" {
		t.Errorf("stats %+v", st)
	}
}

func TestAlertmanagerNeverBlocksTheCaller(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	var said notices
	s := runSender(t, AlertmanagerConfig{URL: hung.URL, MaxPending: 3, Timeout: 300 * time.Millisecond, Say: said.say})
	tr := NewTracker(time.Second)
	start := time.Now()
	// The first post hangs; while it does, 10 reports come, each changing
	// the state of replicas a to e: the queue keeps the newest 3 alerts.
	states := []string{"full", "down"}
	var prev *analysis.Report
	for i := range 10 {
		var reps []string
		for _, r := range []string{"a", "b", "c", "d", "e"} {
			reps = append(reps, r+"="+states[i%2])
		}
		prev = followed(prev, report(time.Duration(i)*time.Second, reps...))
		s.Enqueue(tr.Update(prev))
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("10 enqueues took %s with the Alertmanager hanging, want no wait", took)
	}
	// 95 alerts: 5 fired, then 5 resolved and 5 fired per report. The
	// hung post took what the queue held when it woke (at most 5: the
	// first report's); the queue keeps 3.
	st := s.Stats()
	if lost := st.Dropped + st.Replaced; lost < 95-5-3 || lost > 95-3 {
		t.Errorf("stats %+v, want every alert but the 3 kept (and the 5 of the first post) dropped or replaced", st)
	}
	eventually(t, "the drops said once the hung post timed out", func() bool {
		for _, s := range said.all() {
			if strings.Contains(s, "alerts dropped so far, the oldest of more than 3 waiting") {
				return true
			}
		}
		return false
	})
}
