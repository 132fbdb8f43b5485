package scrape

import (
	"context"
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
// HTTP (gzip negotiated by the transport), round-trips through Fetch and
// Ingest, engines kept apart and aggregated.
func TestClientGolangRoundTrip(t *testing.T) {
	for _, engines := range []int{1, 2} {
		t.Run(strconv.Itoa(engines)+" engines", func(t *testing.T) {
			var accept, encoding string
			handler := promhttp.HandlerFor(testutil.VLLMRegistry(t, engines), promhttp.HandlerOpts{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				accept, encoding = r.Header.Get("Accept"), r.Header.Get("Accept-Encoding")
				handler.ServeHTTP(w, r)
			}))
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
			if accept != acceptHeader || encoding != "gzip" {
				t.Errorf("request headers Accept=%q Accept-Encoding=%q", accept, encoding)
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
		})
	}
}
