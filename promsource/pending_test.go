package promsource

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A server that takes its time over the first refresh: while it has not
// answered, the status says so, and the times reports are evaluated at
// never go back, before, during or after the answer.
func TestSlowFirstAnswer(t *testing.T) {
	const delay = 1500 * time.Millisecond
	fake := &fakeProm{count: 2}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	s := testSource(t, Config{URL: srv.URL, Timeout: 5 * time.Second, Interval: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx) }()
	var last time.Time
	waiting := ""
	// The first refresh asks up ahead of the rest (countTargets): two
	// answers in a row.
	for end := time.Now().Add(2*delay + time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		_, at := s.ReadingsAt(nil)
		if at.Before(last) && !t.Failed() {
			t.Errorf("evaluation time %s after %s: reports out of time order", at.Format(time.StampMilli), last.Format(time.StampMilli))
		}
		if at.After(last) {
			last = at
		}
		if st := s.Status(); st.LastGood.IsZero() && waiting == "" {
			waiting = st.Problem
		}
	}
	if st := s.Status(); !st.OK() || st.LastGood.IsZero() {
		t.Fatalf("status %+v: want the answer in", st)
	}
	if !strings.Contains(waiting, "no answer yet") {
		t.Errorf("status while waiting %q, want it to say there is no answer yet", waiting)
	}
}
