package testutil

import (
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// ReadGzip reads a gzip-compressed file of testdata whole, failing the
// test when it cannot.
func ReadGzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
