package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

func TestInstrumentFile(t *testing.T) {
	src := `package p

type T[K any] struct{}

func Plain() int { return 1 }

func (t *T[K]) Generic() {}

func (T[K]) Value() {}

func noBody()
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := instrumentFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`callTraceEnter("p.go", "Plain")`,
		`callTraceEnter("p.go", "T.Generic")`,
		`callTraceEnter("p.go", "T.Value")`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the instrumented file lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "defer callTraceExit()"); n != 3 {
		t.Errorf("%d exits deferred, want 3 (none in a function without a body):\n%s", n, got)
	}
}

// TestThisModule traces the module's own parser: a row a page, each with
// functions entered, and at least one run per file.
func TestThisModule(t *testing.T) {
	testutil.SkipShort(t, "builds and runs a copy of the module")
	table, err := run(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 {
		t.Fatalf("the table has %d lines, want a header, a rule and two pages:\n%s", len(lines), table)
	}
	for _, row := range lines[2:] {
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		if len(cells) != 5 {
			t.Fatalf("row %q: %d cells, want 5", row, len(cells))
		}
		var n [4]int
		for i, c := range cells[1:] {
			if n[i], err = strconv.Atoi(c); err != nil {
				t.Fatalf("row %q: %v", row, err)
			}
		}
		funcs, files, runs, returns := n[0], n[1], n[2], n[3]
		if funcs < files || files < 1 || runs < files || returns != runs-files {
			t.Errorf("row %q: functions %d, files %d, runs %d, returns %d do not add up", row, funcs, files, runs, returns)
		}
	}
}
