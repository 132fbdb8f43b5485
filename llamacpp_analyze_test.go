package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

// capturedPages are the pages of a real llama.cpp server's run
// (analysis/testdata/llamacpp), by their 1-based number.
func capturedPages(t *testing.T, version string) [][]byte {
	t.Helper()
	all := testutil.ReadGzip(t, filepath.Join("analysis", "testdata", "llamacpp", version, "metrics-pages.txt.gz"))
	var pages [][]byte
	for _, chunk := range bytes.Split(all, []byte("# scraped at "))[1:] {
		_, body, _ := bytes.Cut(chunk, []byte("\n"))
		pages = append(pages, body)
	}
	return pages
}

// vtop analyze on two pages of a real llama.cpp overload (2 slots busy,
// 6 requests deferred in each), 10 s or 70 s apart, says FULL: a queue of
// three batches on both readings proves it.
func TestAnalyzeLlamaCppOverload(t *testing.T) {
	for _, version := range []string{"b4747", "b8901"} {
		pages := capturedPages(t, version)
		for _, tt := range []struct {
			before, after int // page numbers, one a second
			seconds       string
		}{{100, 110, "10"}, {100, 170, "70"}} {
			dir := t.TempDir()
			before, after := filepath.Join(dir, "before.txt"), filepath.Join(dir, "after.txt")
			if err := os.WriteFile(before, pages[tt.before-1], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(after, pages[tt.after-1], 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, _ := testutil.RunVtop(t, "analyze", before, after, "--seconds", tt.seconds, "--json")
			var report struct {
				Replicas []struct {
					State   string   `json:"state"`
					Running float64  `json:"running"`
					Waiting float64  `json:"waiting"`
					Reasons []string `json:"reasons"`
				} `json:"replicas"`
			}
			if err := json.Unmarshal([]byte(stdout), &report); err != nil || len(report.Replicas) != 1 {
				t.Fatalf("%s pages %d and %d: %v\n%s%s", version, tt.before, tt.after, err, stdout, stderr)
			}
			r := report.Replicas[0]
			if r.Running != 2 || r.Waiting != 6 {
				t.Fatalf("%s pages %d and %d: running %g waiting %g, not the overload's 2 and 6", version, tt.before, tt.after, r.Running, r.Waiting)
			}
			if r.State != "full" {
				t.Errorf("%s pages %d and %d, %ss apart: %s, want full: %v", version, tt.before, tt.after, tt.seconds, r.State, r.Reasons)
			}
		}
	}
}
