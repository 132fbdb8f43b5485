package scrape

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/testutil"
)

// A page made by the real client_golang exposition, served by promhttp over
// HTTP, round-trips through Fetch and Ingest, engines kept apart and
// aggregated: uncompressed from this machine's loopback, gzip negotiated
// by the transport from any other address.
func TestClientGolangRoundTrip(t *testing.T) {
	for _, engines := range []int{1, 2} {
		for _, remote := range []bool{false, true} {
			name := strconv.Itoa(engines) + " engines, loopback"
			wantEncoding := "identity"
			if remote {
				name, wantEncoding = strconv.Itoa(engines)+" engines, remote", "gzip"
			}
			t.Run(name, func(t *testing.T) { roundTrip(t, engines, remote, wantEncoding) })
		}
	}
}

// roundTrip fetches and ingests a client_golang page of engines engines,
// through an address of this machine other than loopback when remote.
func roundTrip(t *testing.T, engines int, remote bool, wantEncoding string) {
	var accept, encoding string
	handler := promhttp.HandlerFor(testutil.VLLMRegistry(t, engines), promhttp.HandlerOpts{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept, encoding = r.Header.Get("Accept"), r.Header.Get("Accept-Encoding")
		handler.ServeHTTP(w, r)
	}))
	if remote {
		ip := nonLoopbackIP(t)
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Skipf("cannot listen on %s: %v", ip, err)
		}
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	defer srv.Close()
	target, err := ParseTarget(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client, err := NewClient(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, ct, err := client.Fetch(context.Background(), target, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != acceptHeader || encoding != wantEncoding {
		t.Errorf("request headers Accept=%q Accept-Encoding=%q, want Accept-Encoding %q", accept, encoding, wantEncoding)
	}
	s, err := page.NewIngester().Ingest(body, ct)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Total.Scalars[catalogue.Running]; got != float64(engines*(engines+19)/2) {
		t.Errorf("running = %v, want the engines' sum %d", got, engines*(engines+19)/2)
	}
	if len(s.Engines) != engines && engines > 1 {
		t.Errorf("%d engines read, want %d", len(s.Engines), engines)
	}
}

// nonLoopbackIP is an address of this machine other than loopback, to
// reach a local server as a remote one; the test is skipped without one.
func nonLoopbackIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("no interface addresses: %v", err)
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
			return ipnet.IP.String()
		}
	}
	t.Skip("this machine has no address but loopback")
	return ""
}
