package scrape

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/safetext"
	"github.com/vtop-dev/vtop/testutil"
)

// nginxHTTPToHTTPS is the page nginx answers a plain HTTP request on its
// TLS port with.
const nginxHTTPToHTTPS = "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n" +
	"<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n" +
	"<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// problemCase is a target that fails in a way the on-call engineer must
// recognise from one line.
type problemCase struct {
	name string
	// setup starts what listens (or not) and returns the target's URL and
	// the client options.
	setup func(t *testing.T) (url string, opts ClientOptions)
	// dial, when set, replaces the client's dialer: for failures that
	// loopback cannot produce (no route, no network).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// want is the exact problem; HOST stands for the target's host:port.
	want string
}

func problemCases() []problemCase {
	dialFails := func(errno syscall.Errno) func(context.Context, string, string) (net.Conn, error) {
		return func(context.Context, string, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
		}
	}
	now := time.Now()
	return []problemCase{
		{
			name: "connection refused",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "http://" + testutil.ClosedPort(t) + "/metrics", ClientOptions{}
			},
			want: "connection refused",
		},
		{
			name: "connection reset after the request",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "http://" + startRawServer(t, func(c *net.TCPConn) {
					readRequest(c)
					_ = c.SetLinger(0) // close with a RST, not a FIN
					c.Close()
				}) + "/metrics", ClientOptions{}
			},
			want: "connection reset by the server",
		},
		{
			name: "closed without an answer, as a TLS-only port does",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "http://" + startRawServer(t, func(c *net.TCPConn) {
					readRequest(c)
					c.Close()
				}) + "/metrics", ClientOptions{}
			},
			want: "connection closed by the server without an answer (if it serves HTTPS: use https://HOST)",
		},
		{
			name:  "no route to host",
			setup: func(t *testing.T) (string, ClientOptions) { return "http://10.0.0.7:8000/metrics", ClientOptions{} },
			dial:  dialFails(syscall.EHOSTUNREACH),
			want:  "no route to host (host down, or a firewall rejects the connection)",
		},
		{
			name:  "network unreachable",
			setup: func(t *testing.T) (string, ClientOptions) { return "http://10.0.0.7:8000/metrics", ClientOptions{} },
			dial:  dialFails(syscall.ENETUNREACH),
			want:  "network unreachable (no route from this machine: VPN down, or wrong address)",
		},
		{
			name: "plain HTTP sent to a TLS port",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "http://" + startTLSServer(t).Listener.Addr().String() + "/metrics", ClientOptions{}
			},
			want: "server speaks HTTPS: use https://HOST",
		},
		{
			name: "plain HTTP sent to nginx's TLS port",
			setup: func(t *testing.T) (string, ClientOptions) {
				return testutil.StartServer(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = io.WriteString(w, nginxHTTPToHTTPS)
				}), ClientOptions{}
			},
			want: "server speaks HTTPS: use https://HOST",
		},
		{
			name: "TLS sent to a plain HTTP port",
			setup: func(t *testing.T) (string, ClientOptions) {
				return strings.Replace(testutil.StartServer(t, testutil.ServePage(testutil.HealthyPage, "text/plain")), "http://", "https://", 1), ClientOptions{}
			},
			want: "server speaks plain HTTP, not HTTPS: use http://HOST",
		},
		{
			name: "TLS sent to a port that speaks neither",
			setup: func(t *testing.T) (string, ClientOptions) {
				return "https://" + startRawServer(t, func(c *net.TCPConn) {
					_, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n")
					_, _ = io.Copy(io.Discard, c) // until the client gives up
					c.Close()
				}) + "/metrics", ClientOptions{}
			},
			want: "TLS: the server does not speak TLS (is this an HTTPS port?)",
		},
		{
			name: "certificate signed by an unknown authority",
			setup: func(t *testing.T) (string, ClientOptions) {
				return startTLSServer(t).URL + "/metrics", ClientOptions{}
			},
			want: "TLS: certificate signed by unknown authority (trust its CA with --ca-file)",
		},
		{
			name: "certificate for another host",
			setup: func(t *testing.T) (string, ClientOptions) {
				cert, caFile := selfSigned(t, "gpu-b.internal", now.Add(-time.Hour), now.Add(time.Hour))
				return startTLSServerWith(t, cert).URL + "/metrics", ClientOptions{CAFile: caFile}
			},
			want: "TLS: certificate is for gpu-b.internal, not 127.0.0.1 (connect by a name it holds)",
		},
		{
			name: "certificate expired",
			setup: func(t *testing.T) (string, ClientOptions) {
				cert, caFile := selfSigned(t, "127.0.0.1", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))
				return startTLSServerWith(t, cert).URL + "/metrics", ClientOptions{CAFile: caFile}
			},
			want: "TLS: certificate expired or not yet valid (valid from 2020-01-01 to 2021-01-01)",
		},
	}
}

// Each failure reads as the problem and its fix, names the target, and is
// safe to draw. The servers are real, on loopback, except where no
// loopback server can fail that way (no route, no network): there the
// dialer fails as the kernel would.
func TestFetchProblemsForTheOperator(t *testing.T) {
	for _, tc := range problemCases() {
		t.Run(tc.name, func(t *testing.T) {
			rawURL, opts := tc.setup(t)
			target, err := ParseTarget(rawURL)
			if err != nil {
				t.Fatal(err)
			}
			client, err := NewClient(opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.dial != nil {
				client.http.Transport.(*http.Transport).DialContext = tc.dial
			}
			_, _, err = client.Fetch(context.Background(), target, 5*time.Second, nil)
			u, _ := url.Parse(target.URL)
			want := strings.ReplaceAll(tc.want, "HOST", u.Host)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if se.Problem != want {
				t.Errorf("problem %q\nwant    %q", se.Problem, want)
			}
			if err.Error() != target.Name+": "+want {
				t.Errorf("error %q does not name the target %q", err, target.Name)
			}
			if !safetext.IsSafe(err.Error()) {
				t.Errorf("error is not safe to draw: %q", err)
			}
		})
	}
}

// startRawServer accepts connections on loopback and hands each to serve,
// one at a time, for failures an HTTP server does not make. It returns
// the listening host:port.
func startRawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			serve(c.(*net.TCPConn))
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// readRequest reads one HTTP request from c, so that what the server does
// next happens while the client waits for the answer.
func readRequest(c net.Conn) { _, _ = http.ReadRequest(bufio.NewReader(c)) }

// selfSigned makes a certificate for one host name or IP, valid from
// notBefore to notAfter, and the PEM file that makes a client trust it.
func selfSigned(t *testing.T, host string, notBefore, notAfter time.Time) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := testutil.WriteFile(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile
}

// startTLSServerWith serves the healthy page over TLS with cert until the
// test ends.
func startTLSServerWith(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(testutil.ServePage(testutil.HealthyPage, "text/plain"))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
