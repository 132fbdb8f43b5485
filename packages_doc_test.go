package main

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's package map sits between these markers: one table row per
// package of the product, then one line naming the packages of tests and
// benchmarks.
const (
	packagesBegin = "<!-- packages:begin -->"
	packagesEnd   = "<!-- packages:end -->"
	testOnlyLead  = "Tests and benchmarks only:"
)

// testOnlyRoots are the directories whose packages serve tests and
// benchmarks: the README names them on the testOnlyLead line, not in the
// table.
var testOnlyRoots = []string{"bench", "e2e", "testutil"}

// modulePackage is one package of the module as the go tool builds it.
type modulePackage struct {
	dir     string   // relative to the module's root, "." for the root
	imports []string // the module's own packages its non-test files import, as dirs
}

// modulePath is the module's path, from go.mod's module line.
func modulePath(t *testing.T) string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// modulePackages walks the module as the go tool does (skipping testdata,
// vendor, directories starting with "." or "_" and nested modules) and
// reads each package's imports with go/build: the build constraints of
// this platform, no go command, no network.
func modulePackages(t *testing.T) []modulePackage {
	module := modulePath(t)
	var pkgs []modulePackage
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); path != "." && err == nil {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		pkg := modulePackage{dir: filepath.ToSlash(path)}
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				pkg.imports = append(pkg.imports, rest)
			} else if imp == module {
				pkg.imports = append(pkg.imports, ".")
			}
		}
		pkgs = append(pkgs, pkg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// testOnly reports whether the package in dir serves tests and benchmarks.
func testOnly(dir string) bool {
	for _, root := range testOnlyRoots {
		if dir == root || strings.HasPrefix(dir, root+"/") {
			return true
		}
	}
	return false
}

var backquoted = regexp.MustCompile("`([^`]*)`")

// codeSpans are the backquoted words of s.
func codeSpans(s string) []string {
	var out []string
	for _, m := range backquoted.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// codeList writes names as the package map does (its third column): each
// backquoted, "—" for none.
func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}

// packageMap is what the README's map says: each table row's imports by
// package, in the order written, and the packages of the test-only line.
type packageMap struct {
	rows     map[string][]string
	order    []string
	testOnly []string
}

// readPackageMap parses the README's package map.
func readPackageMap(t *testing.T, readme string) packageMap {
	i, j := strings.Index(readme, packagesBegin), strings.Index(readme, packagesEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no package map between %q and %q", packagesBegin, packagesEnd)
	}
	m := packageMap{rows: map[string][]string{}}
	for line := range strings.Lines(readme[i+len(packagesBegin) : j]) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, testOnlyLead); ok {
			m.testOnly = append(m.testOnly, codeSpans(rest)...)
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue // the header, its rule and the prose around the table
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Errorf("README.md: the package map's row %q has %d cells, want 3 (package | role | imports)", line, len(cells))
			continue
		}
		pkg := codeSpans(cells[0])
		if len(pkg) != 1 {
			t.Errorf("README.md: the package map's row %q names no package in its first cell", line)
			continue
		}
		if _, dup := m.rows[pkg[0]]; dup {
			t.Errorf("README.md: the package map has two rows for %s", pkg[0])
		}
		m.rows[pkg[0]] = codeSpans(cells[2])
		m.order = append(m.order, pkg[0])
	}
	return m
}

// TestPackageMap holds the README's package map to the import graph: a
// row for every package of the product (none for a package gone), each
// with the module's packages its non-test files import, exactly; and the
// packages of tests and benchmarks on the line after the table.
func TestPackageMap(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := readPackageMap(t, string(readme))
	exists := map[string]bool{}
	var wantTestOnly []string
	for _, p := range modulePackages(t) {
		exists[p.dir] = true
		if testOnly(p.dir) {
			wantTestOnly = append(wantTestOnly, p.dir)
			continue
		}
		said, listed := doc.rows[p.dir]
		switch {
		case !listed:
			t.Errorf("README.md: package %s has no row in the package map: add\n| `%s` | <its role, in a few words> | %s |", p.dir, p.dir, codeList(p.imports))
		case !slices.Equal(said, p.imports):
			t.Errorf("README.md: package %s imports %s; its row says %s: write %s", p.dir, codeList(p.imports), codeList(said), codeList(p.imports))
		}
	}
	for _, dir := range doc.order {
		switch {
		case testOnly(dir):
			t.Errorf("README.md: %s serves tests and benchmarks: name it on the line %q, not in the table", dir, testOnlyLead)
		case !exists[dir]:
			t.Errorf("README.md: the package map has a row for %s, which is no package of the module: remove it", dir)
		}
	}
	slices.Sort(wantTestOnly)
	if got := slices.Sorted(slices.Values(doc.testOnly)); !slices.Equal(got, wantTestOnly) {
		t.Errorf("README.md: the line %q names %s; the packages of tests and benchmarks are %s", testOnlyLead, codeList(got), codeList(wantTestOnly))
	}
}
