package page

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// FuzzIngest feeds arbitrary pages to Ingest: it must never panic, every
// string it returns must be safe for a terminal, and a page it accepts must
// keep the Sample's invariants.
func FuzzIngest(f *testing.F) {
	entries, err := os.ReadDir(realDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(realDir + "/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/plain; version=0.0.4")
		f.Add(cleanReal(e.Name(), b), "text/plain")
	}
	f.Add([]byte(omPage), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte(newestPage), "text/plain; version=0.0.4")
	f.Add([]byte("vllm:num_requests_running{engine=\"\x1b[31m0\",model_name=\"\x9b2J\"} 1\n"), "")

	in := NewIngester() // shared, as a target's is across scrapes
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		s, err := in.Ingest(body, contentType)
		if err != nil {
			if unsafeText(err.Error()) {
				t.Errorf("error not sanitized: %q", err.Error())
			}
			if !saysWhere(err) {
				t.Errorf("error %q names neither the whole page nor a line or byte", err.Error())
			}
			return
		}
		texts := slices.Concat([]string{s.Model}, s.Warnings, s.Backends, s.LoRA.Running, s.LoRA.Waiting)
		if len(s.Backends) > MaxEngines || len(s.Total.SpecAcceptedPerPos) > catalogue.MaxSpecPositions {
			t.Errorf("%d backends, %d draft positions", len(s.Backends), len(s.Total.SpecAcceptedPerPos))
		}
		for _, e := range s.Engines {
			texts = append(texts, e.Name)
		}
		for _, txt := range texts {
			if unsafeText(txt) {
				t.Errorf("string not sanitized: %q", txt)
			}
		}
		if len(s.Engines) == 1 || len(s.Engines) > MaxEngines {
			t.Errorf("%d engines listed", len(s.Engines))
		}
		for h := range catalogue.NumHistograms {
			b := s.Total.Histograms[h]
			if len(b.Bounds) != len(b.Counts) {
				t.Errorf("histogram %d: %d bounds, %d counts", h, len(b.Bounds), len(b.Counts))
			}
			for i := 1; i < len(b.Bounds); i++ {
				if b.Bounds[i] <= b.Bounds[i-1] {
					t.Errorf("histogram %d: bounds not ascending: %v", h, b.Bounds)
					break
				}
			}
		}
	})
}

// wherePattern is how a refusal of part of a page says where it is.
var wherePattern = regexp.MustCompile(`at (line|byte) [0-9]+: |at byte [0-9]+$`)

// saysWhere reports whether err, a refusal, names its problem and where it
// is: a refusal of the whole body (empty, HTML, JSON, protobuf) is one of
// its sentinels, any other names the line or the byte.
func saysWhere(err error) bool {
	for _, whole := range []error{errEmptyBody, errHTML, errJSON, errProtobuf} {
		if errors.Is(err, whole) {
			return true
		}
	}
	return wherePattern.MatchString(err.Error())
}

// unsafeText reports text that could drive a terminal (control characters,
// invalid UTF-8) or is longer than the sanitizer's cap allows.
func unsafeText(s string) bool {
	return !safetext.IsSafe(s) || len(s) > safetext.MaxTextLen+len("…")+200
}
