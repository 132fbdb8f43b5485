package scrape

import (
	"cmp"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

const testToken = "s3cret-token"

// hardeningCase is one broken (or specially configured) target.
type hardeningCase struct {
	name string
	// setup starts the target's server and returns its URL and the
	// client options to use.
	setup func(t *testing.T) (url string, opts ClientOptions)
	// wantErr is a substring of Sample.Err; "" means the scrape succeeds
	// and must read running = 5.
	wantErr string
	// after runs extra checks once the scrape is done.
	after func(t *testing.T)
	// timeout is the scrape's timeout when the case is about timing out;
	// the others get hardeningTimeout, so a loaded machine (or the race
	// detector) cannot turn their error into a timeout.
	timeout time.Duration
}

// hardeningTimeout is the scrape timeout of the cases that must not time
// out.
const hardeningTimeout = 10 * time.Second

func hardeningCases() []hardeningCase {
	var authMu sync.Mutex
	var foreignAuth, foreignExtra string
	return []hardeningCase{
		{
			name: "connection refused",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "http://" + testutil.ClosedPort(t) + "/metrics", ClientOptions{}
			},
			wantErr: "connection refused",
		},
		{
			name: "HTTP 500 with the reason in the body",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "engine core died\x1b[31m", http.StatusInternalServerError)
				}), ClientOptions{}
			},
			wantErr: "HTTP 500 Internal Server Error: engine core died",
		},
		{
			name: "HTTP 404",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, http.NotFound), ClientOptions{}
			},
			wantErr: "HTTP 404 Not Found",
		},
		{
			name: "redirect loop",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, r.URL.Path, http.StatusFound)
				}), ClientOptions{}
			},
			wantErr: "redirect loop (more than 5 redirects)",
		},
		{
			name: "HTML error page",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, testutil.ServePage("<html><body>Bad gateway</body></html>", "text/html")), ClientOptions{}
			},
			wantErr: "HTML page, not Prometheus metrics",
		},
		{
			name: "empty body",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, testutil.ServePage("", "text/plain")), ClientOptions{}
			},
			wantErr: "empty body",
		},
		{
			name: "not Prometheus: the OpenAI API's JSON",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, testutil.ServePage(`{"object":"list","data":[]}`, "application/json")), ClientOptions{}
			},
			wantErr: "JSON, not Prometheus metrics",
		},
		{
			name: "body cut off mid-line",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, testutil.ServePage("vllm:num_requests_running 1\nvllm:num_requests_waiting{model_na", "text/plain")), ClientOptions{}
			},
			wantErr: "page cut mid-line at byte 62",
		},
		{
			name: "endless body: reading stops at MaxBody",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					line := []byte("# filler comment line\n")
					for r.Context().Err() == nil {
						if _, err := w.Write(line); err != nil {
							return
						}
					}
				}), ClientOptions{MaxBody: 64 << 10}
			},
			wantErr: "body larger than 64 KiB",
		},
		{
			name: "one byte per second times out",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					for _, c := range []byte(testutil.HealthyPage) {
						_, _ = w.Write([]byte{c})
						w.(http.Flusher).Flush()
						select {
						case <-r.Context().Done():
							return
						case <-time.After(time.Second):
						}
					}
				}), ClientOptions{}
			},
			wantErr: "no answer within 400ms",
			timeout: 400 * time.Millisecond,
		},
		{
			name: "never answers: times out",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					<-r.Context().Done()
				}), ClientOptions{}
			},
			wantErr: "no answer within 400ms",
			timeout: 400 * time.Millisecond,
		},
		{
			name: "self-signed TLS refused by default",
			setup: func(t *testing.T) (string, ClientOptions) {
				return startTLSServer(t).URL + "/metrics", ClientOptions{}
			},
			wantErr: "TLS: certificate signed by unknown authority",
		},
		{
			name: "self-signed TLS accepted with Insecure",
			setup: func(t *testing.T) (string, ClientOptions) {
				return startTLSServer(t).URL + "/metrics", ClientOptions{Insecure: true}
			},
		},
		{
			name: "self-signed TLS accepted with its CA file",
			setup: func(t *testing.T) (string, ClientOptions) {
				srv := startTLSServer(t)
				ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
				return srv.URL + "/metrics", ClientOptions{CAFile: testutil.WriteFile(t, "ca.pem", ca)}
			},
		},
		{
			name: "bearer token sent",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, requireToken(testToken)),
					ClientOptions{BearerTokenFile: testutil.WriteFile(t, "token", []byte(testToken+"\n"))}
			},
		},
		{
			name: "wrong bearer token: 401, token not in the error",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, requireToken("other")),
					ClientOptions{BearerTokenFile: testutil.WriteFile(t, "token", []byte(testToken))}
			},
			wantErr: "HTTP 401 Unauthorized",
		},
		{
			name: "Authorization and extra headers not forwarded to another host on redirect",
			setup: func(t *testing.T) (string, ClientOptions) {
				foreign := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					authMu.Lock()
					foreignAuth, foreignExtra = r.Header.Get("Authorization"), r.Header.Get("X-Tenant")
					authMu.Unlock()
					testutil.ServePage(testutil.HealthyPage, "text/plain")(w, r)
				})
				origin := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Authorization") != "Bearer "+testToken || r.Header.Get("X-Tenant") != "blue" {
						http.Error(w, "origin did not get the credentials", http.StatusBadRequest)
						return
					}
					http.Redirect(w, r, foreign, http.StatusFound)
				})
				return origin, ClientOptions{
					BearerTokenFile: testutil.WriteFile(t, "token", []byte(testToken)),
					Headers:         []string{"X-Tenant: blue"},
				}
			},
			after: func(t *testing.T) {
				authMu.Lock()
				defer authMu.Unlock()
				if foreignAuth != "" || foreignExtra != "" {
					t.Errorf("other host got Authorization %q and X-Tenant %q", foreignAuth, foreignExtra)
				}
			},
		},
	}
}

// requireToken answers the healthy page only to that bearer token.
func requireToken(token string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "", http.StatusUnauthorized)
			return
		}
		testutil.ServePage(testutil.HealthyPage, "text/plain")(w, r)
	}
}

// startTLSServer serves the healthy page over TLS with httptest's
// self-signed certificate until the test ends.
func startTLSServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(testutil.ServePage(testutil.HealthyPage, "text/plain"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// Every broken target fails with its own clear error, while a healthy
// target polled beside it by the same poller keeps its figures.
func TestHardening(t *testing.T) {
	healthyURL := testutil.StartServer(t, testutil.ServePage(testutil.HealthyPage, "text/plain; version=0.0.4"))
	healthy, err := ParseTarget(healthyURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range hardeningCases() {
		t.Run(tc.name, func(t *testing.T) {
			url, copts := tc.setup(t)
			target, err := ParseTarget(url)
			if err != nil {
				t.Fatal(err)
			}
			p := scrapeOnce(t, []Target{healthy, target}, Options{
				Interval: time.Minute, Timeout: cmp.Or(tc.timeout, hardeningTimeout), Client: copts,
			})

			good := latest(t, p, 0)
			if !good.OK() || good.Total.Scalars[catalogue.Running] != 5 {
				t.Errorf("healthy neighbour: err %q running %v", good.Err, good.Total.Scalars[catalogue.Running])
			}
			bad := latest(t, p, 1)
			t.Logf("error: %q", bad.Err)
			if strings.Contains(bad.Err, testToken) {
				t.Errorf("error leaks the token: %q", bad.Err)
			}
			if !safetext.IsSafe(bad.Err) {
				t.Errorf("error is not safe to draw: %q", bad.Err)
			}
			switch {
			case tc.wantErr == "":
				if !bad.OK() || bad.Total.Scalars[catalogue.Running] != 5 {
					t.Errorf("err %q running %v, want a good scrape", bad.Err, bad.Total.Scalars[catalogue.Running])
				}
			case !strings.Contains(bad.Err, tc.wantErr):
				t.Errorf("err %q, want %q", bad.Err, tc.wantErr)
			}
			// A late answer is marked as such: it does not prove the
			// target down as the other failures do.
			if wantLate := strings.HasPrefix(tc.wantErr, "no answer within"); bad.TimedOut != wantLate {
				t.Errorf("timed out %v, want %v (err %q)", bad.TimedOut, wantLate, bad.Err)
			}
			checkStates(t, p, tc.wantErr)
			if tc.after != nil {
				tc.after(t)
			}
		})
	}
}

// scrapeOnce scrapes every target once with a real poller and returns it
// stopped, its rings holding that one round.
func scrapeOnce(t *testing.T, targets []Target, opts Options) *Poller {
	t.Helper()
	p, err := NewPoller(targets, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	<-p.Refresh()
	cancel()
	<-done
	return p
}

// latest returns the newest sample the poller kept of its i-th target.
func latest(t *testing.T, p *Poller, i int) catalogue.Sample {
	t.Helper()
	samples := p.Readings(nil)[i].Samples
	if len(samples) == 0 {
		t.Fatalf("no sample of target %d", i)
	}
	return samples[len(samples)-1]
}

// checkStates runs the analysis over what the poller kept: the failing
// target is DOWN with its error, the healthy neighbour is not.
func checkStates(t *testing.T, p *Poller, wantErr string) {
	t.Helper()
	inputs := p.Readings(nil)
	report := analysis.Analyze(newest(inputs), inputs, analysis.DefaultConfig(), nil)
	healthy, bad := report.Replicas[0], report.Replicas[1]
	if healthy.State == analysis.StateDown {
		t.Errorf("healthy neighbour is down: %q", healthy.Reasons)
	}
	if wantErr == "" {
		return
	}
	want := analysis.StateDown
	if strings.HasPrefix(wantErr, "no answer within") {
		// One late answer, and no earlier verdict to keep: not proven
		// down until the timeouts repeat.
		want = analysis.StateWarming
	}
	if bad.State != want || !strings.Contains(bad.Error, wantErr) {
		t.Errorf("failing target: state %v, error %q; want %v with %q", bad.State, bad.Error, want, wantErr)
	}
}

// newest is the time of the newest sample of any target: the evaluation
// time that sees every scrape.
func newest(inputs []catalogue.Readings) time.Time {
	var t time.Time
	for _, in := range inputs {
		for _, s := range in.Samples {
			if s.Time.After(t) {
				t = s.Time
			}
		}
	}
	return t
}

// Fetch's error names the target; its problem is what Sample.Err shows.
// A server that echoes what vtop sent it (the bearer token, a --header
// value) in its error page shows neither: the problem, and so the
// report, the screen and the recording, say [redacted] instead.
//
// A token longer than the 512 bytes of the body read (a Kubernetes
// service-account token is about 1,009 bytes) is cut inside by the read:
// its start, the 490 bytes left of it, is hidden too.
func TestFetchProblemHidesEchoedSecrets(t *testing.T) {
	const tenant = "tenant-7d2e-SECRET"
	longToken := "LONGTOKEN" + strings.Repeat("q", 1000)
	tests := []struct {
		name   string
		token  string
		status int
		body   func(r *http.Request) string
	}{
		{"403 echoing the token", testToken, http.StatusForbidden, func(r *http.Request) string {
			return "forbidden: token " + r.Header.Get("Authorization")
		}},
		{"500 echoing the tenant header", testToken, http.StatusInternalServerError, func(r *http.Request) string {
			return "no such tenant " + r.Header.Get("X-Scope-OrgID")
		}},
		{"403 echoing a 1,009-byte token, cut by the read", longToken, http.StatusForbidden, func(r *http.Request) string {
			return "Authorization=" + r.Header.Get("Authorization")
		}},
	}
	for _, tt := range tests {
		srv := testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, tt.body(r), tt.status)
		})
		target, _ := ParseTarget(srv)
		c, err := NewClient(ClientOptions{
			BearerTokenFile: testutil.WriteFile(t, "token", []byte(tt.token)),
			Headers:         []string{"X-Scope-OrgID: " + tenant},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.Fetch(context.Background(), target, hardeningTimeout, nil)
		if err == nil || strings.Contains(err.Error(), tt.token[:8]) || strings.Contains(err.Error(), tenant) ||
			!strings.Contains(err.Error(), safetext.Redacted) {
			t.Errorf("%s: error %v, want the secret shown as %s", tt.name, err, safetext.Redacted)
		}
	}
}

func TestFetchErrorNamesTarget(t *testing.T) {
	target, _ := ParseTarget(testutil.ClosedPort(t))
	c, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Fetch(context.Background(), target, time.Second, nil)
	var se *Error
	if !errors.As(err, &se) || err.Error() != target.Name+": connection refused" {
		t.Errorf("error %v, want %q", err, target.Name+": connection refused")
	}
}

func TestDescribe(t *testing.T) {
	// The words are httperr's (its tests hold each failure); the scraper
	// adds the redirect loop, and a request whose context ran out is a
	// timeout whatever error the transport gave.
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	tests := []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{context.Background(), fmt.Errorf("get: %w", errRedirectLoop), errRedirectLoop.Error()},
		{expired, io.ErrUnexpectedEOF, "no answer within 800ms"},
		{context.Background(), io.ErrUnexpectedEOF, "connection closed by the server"},
		{context.Background(), &net.DNSError{Name: "gpu-x\x1b[2J", Err: "no such host"}, "DNS lookup failed for gpu-x"},
	}
	for _, tt := range tests {
		if got := describe(tt.ctx, tt.err, 800*time.Millisecond); got != tt.want {
			t.Errorf("describe(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestNewClientRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts ClientOptions
		want string
	}{
		{"malformed header, value not echoed", ClientOptions{Headers: []string{"NoColonHere-secret"}}, `header must be "Key: Value"`},
		{"missing CA file", ClientOptions{CAFile: filepath.Join(t.TempDir(), "nope.pem")}, "CA file"},
		{"CA file without PEM", ClientOptions{CAFile: testutil.WriteFile(t, "ca.pem", []byte("junk"))}, "no PEM certificate"},
		{"empty token file", ClientOptions{BearerTokenFile: testutil.WriteFile(t, "tok", []byte("\n"))}, "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
