package promsource

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

// A Prometheus that redirects to another host gets the credentials and
// the configured headers; the other host gets none of them, and the
// query is answered there all the same (as Go's client and Prometheus's
// follow_redirects do). The same rule as a direct scrape's.
func TestCredentialsStayWithTheConfiguredHost(t *testing.T) {
	const token, password, tenant = "tok-3f9a-SECRET", "pw-77c1-SECRET", "tenant-SECRET"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+password))
	tests := []struct {
		name   string
		access func(t *testing.T) Access
		header string // the header that carries the credential
		want   string // its value at the configured host
	}{
		{name: "bearer token file", header: "Authorization", want: "Bearer " + token,
			access: func(t *testing.T) Access {
				return Access{BearerTokenFile: testutil.WriteFile(t, "token", []byte(token+"\n"))}
			}},
		{name: "basic auth file", header: "Authorization", want: basic,
			access: func(t *testing.T) Access {
				return Access{BasicAuthFile: testutil.WriteFile(t, "auth", []byte("alice:"+password+"\n"))}
			}},
		{name: "--header", header: "X-Scope-OrgID", want: tenant,
			access: func(*testing.T) Access { return Access{Headers: []string{"X-Scope-OrgID: " + tenant}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := &fakeProm{count: 2}
			otherSrv := httptest.NewServer(other)
			defer otherSrv.Close()
			var mu sync.Mutex
			var atOrigin []string
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				atOrigin = append(atOrigin, r.Header.Get(tt.header))
				mu.Unlock()
				http.Redirect(w, r, otherSrv.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}))
			defer origin.Close()

			s := testSource(t, Config{URL: origin.URL, Access: tt.access(t)})
			rep := refreshOnce(t, s)
			if st := s.Status(); !st.OK() || len(rep.Replicas) != 1 {
				t.Fatalf("status %+v, %d replicas: want the redirected answer read", st, len(rep.Replicas))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(atOrigin) == 0 || atOrigin[0] != tt.want {
				t.Errorf("configured host got %s %q, want %q", tt.header, atOrigin, tt.want)
			}
			other.mu.Lock()
			defer other.mu.Unlock()
			for k, v := range other.headers {
				joined := strings.Join(v, ",")
				if k == "Authorization" || strings.Contains(joined, "SECRET") {
					t.Errorf("the other host got %s: %q", k, joined)
				}
			}
		})
	}
}

// A Prometheus (or a proxy before it) that echoes the credentials in its
// errors or warnings shows none of them: the status says [redacted].
func TestEchoedSecretsAreRedacted(t *testing.T) {
	const token, password, tenant = "tok-3f9a-SECRET", "pw-77c1-SECRET", "tenant-SECRET"
	access := func(t *testing.T) Access {
		return Access{BearerTokenFile: testutil.WriteFile(t, "token", []byte(token)),
			Headers: []string{"X-Scope-OrgID: " + tenant}}
	}
	tests := []struct {
		name   string
		access func(t *testing.T) Access
		answer func(w http.ResponseWriter, r *http.Request)
	}{
		{"503 echoing the token", access, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "proxy: upstream refused "+r.Header.Get("Authorization"), http.StatusServiceUnavailable)
		}},
		{"query error echoing the tenant", access, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"status":"error","errorType":"execution","error":"tenant %s over its limit"}`, r.Header.Get("X-Scope-OrgID"))
		}},
		{"basic auth echoed base64 and plain", func(t *testing.T) Access {
			return Access{BasicAuthFile: testutil.WriteFile(t, "auth", []byte("alice:"+password))}
		}, func(w http.ResponseWriter, r *http.Request) {
			_, pw, _ := r.BasicAuth()
			http.Error(w, "bad credentials "+r.Header.Get("Authorization")+" ("+pw+")", http.StatusBadGateway)
		}},
		{"password of the URL echoed", nil, func(w http.ResponseWriter, r *http.Request) {
			_, pw, _ := r.BasicAuth()
			http.Error(w, "bad password "+pw, http.StatusBadGateway)
		}},
		{"warning echoing the token", access, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.FormValue("query"), "up") {
				(&fakeProm{count: 2}).ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"status":"success","warnings":["partial answer for %s"],"data":{"resultType":"matrix","result":[]}}`, r.Header.Get("Authorization"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tt.answer))
			defer srv.Close()
			cfg := Config{URL: strings.Replace(srv.URL, "//", "//alice:pw-url-SECRET@", 1)}
			if tt.access != nil {
				cfg = Config{URL: srv.URL, Access: tt.access(t)}
			}
			s := testSource(t, cfg)
			refreshOnce(t, s)
			st := s.Status()
			shown := st.Problem + " | " + strings.Join(st.Warnings, " | ")
			if strings.Contains(shown, "SECRET") || strings.Contains(shown, "cHctNzdjMS1TRUNSRVQ") ||
				!strings.Contains(shown, safetext.Redacted) {
				t.Errorf("status shows %q: want each secret as %s", shown, safetext.Redacted)
			}
		})
	}
}
