// Command codemetrics prints the size and shape of a Go module's code as a
// Markdown table, so that BENCHMARKS.md can set the code a newcomer must read
// before and after a change beside each other:
//
//	go run ./bench/codemetrics [-over 60] [-complex 15] [-top 5] [DIR]
//
// DIR (the current directory by default) is the module's root. What it
// counts:
//
//   - every .go file under DIR, walked the way the go tool walks a module:
//     directories named testdata or vendor, or starting with "." or "_", are
//     skipped, and so is any directory holding its own go.mod (another
//     module);
//   - lines are physical lines (blank lines and comments included); a file
//     whose name ends in _test.go is test code, every other file is not;
//   - a function is a func declaration (a function or a method; function
//     literals count inside the declaration that holds them), and its length
//     runs from the line of its func keyword to the line of its closing
//     brace, doc comment excluded;
//   - complexity is cyclomatic complexity as github.com/fzipp/gocyclo
//     computes it (1, plus one for each if, for, range, non-default case or
//     select case, && and ||); functions past -complex are counted on both
//     sides, and the table of the most complex lists non-test code only.
//
// The tool reads files and never builds them, so it can measure any commit
// checked out in a worktree, including one from before the tool existed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fzipp/gocyclo"
)

func main() {
	over := flag.Int("over", 60, "a function longer than this many lines is counted as long")
	top := flag.Int("top", 5, "how many of the most complex functions to list")
	complex := flag.Int("complex", 15, "a function of a cyclomatic complexity over this is counted as complex")
	flag.Parse()
	root := "."
	switch flag.NArg() {
	case 0:
	case 1:
		root = flag.Arg(0)
	default:
		fmt.Fprintln(os.Stderr, "usage: codemetrics [-over 60] [-complex 15] [-top 5] [DIR]")
		os.Exit(64)
	}
	m, err := measure(root, limits{lines: *over, complexity: *complex})
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemetrics:", err)
		os.Exit(1)
	}
	write(os.Stdout, m, limits{lines: *over, complexity: *complex}, *top)
}

// side holds the figures of one side of the module: its non-test or its
// test code.
type side struct {
	files, lines, funcs, long, complex int
}

// limits are the length and the complexity past which a function is
// counted as long or as complex.
type limits struct {
	lines, complexity int
}

// function is one func declaration of the non-test code, with what the
// table of the most complex functions shows of it.
type function struct {
	name       string // as gocyclo names it: pkg.Func or pkg.(*T).Method
	file       string // slash-separated, relative to the module's root
	line       int
	lines      int
	complexity int
}

// metrics is everything codemetrics prints.
type metrics struct {
	code, test side
	funcs      []function // non-test functions, most complex first
}

// measure walks the module rooted at root and counts its Go code, with the
// functions past each limit.
func measure(root string, over limits) (metrics, error) {
	var m metrics
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".go") {
			return nil
		}
		return m.add(root, path, over)
	})
	sort.SliceStable(m.funcs, func(i, j int) bool {
		a, b := m.funcs[i], m.funcs[j]
		if a.complexity != b.complexity {
			return a.complexity > b.complexity
		}
		if a.file != b.file {
			return a.file < b.file
		}
		return a.line < b.line
	})
	return m, err
}

// add counts one file into m.
func (m *metrics) add(root, path string, over limits) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return err
	}
	test := strings.HasSuffix(path, "_test.go")
	s := &m.code
	if test {
		s = &m.test
	}
	s.files++
	s.lines += physicalLines(src)

	// The length of each declaration, by the offset of its func keyword,
	// which is where gocyclo places its figure.
	length := make(map[int]int)
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		length[fset.Position(fn.Pos()).Offset] = n
		s.funcs++
		if n > over.lines {
			s.long++
		}
	}
	m.rate(gocyclo.AnalyzeASTFile(f, fset, nil), s, rel, test, length, over.complexity)
	return nil
}

// rate counts the functions of one file past the complexity limit into s
// and, for non-test code, keeps each for the table of the most complex;
// length holds each declaration's lines by the offset of its func keyword.
func (m *metrics) rate(stats gocyclo.Stats, s *side, rel string, test bool, length map[int]int, limit int) {
	for _, st := range stats {
		n, ok := length[st.Pos.Offset]
		if !ok {
			// A function literal bound to a package-level variable: gocyclo
			// rates it, but it is not a declaration this tool counts.
			continue
		}
		if st.Complexity > limit {
			s.complex++
		}
		if test {
			continue
		}
		m.funcs = append(m.funcs, function{
			name:       st.PkgName + "." + st.FuncName,
			file:       rel,
			line:       st.Pos.Line,
			lines:      n,
			complexity: st.Complexity,
		})
	}
}

// physicalLines is the number of lines of src, a last line without its
// newline included.
func physicalLines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// write prints m as two Markdown tables: the sizes, then the top most
// complex functions.
func write(w io.Writer, m metrics, over limits, top int) {
	fmt.Fprintln(w, "| Go code | non-test | test |")
	fmt.Fprintln(w, "|---|---:|---:|")
	fmt.Fprintf(w, "| files | %d | %d |\n", m.code.files, m.test.files)
	fmt.Fprintf(w, "| lines | %d | %d |\n", m.code.lines, m.test.lines)
	fmt.Fprintf(w, "| functions | %d | %d |\n", m.code.funcs, m.test.funcs)
	fmt.Fprintf(w, "| functions over %d lines | %d | %d |\n", over.lines, m.code.long, m.test.long)
	fmt.Fprintf(w, "| functions of complexity over %d | %d | %d |\n", over.complexity, m.code.complex, m.test.complex)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cyclomatic complexity | function (non-test) | lines | where |")
	fmt.Fprintln(w, "|---:|---|---:|---|")
	for i, f := range m.funcs {
		if i == top {
			break
		}
		fmt.Fprintf(w, "| %d | `%s` | %d | %s:%d |\n", f.complexity, f.name, f.lines, f.file, f.line)
	}
}
