package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
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
	"github.com/vtop-dev/vtop/sim"
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

// A server that echoes the credentials, in its error or in its page's
// labels: the report, the screen's text and the recording say
// [redacted]; the server is DOWN (or the Prometheus failing) for the
// reason it gave, or read with its model named [redacted]. A token
// longer than what is read of an error body (a service-account token's
// 1,009 bytes against 512) is hidden where the read cuts it. Each row
// states its outcome and its peak RSS, within --max-memory's 256 MiB.
func TestHostileSecretsEchoed(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		http.Error(w, "forbidden: token "+r.Header.Get("Authorization")+" "+pw+" tenant "+r.Header.Get("X-Scope-OrgID"), http.StatusForbidden)
	}
	server := testutil.StartServer(t, echo)
	failing := strings.TrimSuffix(testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream refused "+r.Header.Get("Authorization")+" for "+r.Header.Get("X-Scope-OrgID"), http.StatusServiceUnavailable)
	}), "/metrics")
	labelled := testutil.StartServer(t, echoInLabels(testutil.VLLMPage(t, 1)))
	long := filepath.Join(t.TempDir(), "long-token")
	if err := os.WriteFile(long, []byte(hostileLongToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
		{"scrape: 403 echoing a 1,009-byte token, cut by the 512 bytes read", []string{"--once", "--json", "--window", "2s", server, "--bearer-token-file", long},
			command.ExitDown, `"error": "HTTP 403 Forbidden: forbidden: token Bearer ` + safetext.Redacted + `"`},
		// The page never moves: STALE, exit 1.
		{"scrape: the token as the page's model_name and engine", slices.Concat([]string{"--once", "--json", "--window", "2s", labelled}, credentialFlags(t, "token")),
			command.ExitDegraded, `"model": "` + safetext.Redacted + `"`},
		{"--prometheus: 503 echoing the token", slices.Concat([]string{"--once", "--json", "--prometheus", failing}, credentialFlags(t, "token")),
			command.ExitNoData, `"problem": "HTTP 503 Service Unavailable: upstream refused Bearer ` + safetext.Redacted},
		{"--prometheus: 503 echoing the tenant", slices.Concat([]string{"--once", "--json", "--prometheus", failing}, credentialFlags(t, "header")),
			command.ExitNoData, "for " + safetext.Redacted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code, peakMiB := runVtopPeak(t, tt.args...)
			t.Logf("exit %d, peak RSS %.0f MiB", code, peakMiB)
			if code != tt.wantCode || !strings.Contains(stdout, tt.want) {
				t.Errorf("exit %d, want %d; stdout lacks %q:\n%s%s", code, tt.wantCode, tt.want, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "SECRET") {
				t.Errorf("a credential reached the output:\n%s%s", stdout, stderr)
			}
			if peakMiB > 256 {
				t.Errorf("peak RSS %.0f MiB, over --max-memory's 256 MiB", peakMiB)
			}
		})
	}

	recorded := []struct {
		name, server, want string
	}{
		{"a target echoing the token in its error", server, safetext.Redacted},
		{"a target echoing the token in its labels", labelled, `model_name="` + safetext.Redacted + `"`},
	}
	for _, tt := range recorded {
		t.Run("recording of "+tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "echo.vtrec")
			args := slices.Concat([]string{"record", "-o", path, "--duration", "2s", "--interval", "500ms", tt.server}, credentialFlags(t, "token"))
			if _, stderr, code, peakMiB := runVtopPeak(t, args...); code != 0 || peakMiB > 256 {
				t.Fatalf("record: exit %d, peak RSS %.0f MiB: %s", code, peakMiB, stderr)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			replayed, stderr, _ := testutil.RunVtop(t, "replay", path, "--once", "--json")
			exported, stderr2, _ := testutil.RunVtop(t, "export", path)
			all := string(raw) + replayed + stderr + exported + stderr2
			if strings.Contains(all, "SECRET") || !strings.Contains(replayed+exported, tt.want) {
				t.Errorf("the recording, its replay or its export holds the token, or lacks %q:\n%s%s\n%s%s", tt.want, replayed, stderr, exported, stderr2)
			}
		})
	}
}

// hostileLongToken is the size of a Kubernetes service-account token,
// 1,009 bytes: longer than the 512 bytes of an error body vtop reads.
var hostileLongToken = "SECRET-" + strings.Repeat("q", 1002)

// echoInLabels serves page, a vLLM page, with its model_name and engine
// labels set to the bearer token it was sent.
func echoInLabels(page []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		echoed := strings.ReplaceAll(string(page), `model_name="`+testutil.Model+`"`, `model_name="`+token+`"`)
		echoed = strings.ReplaceAll(echoed, `engine="0"`, `engine="`+token+`"`)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(echoed))
	}
}

// runVtopPeak runs the binary with args to its end: its output, its exit
// code and its peak RSS in MiB.
func runVtopPeak(t *testing.T, args ...string) (stdout, stderr string, code int, peakMiB float64) {
	t.Helper()
	cmd := testutil.VtopCommand(t, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peakMiB = peakRSSMiB(cmd.Process.Pid)
	code = testutil.ExitStatus(t, cmd.Wait(), cmd.Args)
	return out.String(), errOut.String(), code, peakMiB
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

// A store whose labels hold the bearer token vtop sends it (a real
// Prometheus that labels one replica's instance "<token>:1" and every
// model_name "<token>") passes the token to no output, while that
// replica goes down: --jsonl names the replica "[redacted]:1" and its
// model "[redacted]", and so do the alert the Alertmanager (another host)
// holds, in its replica label and its annotations, and the hook's input.
func TestHostileSecretsInStoreLabels(t *testing.T) {
	t.Parallel()
	am := StartAlertmanager(t)
	fleet, urls := healthyFleet(t)
	var hosts []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, u.Host)
	}
	prom := testutil.StartPrometheusJobs(t, 500*time.Millisecond, hosts, fmt.Sprintf(`  - job_name: vllm
    static_configs:
      - targets: [%q]
        labels: {instance: %q}
      - targets: [%q]
    metric_relabel_configs:
      - source_labels: [model_name]
        regex: (.+)
        target_label: model_name
        replacement: %q
`, hosts[0], hostileToken+":1", hosts[1], hostileToken))
	prom.WaitForWindow(3 * time.Second)
	dir := t.TempDir()
	stdout, stderr := startVtop(t, append([]string{"--prometheus", prom.URL(), "--jsonl", "--interval", "500ms", "--window", "10s", "--no-gpus",
		"--alertmanager", am.URL(), "--alertmanager-resend", "2s", "--on-change-per-minute", "100",
		"--on-change", `cat > "$(mktemp "` + dir + `/change-XXXXXX")"`}, credentialFlags(t, "token")...)...)
	testutil.WaitFor(t, 30*time.Second, "vtop's first report", func() bool { return strings.Contains(stdout.String(), "\n") })
	if err := fleet.Replicas()[0].SetFault(sim.FaultDown); err != nil {
		t.Fatal(err)
	}
	replica := safetext.Redacted + ":1"
	var fired HeldAlert
	testutil.WaitFor(t, 60*time.Second, "VtopDown for "+replica+" held by the Alertmanager", func() bool {
		for _, a := range am.Alerts() {
			if a.Labels["alertname"] == "VtopDown" {
				fired = a
				return true
			}
		}
		return false
	})
	held, err := json.Marshal(am.Alerts())
	if err != nil {
		t.Fatal(err)
	}
	if fired.Labels["replica"] != replica || !strings.HasPrefix(fired.Annotations["summary"], replica+" DOWN: ") || strings.Contains(string(held), "SECRET") {
		t.Errorf("the Alertmanager holds %s: want VtopDown for %s, the token nowhere", held, replica)
	}
	var hooked strings.Builder
	testutil.WaitFor(t, 10*time.Second, "the hook told the change into DOWN", func() bool {
		hooked.Reset()
		runs, _ := filepath.Glob(filepath.Join(dir, "change-*"))
		for _, path := range runs {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			hooked.Write(b)
			hooked.WriteByte('\n')
		}
		return strings.Contains(hooked.String(), `"replica":"`+replica+`","from":"`) && strings.Contains(hooked.String(), `"state":"down"`)
	})
	if strings.Contains(hooked.String(), "SECRET") {
		t.Errorf("the hook got the token:\n%s", hooked.String())
	}
	out := stdout.String()
	if strings.Contains(out+stderr.String(), "SECRET") || !strings.Contains(out, `"target":"`+replica+`"`) || !strings.Contains(out, `"model":"`+safetext.Redacted+`"`) {
		t.Errorf("--jsonl holds the token, or lacks the replica %s and its model %s:\n%.3000s\n%s", replica, safetext.Redacted, out, stderr.String())
	}

	// The same stretch recorded from the store: its pages and its
	// targets are kept with the token redacted.
	path := filepath.Join(t.TempDir(), "past.vtrec")
	now := time.Now().Add(-2 * time.Second) // what the store holds by now
	record := slices.Concat([]string{"record", "-o", path, "--prometheus", prom.URL(), "--window", "10s", "--interval", "2s",
		"--from", now.Add(-10 * time.Second).Format(time.RFC3339Nano), "--to", now.Format(time.RFC3339Nano)}, credentialFlags(t, "token"))
	if _, said, code, peakMiB := runVtopPeak(t, record...); code != 0 || peakMiB > 256 {
		t.Fatalf("record --prometheus: exit %d, peak RSS %.0f MiB: %s", code, peakMiB, said)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	exported, said, _ := testutil.RunVtop(t, "export", path)
	replayed, said2, _ := testutil.RunVtop(t, "replay", path, "--once", "--json")
	if strings.Contains(string(raw)+exported+said+replayed+said2, "SECRET") || !strings.Contains(exported, `model_name="`+safetext.Redacted+`"`) {
		t.Errorf("the recording of the store, its export or its replay holds the token, or no model_name %s:\n%.2000s%s\n%.2000s%s", safetext.Redacted, exported, said, replayed, said2)
	}
}
