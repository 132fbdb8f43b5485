// Command calltrace follows one page's bytes through the page parser and
// counts how often a reader of the code must change files to follow them,
// so that BENCHMARKS.md can set the parser's shape before and after a change
// beside each other:
//
//	go run ./bench/calltrace [DIR]
//
// DIR (the current directory by default) is the module's root. The tool
// copies the module to a temporary directory, puts a hook at the entry and
// the exit of every function declared in the non-test files of its page
// package, and runs a test there that reads two pages with one
// page.Ingester, as a scrape does: the first page of a vLLM replica of 8
// engines (testutil.VLLMPage), then a later page of the same replica (every
// sample's value one higher, its series and their order the same). For each
// page it counts, while Ingest runs:
//
//   - functions: the distinct functions entered, and the files they are in;
//   - runs: the file of the function running, taken after every entry and
//     exit, with repeats in a row folded into one: each run is a stretch a
//     reader follows inside one file;
//   - returns: the runs in a file already left before (runs minus files).
//
// Nothing of the module is changed; the copy is removed.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	root := "."
	switch len(os.Args) {
	case 1:
	case 2:
		root = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: calltrace [DIR]")
		os.Exit(64)
	}
	table, err := run(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calltrace:", err)
		os.Exit(1)
	}
	fmt.Print(table)
}

// run measures the module at root and returns the table.
func run(root string) (string, error) {
	work, err := os.MkdirTemp("", "calltrace")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := copyModule(root, work); err != nil {
		return "", err
	}
	if err := instrument(filepath.Join(work, "page")); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "page", "zz_calltrace_test.go"), []byte(driver), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestCallTrace$", "-v", "./page")
	cmd.Dir = work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the traced test failed: %v\n%s", err, out.String())
	}
	var table strings.Builder
	for _, line := range strings.Split(out.String(), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "calltrace: "); ok {
			table.WriteString(t + "\n")
		}
	}
	return table.String(), nil
}

// copyModule copies the module's files (not .git) from root to dst.
func copyModule(root, dst string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// instrument rewrites every non-test file of the package in dir so that each
// function declaration begins with callTraceEnter(file, name) and defers
// callTraceExit.
func instrument(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		if err := instrumentFile(path); err != nil {
			return err
		}
	}
	return nil
}

func instrumentFile(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return err
	}
	file := filepath.Base(path)
	var out bytes.Buffer
	last := 0
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		brace := fset.Position(fn.Body.Lbrace).Offset + 1
		out.Write(src[last:brace])
		fmt.Fprintf(&out, " callTraceEnter(%q, %q); defer callTraceExit();", file, funcName(fn))
		last = brace
	}
	out.Write(src[last:])
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// funcName is Name or Recv.Name.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// driver is the test dropped into the copy's page package: the hooks, and
// the two pages read while they count.
const driver = `package page

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

var (
	callTraceOn    bool
	callTraceStack []string // the functions running, "file name"
	callTraceRun   string   // the run under way: its file, then each function it enters
	callTraceRuns  = map[string]bool{}
	callTraceFiles = map[string]bool{}
	callTraceFuncs = map[string]bool{}
)

func callTraceEnter(file, name string) {
	if !callTraceOn {
		return
	}
	fn := file + " " + name
	callTraceFuncs[fn] = true
	callTraceStack = append(callTraceStack, fn)
	callTraceAt(file, "> "+name)
}

func callTraceExit() {
	if !callTraceOn || len(callTraceStack) == 0 {
		return
	}
	callTraceStack = callTraceStack[:len(callTraceStack)-1]
	if n := len(callTraceStack); n > 0 {
		file, name, _ := strings.Cut(callTraceStack[n-1], " ")
		callTraceAt(file, "< "+name)
	}
}

// callTraceAt notes a step into file: within the run under way if the run
// is in that file, else the end of that run and the start of another.
func callTraceAt(file, step string) {
	if strings.HasPrefix(callTraceRun, file+":") {
		if step[0] == '>' {
			callTraceRun += " " + step
		}
		return
	}
	callTraceEnd()
	callTraceRun = file + ": " + step
	callTraceFiles[file] = true
}

func callTraceEnd() {
	if callTraceRun != "" {
		callTraceRuns[callTraceRun] = true
	}
	callTraceRun = ""
}

// laterPage is page with every sample's value one higher.
func laterPage(t *testing.T, page []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(page, []byte("\n")) {
		i := bytes.LastIndexByte(bytes.TrimRight(line, "\n"), ' ')
		if len(line) == 0 || line[0] == '#' || i < 0 {
			out.Write(line)
			continue
		}
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(line[i+1:])), 64)
		if err != nil {
			t.Fatalf("a sample line without a value: %q", line)
		}
		out.Write(line[:i+1])
		out.WriteString(strconv.FormatFloat(v+1, 'g', -1, 64))
		out.WriteString("\n")
	}
	return out.Bytes()
}

func TestCallTrace(t *testing.T) {
	first := testutil.VLLMPage(t, 8)
	in := NewIngester()
	fmt.Println("calltrace: | page (vLLM, 8 engines) | functions | files | runs of calls in one file | returns to a file already left |")
	fmt.Println("calltrace: |---|---:|---:|---:|---:|")
	for _, p := range []struct {
		name string
		body []byte
	}{{"the first", first}, {"a later one", laterPage(t, first)}} {
		callTraceStack, callTraceRun = nil, ""
		callTraceRuns, callTraceFiles, callTraceFuncs = map[string]bool{}, map[string]bool{}, map[string]bool{}
		callTraceOn = true
		_, err := in.Ingest(p.body, "text/plain; version=0.0.4")
		callTraceOn = false
		callTraceEnd()
		if err != nil {
			t.Fatal(err)
		}
		runs, files := len(callTraceRuns), len(callTraceFiles)
		fmt.Printf("calltrace: | %s | %d | %d | %d | %d |\n", p.name, len(callTraceFuncs), files, runs, runs-files)
	}
}
`
