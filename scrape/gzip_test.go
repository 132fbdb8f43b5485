package scrape

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write(b)
	_ = z.Close()
	return buf.Bytes()
}

// serveBytes answers every request with body and these headers, whatever
// the request asked for (vtop asks loopback servers for identity).
func serveBytes(body []byte, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		_, _ = w.Write(body)
	}
}

// TestGzippedPage: a server on loopback that compresses although asked not
// to is read (decompressed within MaxBody); a compressed body that cannot
// be read says it is compressed, never "page cut mid-line".
func TestGzippedPage(t *testing.T) {
	page := testutil.VLLMPage(t, 1)
	zipped := gzipped(page)
	bomb := gzipped(bytes.Repeat([]byte("# filler comment line\n"), 1<<16))
	tests := []struct {
		name    string
		h       http.HandlerFunc
		wantErr string // "" for a good scrape
	}{
		{"gzip with Content-Encoding", serveBytes(zipped, "Content-Type", "text/plain", "Content-Encoding", "gzip"), ""},
		{"gzip without Content-Encoding", serveBytes(zipped, "Content-Type", "text/plain"), ""},
		{"gzip cut short", serveBytes(zipped[:len(zipped)/2], "Content-Type", "text/plain", "Content-Encoding", "gzip"),
			"gzip-compressed page does not decompress: unexpected EOF"},
		{"gzip bomb", serveBytes(bomb, "Content-Type", "text/plain", "Content-Encoding", "gzip"),
			"gzip-compressed page larger than 1 MiB once decompressed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := ParseTarget(testutil.StartServer(t, tt.h))
			if err != nil {
				t.Fatal(err)
			}
			p := scrapeOnce(t, []Target{target}, Options{Interval: time.Minute, Timeout: hardeningTimeout, Client: ClientOptions{MaxBody: 1 << 20}})
			got := latest(t, p, 0)
			switch {
			case tt.wantErr == "" && !got.OK():
				t.Errorf("err %q, want a good scrape", got.Err)
			case tt.wantErr != "" && !strings.Contains(got.Err, tt.wantErr):
				t.Errorf("err %q, want %q", got.Err, tt.wantErr)
			}
		})
	}
}
