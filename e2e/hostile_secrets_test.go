package e2e

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/command"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

// The credentials of the hostile cases: each holds "SECRET", which no
// output, recording or other host may ever see.
const (
	hostileToken    = "tok-3f9a-SECRET"
	hostilePassword = "pw-77c1-SECRET"
	hostileTenant   = "tenant-SECRET"
)

// seenHeaders keeps what a server was sent: each request's headers.
type seenHeaders struct {
	mu   sync.Mutex
	seen []http.Header
}

// add keeps the headers of r.
func (s *seenHeaders) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, r.Header.Clone())
}

// secret returns the first header that carried a credential, if any.
func (s *seenHeaders) secret() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.seen {
		for k, v := range h {
			if joined := strings.Join(v, ","); k == "Authorization" || strings.Contains(joined, "SECRET") {
				return k + ": " + joined, true
			}
		}
	}
	return "", false
}

// count is how many requests the server got.
func (s *seenHeaders) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// credentialFlags are vtop's flags for one kind of credential.
func credentialFlags(t *testing.T, kind string) []string {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	switch kind {
	case "token":
		return []string{"--bearer-token-file", write("token", hostileToken+"\n")}
	case "basic":
		return []string{"--basic-auth-file", write("auth", "alice:"+hostilePassword+"\n")}
	}
	return []string{"--header", "X-Scope-OrgID: " + hostileTenant}
}

// A server that redirects vtop to another host: the other host is asked,
// without the credentials or the --header values (which the configured
// host did get), for each kind of credential, through a Prometheus and
// scraping directly.
func TestHostileSecretsRedirectToAnotherHost(t *testing.T) {
	prom := testutil.StartPrometheus(t, time.Second, nil)
	promURL, err := url.Parse(prom.URL())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kind string
		prometheus bool
	}{
		{"--prometheus, bearer token file", "token", true},
		{"--prometheus, basic auth file", "basic", true},
		{"--prometheus, --header", "header", true},
		{"scrape, bearer token file", "token", false},
		{"scrape, --header", "header", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var atOrigin, atOther seenHeaders
			other := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
				atOther.add(r)
				if tt.prometheus {
					httputil.NewSingleHostReverseProxy(promURL).ServeHTTP(w, r)
					return
				}
				testutil.ServePage(testutil.HealthyPage, "text/plain")(w, r)
			})
			origin := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
				atOrigin.add(r)
				http.Redirect(w, r, strings.TrimSuffix(other, "/metrics")+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			})
			args := append([]string{"--once", "--json"}, credentialFlags(t, tt.kind)...)
			if tt.prometheus {
				args = append(args, "--prometheus", strings.TrimSuffix(origin, "/metrics"))
			} else {
				args = append(args, "--window", "2s", origin)
			}
			stdout, stderr, code := testutil.RunVtop(t, args...)
			if code == command.ExitUsage || code >= command.ExitData {
				t.Fatalf("exit %d, stderr %s", code, stderr)
			}
			if _, ok := atOrigin.secret(); !ok {
				t.Errorf("the configured host got no credential")
			}
			if h, ok := atOther.secret(); ok || atOther.count() == 0 {
				t.Errorf("the other host got %d requests, and %q: want requests without credentials", atOther.count(), h)
			}
			if strings.Contains(stdout+stderr, "SECRET") {
				t.Errorf("a credential reached the output:\n%s%s", stdout, stderr)
			}
		})
	}
}

// A server that echoes the credentials in its error: the report, the
// screen's text and the recording say [redacted]; the server is DOWN (or
// the Prometheus failing) for the reason it gave.
func TestHostileSecretsEchoed(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		http.Error(w, "forbidden: token "+r.Header.Get("Authorization")+" "+pw+" tenant "+r.Header.Get("X-Scope-OrgID"), http.StatusForbidden)
	}
	server := testutil.StartServer(t, echo)
	failing := strings.TrimSuffix(testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream refused "+r.Header.Get("Authorization")+" for "+r.Header.Get("X-Scope-OrgID"), http.StatusServiceUnavailable)
	}), "/metrics")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // in stdout, beside [redacted]
	}{
		{"scrape: 403 echoing the token, --once --json", slices.Concat([]string{"--once", "--json", "--window", "2s", server}, credentialFlags(t, "token")),
			command.ExitDown, `"error": "HTTP 403 Forbidden: forbidden: token Bearer ` + safetext.Redacted},
		{"scrape: 403 echoing the tenant, --once", slices.Concat([]string{"--once", "--window", "2s", server}, credentialFlags(t, "header")),
			command.ExitDown, "tenant " + safetext.Redacted},
		{"--prometheus: 503 echoing the token", slices.Concat([]string{"--once", "--json", "--prometheus", failing}, credentialFlags(t, "token")),
			command.ExitNoData, `"problem": "HTTP 503 Service Unavailable: upstream refused Bearer ` + safetext.Redacted},
		{"--prometheus: 503 echoing the tenant", slices.Concat([]string{"--once", "--json", "--prometheus", failing}, credentialFlags(t, "header")),
			command.ExitNoData, "for " + safetext.Redacted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := testutil.RunVtop(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, want %d; stdout lacks %q:\n%s%s", code, tt.wantCode, tt.want, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "SECRET") {
				t.Errorf("a credential reached the output:\n%s%s", stdout, stderr)
			}
		})
	}

	t.Run("recording of a target echoing the token", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "echo.vtrec")
		args := slices.Concat([]string{"record", "-o", path, "--duration", "2s", "--interval", "500ms", server}, credentialFlags(t, "token"))
		if _, stderr, code := testutil.RunVtop(t, args...); code != 0 {
			t.Fatalf("record: exit %d: %s", code, stderr)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		replayed, stderr, _ := testutil.RunVtop(t, "replay", path, "--once", "--json")
		if strings.Contains(string(raw)+replayed+stderr, "SECRET") || !strings.Contains(replayed, safetext.Redacted) {
			t.Errorf("the recording or its replay holds the token, or says nothing of it:\n%s%s", replayed, stderr)
		}
	})
}

// A Prometheus that fails is named once in each problem: its GPU source
// is named after it, and the note does not name it again.
func TestHostileSecretsPrometheusNamedOnce(t *testing.T) {
	down := "http://" + testutil.ClosedPort(t)
	stdout, stderr, _ := testutil.RunVtop(t, "--once", "--json", "--prometheus", down)
	if !strings.Contains(stdout, `"note": "DCGM series: connection refused"`) || strings.Contains(stdout, down+": Prometheus") ||
		strings.Contains(stdout, ": Prometheus "+down) {
		t.Errorf("want the server named once in each problem:\n%s%s", stdout, stderr)
	}
}

// Flags and targets mix on the command line as in other tools: a flag
// between targets (`vtop t1 --ca-file X t2`) leaves both targets watched.
func TestHostileSecretsFlagsBetweenTargets(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	tlsServer.Close()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsServer.Certificate().Raw})
	if err := os.WriteFile(ca, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	t1, t2 := testutil.ClosedPort(t), testutil.ClosedPort(t)
	tests := []struct {
		name string
		args []string
	}{
		{"--ca-file between", []string{"--once", "--json", "--window", "2s", t1, "--ca-file", ca, t2}},
		{"boolean and valued flags after", []string{t1, "--once", t2, "--json", "--window=2s"}},
	}
	for _, tt := range tests {
		stdout, stderr, code := testutil.RunVtop(t, tt.args...)
		if code != command.ExitDown || !strings.Contains(stdout, `"target": "`+t1) || !strings.Contains(stdout, `"target": "`+t2) {
			t.Errorf("%s: exit %d (want %d, both targets down):\n%s%s", tt.name, code, command.ExitDown, stdout, stderr)
		}
	}
}
